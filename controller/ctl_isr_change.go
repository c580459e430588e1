package controller

import (
	"errors"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// processIsrChangeNotification is Kafka's processIsrChangeNotification:
// leaders changed ISRs in ZooKeeper and announced the partitions; the
// controller re-reads those state znodes and tells every broker by
// UpdateMetadata (no LeaderAndIsr: the leader already knows). The
// notifications it read are deleted even if handling failed, so a bad one
// cannot wedge the path.
func (c *Controller) processIsrChangeNotification() error {
	names, err := c.childrenW(kafkazk.IsrChangeNotificationPath, ctlEvent{"IsrChangeNotification", c.processIsrChangeNotification})
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	handleErr := c.handleIsrChanges(names)
	if err := c.deleteChildren(kafkazk.IsrChangeNotificationPath, names); err != nil {
		return err
	}
	return handleErr
}

// handleIsrChanges is the executor of decideIsrChange: it reads the
// notifications and the state znodes of the partitions they name, applies
// the decision to the context, sends its requests and continues the
// reassignments it names.
func (c *Controller) handleIsrChanges(names []string) error {
	var notifications [][]kafkazk.TopicPartition
	for _, n := range names {
		if !isSequentialChild(n, kafkazk.IsrChangePrefix) {
			continue
		}
		data, _, err := c.zk.Get(kafkazk.IsrChangeNotificationPath + "/" + n)
		if errors.Is(err, zkstore.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		list, err := kafkazk.DecodePartitionList(data)
		if err != nil {
			c.log.Warn("ignoring unreadable ISR change notification", "node", n, "err", err)
			continue
		}
		notifications = append(notifications, list)
	}
	tps := isrChangedPartitions(c.ctx, notifications)
	states := map[kafkazk.TopicPartition]partitionLeadership{}
	for _, tp := range tps {
		st, ok, err := c.readLeadership(tp)
		if err != nil {
			if isFatalZKError(err) {
				return err
			}
			c.log.Warn("reading partition state", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			continue
		}
		if ok {
			states[tp] = st
		}
	}
	d := decideIsrChange(c.ctx, tps, states)
	c.ctx.apply(d.updates)
	if d.requests != nil {
		c.sendBatch(d.requests)
	}
	for _, tp := range d.reassign {
		// An earlier step may have finished this one.
		if a, _ := c.ctx.assignment(tp); a.isBeingReassigned() {
			if err := c.onPartitionReassignment(tp, a.targetReplicas()); err != nil {
				return err
			}
		}
	}
	return nil
}
