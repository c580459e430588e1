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

func (c *Controller) handleIsrChanges(names []string) error {
	seen := map[kafkazk.TopicPartition]bool{}
	var tps []kafkazk.TopicPartition
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
		for _, tp := range list {
			if _, known := c.ctx.assignment(tp); known && !seen[tp] {
				seen[tp] = true
				tps = append(tps, tp)
			}
		}
	}
	sortPartitions(tps)
	var refreshed []kafkazk.TopicPartition
	for _, tp := range tps {
		st, ok, err := c.readLeadership(tp)
		if err != nil {
			if isFatalZKError(err) {
				return err
			}
			c.log.Warn("reading partition state", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			continue
		}
		if !ok {
			continue
		}
		c.ctx.leadership[tp] = st
		c.refreshPartitionState(tp)
		refreshed = append(refreshed, tp)
	}
	if len(refreshed) == 0 {
		return nil
	}
	b := newRequestBatch(c.ctx)
	b.addUpdateMetadata(c.ctx.liveBrokerIDs(), refreshed)
	c.sendBatch(b)
	// A reassignment may be waiting for these ISRs.
	for _, tp := range refreshed {
		if a, _ := c.ctx.assignment(tp); a.isBeingReassigned() {
			if err := c.onPartitionReassignment(tp, a.targetReplicas()); err != nil {
				return err
			}
		}
	}
	return nil
}
