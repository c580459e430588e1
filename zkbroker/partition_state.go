package zkbroker

import (
	"time"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
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

// ZooKeeperSilence is how long ago this broker last heard from ZooKeeper,
// while its session is not usable (zkstore.Session.LastHeard); zero while
// it is, and when the client cannot tell.
func (n *Node) ZooKeeperSilence(now time.Time) time.Duration {
	zk, err := n.client()
	if err != nil {
		return 0
	}
	s := zk.Session()
	if s.State == zkstore.SessionConnected || s.LastHeard.IsZero() {
		return 0
	}
	return now.Sub(s.LastHeard)
}
