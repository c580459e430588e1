package zkbroker

import (
	"context"

	"github.com/kbroker/kbroker/kafkazk"
)

// BrokerConfigs reads the dynamic configs of broker id, or the cluster
// defaults for "" (/config/brokers/<id>, /config/brokers/<default>).
func (n *Node) BrokerConfigs(id string) (map[string]string, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	return kafkazk.BrokerConfigs(zk, id)
}

// SetBrokerConfigs replaces the dynamic configs of broker id ("" for the
// cluster defaults) and announces the change. Any broker may write them,
// as ZooKeeper-mode Kafka's ZkAdminManager does.
func (n *Node) SetBrokerConfigs(id string, configs map[string]string) error {
	zk, err := n.client()
	if err != nil {
		return err
	}
	return kafkazk.SetBrokerConfigs(zk, id, configs)
}

// WatchBrokerConfigChanges calls fn with the broker entity ("<default>" or
// a broker id) of every broker config change notification, like Kafka's
// BrokerConfigHandler, on the same terms as WatchTopicConfigChanges.
func (n *Node) WatchBrokerConfigChanges(ctx context.Context, fn func(entity string)) {
	n.watchNotifications(ctx, kafkazk.ConfigChangesPath, kafkazk.ConfigChangePrefix, func(name string, data []byte) {
		path, err := kafkazk.DecodeConfigChange(data)
		if err != nil {
			return // WatchTopicConfigChanges logs it
		}
		if entity, ok := kafkazk.BrokerConfigChange(path); ok {
			fn(entity)
		}
	})
}
