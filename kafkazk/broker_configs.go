package kafkazk

import (
	"errors"

	"github.com/kbroker/kbroker/zkstore"
)

// Dynamic broker configs (KIP-226) live in /config/brokers/<id> for one
// broker and /config/brokers/<default> for the cluster-wide defaults, as
// Kafka's AdminZkClient.changeBrokerConfig writes them, with a
// /config/changes notification naming "brokers/<id>" or
// "brokers/<default>".

// BrokerConfigEntity is the entity name of broker id's dynamic configs, or
// of the cluster defaults when id is "".
func BrokerConfigEntity(id string) string {
	if id == "" {
		return quotaDefaultName
	}
	return id
}

// IsDefaultBrokerEntity reports whether a broker entity name is the
// cluster-wide default.
func IsDefaultBrokerEntity(name string) bool { return name == quotaDefaultName }

// BrokerConfigs reads the dynamic configs of broker id ("" for the
// cluster defaults); none when the znode is missing.
func BrokerConfigs(zk zkstore.Client, id string) (map[string]string, error) {
	data, _, err := zk.Get(ConfigEntityPath(configTypeBroker, BrokerConfigEntity(id)))
	if errors.Is(err, zkstore.ErrNoNode) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return DecodeConfigZNode(data)
}

// SetBrokerConfigs replaces the dynamic configs of broker id ("" for the
// cluster defaults) and announces the change to every broker.
func SetBrokerConfigs(zk zkstore.Client, id string, configs map[string]string) error {
	entity := BrokerConfigEntity(id)
	if err := SetEntityConfig(zk, configTypeBroker, entity, configs); err != nil {
		return err
	}
	return announceConfigChange(zk, configTypeBroker+"/"+entity)
}

// announceConfigChange writes the /config/changes notification Kafka's
// ZkNodeChangeNotificationListener handles on every broker.
func announceConfigChange(zk zkstore.Client, entityPath string) error {
	if err := CreateRecursive(zk, ConfigChangesPath); err != nil {
		return err
	}
	_, err := zk.Create(ConfigChangesPath+"/"+ConfigChangePrefix, EncodeConfigChange(entityPath), zkstore.ModePersistentSequential)
	return err
}

// BrokerConfigChange reads a notification's entity path: the broker
// entity it names ("<default>" or an id), ok false for other entity types.
func BrokerConfigChange(entityPath string) (entity string, ok bool) {
	const prefix = configTypeBroker + "/"
	if len(entityPath) > len(prefix) && entityPath[:len(prefix)] == prefix {
		return entityPath[len(prefix):], true
	}
	return "", false
}
