package zkbroker

import (
	"context"
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// Admin operations (Kafka's AdminZkClient as ZkAdminManager calls it): they
// write ZooKeeper directly; the controller reacts to the znodes through its
// watches. Topic creation, deletion and partition creation are answered
// only by the controller (NOT_CONTROLLER elsewhere), as in Kafka.

// CreateTopic creates a topic: partitions and replicationFactor (assigned
// as Kafka does, rack-aware when every broker has a rack) or an explicit
// assignment (then both must be -1). /config/topics/<t> is written first,
// then /brokers/topics/<t> with a fresh topic id (none below IBP 2.8-IV0);
// the controller creates the partitions when it sees the topic. Returns
// the topic id.
func (n *Node) CreateTopic(name string, partitions int32, replicationFactor int16, assignment map[int32][]int32, configs map[string]string, validateOnly bool) ([16]byte, error) {
	zk, err := n.controllerClient()
	if err != nil {
		return [16]byte{}, err
	}
	return kafkazk.CreateTopic(zk, name, partitions, replicationFactor, assignment, configs, validateOnly, kafkazk.RandIntn, n.newTopicID)
}

// newTopicID draws a new topic's id; below IBP 2.8-IV0 topics have none,
// as Kafka's brokers and controller at that IBP write none.
func (n *Node) newTopicID() [16]byte {
	if !n.ibp().TopicIDs() {
		return [16]byte{}
	}
	return kafkazk.NewTopicID()
}

// controllerClient is the ZooKeeper client for the admin writes that, as
// in Kafka, only the active controller accepts.
func (n *Node) controllerClient() (zkstore.Client, error) {
	c, err := n.controller()
	if err != nil {
		return nil, err
	}
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	if fenced := c.FencedBrokers(); len(fenced) > 0 {
		return withoutBrokers{zk, fenced}, nil
	}
	return zk, nil
}

// withoutBrokers hides brokers from the list of registered ones. Kafka's
// admin operations assign replicas among the brokers its metadata cache
// holds alive, which the controller's UpdateMetadata keeps; here they read
// /brokers/ids, where a broker the controller handles as dead
// (controller/ctl_broker_probe.go) is still registered until its session
// expires. Hiding it gives them the controller's view.
type withoutBrokers struct {
	zkstore.Client
	hidden []int32
}

func (w withoutBrokers) Children(path string) ([]string, zkstore.Stat, error) {
	names, st, err := w.Client.Children(path)
	if err != nil || path != kafkazk.BrokerIDsPath {
		return names, st, err
	}
	return slices.DeleteFunc(names, func(name string) bool {
		id, err := kafkazk.ParseBrokerID(name)
		return err == nil && slices.Contains(w.hidden, id)
	}), st, nil
}

// DeleteTopic marks the topic for deletion (/admin/delete_topics/<t>); the
// controller deletes it. Marking a topic twice is not an error.
func (n *Node) DeleteTopic(name string) error {
	zk, err := n.controllerClient()
	if err != nil {
		return err
	}
	return kafkazk.MarkTopicForDeletion(zk, name)
}

// CreatePartitions raises the topic's partition count to count. assignment
// (optional) lists the replicas of each new partition, in order.
func (n *Node) CreatePartitions(name string, count int32, assignment [][]int32, validateOnly bool) error {
	zk, err := n.controllerClient()
	if err != nil {
		return err
	}
	return kafkazk.CreatePartitions(zk, name, count, assignment, validateOnly, kafkazk.RandIntn)
}

// SetTopicConfig replaces the topic's overrides in /config/topics/<t> and
// announces the change in /config/changes (every broker re-reads it). Any
// broker may do it. Turning unclean.leader.election.enable on makes the
// controller, which watches the notifications, retry the topic's offline
// partitions (Election.scala's unclean offline election).
func (n *Node) SetTopicConfig(_ context.Context, name string, configs map[string]string) error {
	zk, err := n.client()
	if err != nil {
		return err
	}
	return kafkazk.SetTopicConfig(zk, name, configs)
}
