package controller

import (
	"errors"
	"strings"
)

// The controller broker's reaction to topic config changes (Kafka's
// TopicConfigHandler calling enableTopicUncleanLeaderElection): when a
// change notification names a topic whose effective
// unclean.leader.election.enable is now true, its offline partitions are
// elected at once. Whichever broker wrote the change, the controller sees
// the notification. Notifications present at failover are history.

// processConfigChanges handles a child change of /config/changes.
func (c *kafkaController) processConfigChanges() error {
	names, err := c.childrenW(configChangesPath, ctlEvent{"ConfigChange", c.processConfigChanges})
	if err != nil {
		return err
	}
	for _, n := range names {
		seq, err := sequenceNumber(n, configChangePrefix)
		if err != nil || seq <= c.lastConfigChange {
			continue
		}
		c.lastConfigChange = seq
		data, _, err := c.zk.Get(configChangesPath + "/" + n)
		if errors.Is(err, errNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		entity, err := decodeConfigChange(data)
		if err != nil {
			c.log.Warn("ignoring unreadable config change", "node", n, "err", err)
			continue
		}
		topic, ok := strings.CutPrefix(entity, configTypeTopic+"/")
		if !ok {
			continue
		}
		if _, known := c.ctx.assignments[topic]; !known {
			continue
		}
		enabled, err := c.uncleanLeaderElectionEnabled(topic)
		if err != nil {
			return err
		}
		if enabled {
			if err := c.processTopicUncleanLeaderElectionEnable(topic); err != nil {
				return err
			}
		}
	}
	return nil
}

// watchConfigChanges arms the watch and skips the notifications that exist
// now.
func (c *kafkaController) watchConfigChanges() error {
	names, err := c.childrenW(configChangesPath, ctlEvent{"ConfigChange", c.processConfigChanges})
	if err != nil {
		return err
	}
	c.lastConfigChange = -1
	for _, n := range names {
		if seq, err := sequenceNumber(n, configChangePrefix); err == nil && seq > c.lastConfigChange {
			c.lastConfigChange = seq
		}
	}
	return nil
}

// processPreferredReplicaElection handles /admin/preferred_replica_election
// (legacy tools): a preferred election for the listed partitions, then the
// node is deleted.
func (c *kafkaController) processPreferredReplicaElection() error {
	exists, _, ch, err := c.zk.ExistsW(preferredReplicaElectionPath)
	if err != nil {
		return err
	}
	c.watch(ch, ctlEvent{"PreferredReplicaElection", c.processPreferredReplicaElection})
	if !exists {
		return nil
	}
	data, _, err := c.zk.Get(preferredReplicaElectionPath)
	if errors.Is(err, errNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	tps, derr := decodePartitionList(data)
	if derr != nil {
		c.log.Warn("ignoring unreadable preferred replica election", "err", derr)
	} else {
		ps := make([]topicPartition, len(tps))
		for i, tp := range tps {
			ps[i] = topicPartition(tp)
		}
		if _, err := c.electLeadersAPI(ElectPreferred, ps); err != nil {
			return err
		}
	}
	_, err = controllerWrite(c.zk, c.epochZkVersion, &opDelete{Path: preferredReplicaElectionPath, Version: -1})
	if errors.Is(err, errNoNode) {
		return nil
	}
	return err
}

// processTopicUncleanLeaderElectionEnable elects leaders for the topic's
// offline partitions now that unclean election is allowed.
func (c *kafkaController) processTopicUncleanLeaderElectionEnable(topic string) error {
	var offline []topicPartition
	for _, tp := range c.ctx.partitionsOfTopic(topic) {
		if c.ctx.states[tp] == partitionOffline && !c.ctx.topicsToDelete[topic] {
			offline = append(offline, tp)
		}
	}
	b := newRequestBatch(c.ctx)
	_, err := c.electLeaders(b, offline, offlineElection, false)
	c.sendBatch(b)
	return err
}
