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

// ZooKeeperSilence reports whether this broker's ZooKeeper session is
// usable and, when it is not, how long ago the broker last heard from
// ZooKeeper (zkstore.Session.LastHeard; zero when the client cannot tell).
func (n *Node) ZooKeeperSilence(now time.Time) (time.Duration, bool) {
	zk, err := n.client()
	if err != nil {
		return 0, false
	}
	s := zk.Session()
	if s.State == zkstore.SessionConnected {
		return 0, true
	}
	if s.LastHeard.IsZero() {
		return 0, false
	}
	return now.Sub(s.LastHeard), false
}
