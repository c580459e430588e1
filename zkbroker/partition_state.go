package zkbroker

import (
	"github.com/kbroker/kbroker/kafkazk"
)

// PartitionState reads a partition's state znode and its version (the
// partition epoch). A leader whose followers went quiet reads it to learn
// whether the controller elected another leader while it could not reach
// this broker (server/cluster_deposed_leader.go).
func (n *Node) PartitionState(topic string, partition int32) (kafkazk.PartitionStateZNode, int32, error) {
	zk, err := n.client()
	if err != nil {
		return kafkazk.PartitionStateZNode{}, 0, err
	}
	data, st, err := zk.Get(kafkazk.PartitionStatePath(topic, partition))
	if err != nil {
		return kafkazk.PartitionStateZNode{}, 0, err
	}
	s, err := kafkazk.DecodePartitionStateZNode(data)
	return s, st.Version, err
}
