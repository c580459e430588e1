package controller

import (
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
	c.probes.unfenceByRegistration(current)
	c.publishFenced()
	d := decideBrokerChange(c.ctx.brokers, current)
	if d.empty() {
		return nil
	}
	c.log.Info("broker change", "new", d.newIDs, "dead", d.deadIDs, "bounced", d.bounced)

	gone := d.gone()
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
	started := d.started()
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
	for _, tp := range partitionsLosingLeader(c.ctx, dead) {
		c.ctx.states[tp] = partitionOffline
	}
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	for _, id := range dead {
		tps, deleting := replicasOfDeadBroker(c.ctx, id)
		for _, tp := range deleting {
			c.markDeletionUnsent(tp, id)
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
	d := decideBrokerStartup(c.ctx, started)
	c.sendBatch(d.metadata)
	for _, id := range started {
		c.ctx.clearOfflineReplicas(id)
	}
	b := d.replicas
	defer c.sendBatch(b)
	return c.triggerOnlinePartitionStateChange(b)
}
