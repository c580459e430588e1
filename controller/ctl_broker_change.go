package controller

import (
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
)

// processBrokerChange handles a child change of /brokers/ids
// (KafkaController.processBrokerChange): brokers gone are failures, new ones
// start-ups, and a broker registered again with a higher epoch (czxid) is a
// bounce, handled as a failure followed by a start-up.
func (c *Controller) processBrokerChange() error {
	names, err := c.childrenW(kafkazk.BrokerIDsPath, ctlEvent{"BrokerChange", c.processBrokerChange})
	if err != nil {
		return err
	}
	current, err := c.readBrokers(names)
	if err != nil {
		return err
	}
	var newIDs, deadIDs, bounced []int32
	for id, b := range current {
		old, known := c.ctx.brokers[id]
		switch {
		case !known:
			newIDs = append(newIDs, id)
		case b.Epoch > old.Epoch:
			bounced = append(bounced, id)
		}
	}
	for id := range c.ctx.brokers {
		if _, ok := current[id]; !ok {
			deadIDs = append(deadIDs, id)
		}
	}
	slices.Sort(newIDs)
	slices.Sort(deadIDs)
	slices.Sort(bounced)
	if len(newIDs)+len(deadIDs)+len(bounced) == 0 {
		return nil
	}
	c.log.Info("broker change", "new", newIDs, "dead", deadIDs, "bounced", bounced)

	gone := append(slices.Clone(deadIDs), bounced...)
	for _, id := range gone {
		delete(c.ctx.brokers, id)
		delete(c.ctx.shuttingDown, id)
		c.chans.removeBroker(id)
	}
	if len(gone) > 0 {
		if err := c.onBrokerFailure(gone); err != nil {
			return err
		}
	}
	started := append(slices.Clone(newIDs), bounced...)
	for _, id := range started {
		c.ctx.brokers[id] = current[id]
		c.chans.addBroker(current[id], c.cfg.InterBrokerListener)
	}
	if len(started) > 0 {
		if err := c.onBrokerStartup(started); err != nil {
			return err
		}
	}
	if len(started) > 0 {
		if err := c.resumeReassignments(); err != nil {
			return err
		}
	}
	return c.resumeDeletions()
}

// onBrokerFailure: partitions the dead brokers led go Offline and get new
// leaders (Offline strategy); then their replicas go Offline, leaving the
// ISRs. Brokers hear of the death by UpdateMetadata even if no partition
// changed.
func (c *Controller) onBrokerFailure(dead []int32) error {
	b := newRequestBatch(c.ctx)
	defer c.sendBatch(b)
	for tp, st := range c.ctx.leadership {
		if slices.Contains(dead, st.Leader) && !c.ctx.topicsToDelete[tp.Topic] {
			c.ctx.states[tp] = partitionOffline
		}
	}
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	for _, id := range dead {
		var tps []kafkazk.TopicPartition
		for _, tp := range c.ctx.partitionsOnBroker(id) {
			if c.ctx.topicsToDelete[tp.Topic] {
				c.markDeletionUnsent(tp, id)
				continue
			}
			tps = append(tps, tp)
		}
		if err := c.replicasOffline(b, id, tps); err != nil {
			return err
		}
	}
	b.addUpdateMetadata(c.ctx.liveBrokerIDs(), nil)
	return nil
}

// onBrokerStartup: the others learn of the new brokers, the new brokers
// get every partition's metadata and a LeaderAndIsr for each replica they
// host, and partitions that were waiting for them get leaders.
func (c *Controller) onBrokerStartup(started []int32) error {
	var existing []int32
	for _, id := range c.ctx.liveBrokerIDs() {
		if !slices.Contains(started, id) {
			existing = append(existing, id)
		}
	}
	um := newRequestBatch(c.ctx)
	um.addUpdateMetadata(existing, nil)
	um.addUpdateMetadata(started, c.ctx.allPartitions())
	c.sendBatch(um)
	b := newRequestBatch(c.ctx)
	defer c.sendBatch(b)
	for _, id := range started {
		for tp, m := range c.ctx.offlineReplicas {
			delete(m, id)
			if len(m) == 0 {
				delete(c.ctx.offlineReplicas, tp)
			}
		}
		c.replicasOnline(b, id, c.ctx.partitionsOnBroker(id))
	}
	return c.triggerOnlinePartitionStateChange(b)
}
