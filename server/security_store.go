package server

import (
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkbroker"
)

// securityStore is where SCRAM credentials and ACLs live: ZooKeeper in a
// cluster, the local metadata store standalone, both behind
// zkbroker.Node and in Kafka's own znode layout, so Kafka's tools and
// brokers sharing the ZooKeeper read and write the same data.
type securityStore interface {
	// UserConfig is /config/users/<user>: SCRAM credentials by mechanism
	// name, in Kafka's text form.
	UserConfig(user string) (map[string]string, error)
	Users() ([]string, error)
	AlterUserConfig(user string, change func(map[string]string) error) error
	// QuotaEntities lists the stored client quotas.
	QuotaEntities() ([]kafkazk.QuotaEntity, error)
	// EntityConfig and AlterEntityConfig read and change a quota entity's
	// znode, /config/<root>/<sanitized name>, keeping its other keys.
	EntityConfig(root, name string) (map[string]string, error)
	AlterEntityConfig(root, name string, change func(map[string]string) error) error
}

var _ securityStore = (*zkbroker.Node)(nil)
