package controller

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

const (
	defaultRetryBackoff            = 100 * time.Millisecond
	defaultControllerSocketTimeout = 30 * time.Second // controller.socket.timeout.ms
)

// onControllerFailover is becoming controller
// (KafkaController.onControllerFailover), in Kafka's order: watches, stale
// notifications deleted, context read from ZooKeeper, UpdateMetadata to every
// live broker, replicas online (LeaderAndIsr), leaders for New/Offline
// partitions, then pending reassignments and deletions. It reads the
// context from ZooKeeper and executes decideFailover.
func (c *Controller) onControllerFailover() error {
	c.ctx = newControllerContext()
	ids, err := c.childrenW(kafkazk.BrokerIDsPath, ctlEvent{"BrokerChange", c.processBrokerChange})
	if err != nil {
		return err
	}
	topics, err := c.childrenW(kafkazk.BrokerTopicsPath, ctlEvent{"TopicChange", c.processTopicChange})
	if err != nil {
		return err
	}
	notifications, err := c.childrenW(kafkazk.IsrChangeNotificationPath, ctlEvent{"IsrChangeNotification", c.processIsrChangeNotification})
	if err != nil {
		return err
	}
	if err := c.deleteChildren(kafkazk.IsrChangeNotificationPath, notifications); err != nil {
		return err
	}
	events, err := c.childrenW(kafkazk.LogDirEventNotificationPath, ctlEvent{"LogDirEventNotification", c.processLogDirEventNotification})
	if err != nil {
		return err
	}
	if err := c.deleteChildren(kafkazk.LogDirEventNotificationPath, events); err != nil {
		return err
	}

	brokers, err := c.readBrokers(ids)
	if err != nil {
		return err
	}
	c.ctx.brokers = brokers
	c.fenceKnownDead()
	for _, t := range topics {
		if err := c.loadTopic(t); err != nil {
			return err
		}
	}
	for _, tp := range c.ctx.allPartitions() {
		st, ok, err := c.readLeadership(tp)
		if err != nil {
			return err
		}
		if ok {
			c.ctx.leadership[tp] = st
		}
	}
	for _, id := range c.ctx.liveBrokerIDs() {
		c.chans.addBroker(c.ctx.brokers[id], c.cfg.InterBrokerListener)
	}
	c.log.Info("controller failover", "broker", c.cfg.BrokerID, "epoch", c.epoch,
		"liveBrokers", c.ctx.liveBrokerIDs(), "topics", len(c.ctx.assignments))

	d := decideFailover(c.ctx)
	c.sendBatch(d.metadata)
	b := d.replicas
	for _, dr := range d.dead {
		if err := c.replicasOffline(b, dr.broker, dr.tps); err != nil {
			return err
		}
	}
	for tp, state := range cachedPartitionStates(c.ctx) {
		c.ctx.states[tp] = state
	}
	deletions, err := c.childrenW(kafkazk.DeleteTopicsPath, ctlEvent{"TopicDeletion", c.processTopicDeletion})
	if err != nil {
		return err
	}
	// Unknown topics' markers are removed below, by
	// processTopicDeletionMarkers.
	toDelete, _ := decideDeletionMarkers(c.ctx, deletions)
	for _, t := range toDelete {
		c.ctx.topicsToDelete[t] = true
	}
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	c.sendBatch(b)
	if err := c.watchConfigChanges(); err != nil {
		return err
	}
	if err := c.resumeReassignments(); err != nil {
		return err
	}
	if err := c.processTopicDeletionMarkers(deletions); err != nil {
		return err
	}
	return c.processPreferredReplicaElection()
}

// childrenW lists path's children and arms ev for their next change.
func (c *Controller) childrenW(path string, ev ctlEvent) ([]string, error) {
	kids, _, ch, err := c.zk.ChildrenW(path)
	if errors.Is(err, zkstore.ErrNoNode) {
		// Every broker creates these paths at start-up; recreate and
		// retry once if someone removed one.
		if err := kafkazk.CreateRecursive(c.zk, path); err != nil {
			return nil, err
		}
		kids, _, ch, err = c.zk.ChildrenW(path)
	}
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", path, err)
	}
	c.watch(ch, ev)
	slices.Sort(kids)
	return kids, nil
}

