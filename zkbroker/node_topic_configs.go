package zkbroker

import (
	"errors"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// TopicConfigs reads a topic's overrides from /config/topics/<name>, as a
// broker does when it creates the topic's logs. A topic without the znode
// has no overrides.
func (n *Node) TopicConfigs(name string) (map[string]string, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	data, _, err := zk.Get(kafkazk.ConfigEntityPath("topics", name))
	if errors.Is(err, zkstore.ErrNoNode) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return kafkazk.DecodeConfigZNode(data)
}

// AutoCreateTopic writes a new topic's znodes from any broker, not only the
// controller: Kafka's ZooKeeper-mode brokers auto-create topics (Metadata,
// FindCoordinator for __consumer_offsets) through their own AdminZkClient,
// and the controller picks the topic up from its watch.
func (n *Node) AutoCreateTopic(name string, partitions int32, replicationFactor int16, configs map[string]string) ([16]byte, error) {
	zk, err := n.client()
	if err != nil {
		return [16]byte{}, err
	}
	return kafkazk.CreateTopic(zk, name, partitions, replicationFactor, nil, configs, false, kafkazk.RandIntn, n.newTopicID)
}
