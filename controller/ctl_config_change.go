package controller

import (
	"errors"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// The controller broker's reaction to topic config changes (Kafka's
// TopicConfigHandler calling enableTopicUncleanLeaderElection): when a
// change notification names a topic whose effective
// unclean.leader.election.enable is now true, its offline partitions are
// elected at once. Whichever broker wrote the change, the controller sees
// the notification. Notifications present at failover are history.

// processConfigChanges handles a child change of /config/changes: each new
// notification is read, and a known topic's unclean setting (read afresh)
// decides whether its offline partitions are elected.
func (c *Controller) processConfigChanges() error {
	names, err := c.childrenW(kafkazk.ConfigChangesPath, ctlEvent{"ConfigChange", c.processConfigChanges})
	if err != nil {
		return err
	}
	for _, n := range newConfigChanges(c.lastConfigChange, names) {
		c.lastConfigChange = n.seq
		data, _, err := c.zk.Get(kafkazk.ConfigChangesPath + "/" + n.name)
		if errors.Is(err, zkstore.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		entity, err := kafkazk.DecodeConfigChange(data)
		if err != nil {
			c.log.Warn("ignoring unreadable config change", "node", n.name, "err", err)
			continue
		}
		if brokerConfigChangeOf(entity, c.cfg.BrokerID) {
			// DynamicLogConfig.reconfigure: a default turned on elects
			// the offline partitions of every topic it now covers.
			if err := c.processDefaultUncleanLeaderElectionEnable(); err != nil {
				return err
			}
			continue
		}
		topic, ok := configChangeTopic(c.ctx, entity)
		if !ok {
			continue
		}
		if err := c.electIfUncleanEnabled(topic); err != nil {
			return err
		}
	}
	return nil
}

// electIfUncleanEnabled elects the topic's offline partitions when its
// effective unclean.leader.election.enable, read afresh, is true.
func (c *Controller) electIfUncleanEnabled(topic string) error {
	enabled, err := c.uncleanLeaderElectionEnabled(topic)
	if err != nil || !enabled {
		return err
	}
	return c.processTopicUncleanLeaderElectionEnable(topic)
}

// watchConfigChanges arms the watch and skips the notifications that exist
// now.
func (c *Controller) watchConfigChanges() error {
	names, err := c.childrenW(kafkazk.ConfigChangesPath, ctlEvent{"ConfigChange", c.processConfigChanges})
	if err != nil {
		return err
	}
	c.lastConfigChange = lastConfigChangeOf(names)
	return nil
}

// processPreferredReplicaElection handles /admin/preferred_replica_election
// (legacy tools): a preferred election for the listed partitions, then the
// node is deleted.
func (c *Controller) processPreferredReplicaElection() error {
	exists, _, ch, err := c.zk.ExistsW(kafkazk.PreferredReplicaElectionPath)
	if err != nil {
		return err
	}
	c.watch(ch, ctlEvent{"PreferredReplicaElection", c.processPreferredReplicaElection})
	if !exists {
		return nil
	}
	data, _, err := c.zk.Get(kafkazk.PreferredReplicaElectionPath)
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	tps, derr := kafkazk.DecodePartitionList(data)
	if derr != nil {
		c.log.Warn("ignoring unreadable preferred replica election", "err", derr)
	} else {
		ps := make([]kafkazk.TopicPartition, len(tps))
		for i, tp := range tps {
			ps[i] = kafkazk.TopicPartition(tp)
		}
		if _, err := c.electLeadersAPI(ElectPreferred, ps); err != nil {
			return err
		}
	}
	_, err = kafkazk.ControllerWrite(c.zk, c.epochZkVersion, &zkstore.OpDelete{Path: kafkazk.PreferredReplicaElectionPath, Version: -1})
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil
	}
	return err
}

// processTopicUncleanLeaderElectionEnable elects leaders for the topic's
// offline partitions now that unclean election is allowed.
func (c *Controller) processTopicUncleanLeaderElectionEnable(topic string) error {
	b := newRequestBatch(c.ctx)
	_, err := c.electLeaders(b, uncleanEnabledPartitions(c.ctx, topic), offlineElection, false)
	c.sendBatch(b)
	return err
}

// processDefaultUncleanLeaderElectionEnable elects the offline partitions
// of every topic whose effective unclean.leader.election.enable is true,
// after a change of this broker's dynamic configs or the cluster's
// (KafkaController.enableDefaultUncleanLeaderElection).
func (c *Controller) processDefaultUncleanLeaderElectionEnable() error {
	def, err := c.uncleanLeaderElectionDefault()
	if err != nil || !def {
		return err
	}
	for _, topic := range sortedTopics(c.ctx) {
		if len(uncleanEnabledPartitions(c.ctx, topic)) == 0 {
			continue
		}
		if err := c.electIfUncleanEnabled(topic); err != nil {
			return err
		}
	}
	return nil
}