// deleteChildren deletes the named children of parent in one fenced multi;
// children already gone are skipped.
func (c *Controller) deleteChildren(parent string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	ops := make([]zkstore.Op, 0, len(names))
	for _, n := range names {
		ops = append(ops, &zkstore.OpDelete{Path: parent + "/" + n, Version: -1})
	}
	_, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, ops...)
	if errors.Is(err, zkstore.ErrNoNode) {
		// Someone removed one concurrently: delete one by one.
		for _, op := range ops {
			if _, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, op); err != nil && !errors.Is(err, zkstore.ErrNoNode) {
				return err
			}
		}
		return nil
	}
	return err
}

// readBroker reads /brokers/ids/<id>; ok is false when it vanished.
// readBrokers reads the registrations named by /brokers/ids children;
// names that are not broker ids and brokers gone or unreadable are left out.
func (c *Controller) readBrokers(names []string) (map[int32]liveBroker, error) {
	out := map[int32]liveBroker{}
	for _, n := range names {
		id, err := kafkazk.ParseBrokerID(n)
		if err != nil {
			continue
		}
		b, ok, err := c.readBroker(id)
		if err != nil {
			return nil, err
		}
		if ok {
			out[id] = b
		}
	}
	return out, nil
}

func (c *Controller) readBroker(id int32) (liveBroker, bool, error) {
	data, st, err := c.zk.Get(kafkazk.BrokerIDPath(id))
	if errors.Is(err, zkstore.ErrNoNode) {
		return liveBroker{}, false, nil
	}
	if err != nil {
		return liveBroker{}, false, err
	}
	reg, err := kafkazk.DecodeBrokerZNode(data)
	if err != nil {
		c.log.Error("ignoring unreadable broker registration", "broker", id, "err", err)
		return liveBroker{}, false, nil
	}
	return liveBroker{ID: id, Epoch: st.Czxid, Reg: reg}, true, nil
}

// loadTopic reads /brokers/topics/<t> into the context, arms its data
// watch (partition modifications) and gives it a topic id if it has none,
// as a 3.x controller does.
func (c *Controller) loadTopic(topic string) error {
	data, st, ch, err := c.zk.GetW(kafkazk.TopicPath(topic))
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	c.watch(ch, ctlEvent{"PartitionModifications", func() error { return c.processPartitionModifications(topic) }})
	z, err := kafkazk.DecodeTopicZNode(data)
	if err != nil {
		c.log.Error("ignoring unreadable topic znode", "topic", topic, "err", err)
		return nil
	}
	var newID [16]byte
	if z.TopicID == ([16]byte{}) {
		newID = c.cfg.NewTopicID()
	}
	d := decideTopicLoad(topic, z, newID)
	if d.rewrite {
		if _, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, &zkstore.OpSet{Path: kafkazk.TopicPath(topic), Data: d.znode.Encode(), Version: st.Version}); err != nil {
			return fmt.Errorf("adding a topic id to %s: %w", topic, err)
		}
	}
	c.ctx.topicIDs[topic] = d.id
	for tp, a := range d.assignments {
		c.ctx.setAssignment(tp, a)
	}
	return nil
}

// topicZNodeOf is the context's assignment of topic as its znode.
func (c *Controller) topicZNodeOf(topic string) kafkazk.TopicZNode {
	z := kafkazk.TopicZNode{Version: 3, TopicID: c.ctx.topicIDs[topic], Partitions: kafkazk.ReplicaMap{}, Adding: kafkazk.ReplicaMap{}, Removing: kafkazk.ReplicaMap{}}
	for p, a := range c.ctx.assignments[topic] {
		z.Partitions[p] = a.Replicas
		if len(a.Adding) > 0 {
			z.Adding[p] = a.Adding
		}
		if len(a.Removing) > 0 {
			z.Removing[p] = a.Removing
		}
	}
	return z
}

func isSequentialChild(name, prefix string) bool { return strings.HasPrefix(name, prefix) }
