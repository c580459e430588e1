package zkbroker

import (
	"github.com/kbroker/kbroker/kafkazk"
)

// UserConfig reads a user's config (/config/users/<user>): its SCRAM
// credentials by mechanism, in Kafka's text form, and any quotas.
// Authentication reads it on every SASL/SCRAM exchange, so a credential
// changed by any broker or by Kafka's own tools is in force at once; the
// /config/changes notification the writer leaves is for Kafka brokers
// sharing the ZooKeeper, which cache credentials.
func (n *Node) UserConfig(user string) (map[string]string, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	c, _, err := kafkazk.UserConfig(zk, user)
	return c, err
}

// Users lists the users with a config znode.
func (n *Node) Users() ([]string, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	return kafkazk.Users(zk)
}

// AlterUserConfig changes a user's config in place (see
// kafkazk.AlterUserConfig). Any broker may do it, as any Kafka broker's
// AdminZkClient may.
func (n *Node) AlterUserConfig(user string, change func(map[string]string) error) error {
	zk, err := n.client()
	if err != nil {
		return err
	}
	return kafkazk.AlterUserConfig(zk, user, change)
}

// QuotaEntities reads the client quota configs stored for users, client
// ids and IPs (DescribeClientQuotas).
func (n *Node) QuotaEntities() ([]kafkazk.QuotaEntity, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	return kafkazk.QuotaEntities(zk)
}

// EntityConfig reads a config entity's znode below /config (see
// kafkazk.EntityConfig).
func (n *Node) EntityConfig(root, name string) (map[string]string, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	c, _, err := kafkazk.EntityConfig(zk, root, name)
	return c, err
}

// AlterEntityConfig changes a user, client id, user/client-id or IP
// entity's config in place and announces it (see
// kafkazk.AlterEntityConfig). Any broker may do it, as any Kafka broker's
// AdminZkClient may.
func (n *Node) AlterEntityConfig(root, name string, change func(map[string]string) error) error {
	zk, err := n.client()
	if err != nil {
		return err
	}
	return kafkazk.AlterEntityConfig(zk, root, name, change)
}
