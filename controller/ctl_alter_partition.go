package controller

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// AlterPartition is the controller's side of AlterPartition (KIP-497),
// which partition leaders send from inter.broker.protocol.version 2.7-IV2
// instead of writing ISR changes into ZooKeeper themselves. The error is
// the request's (STALE_BROKER_EPOCH, or this broker no longer being the
// controller); each item has its own result otherwise, in request order.
func (c *Controller) AlterPartition(ctx context.Context, brokerID int32, brokerEpoch int64, version int16, items []AlterPartitionItem) ([]AlterPartitionResult, error) {
	var out []AlterPartitionResult
	err := c.call(ctx, "AlterPartition", func() error {
		var err error
		out, err = c.alterPartition(brokerID, brokerEpoch, version, items)
		return err
	})
	return out, err
}

// alterPartition is the executor of decideAlterPartition
// (KafkaController.processAlterPartition): accepted ISRs are written to the
// state znodes at the versions this controller knows, the cache follows,
// every broker gets UpdateMetadata for the partitions asked about (the
// leader has its answer), and reassignments waiting for a new ISR go on.
func (c *Controller) alterPartition(brokerID int32, brokerEpoch int64, version int16, items []AlterPartitionItem) ([]AlterPartitionResult, error) {
	if err := checkBrokerEpoch(c.ctx, brokerID, brokerEpoch, kerr.StaleBrokerEpoch); err != nil {
		c.log.Info("refusing AlterPartition from a broker at a stale epoch", "broker", brokerID, "brokerEpoch", brokerEpoch)
		return nil, err
	}
	out := make([]AlterPartitionResult, len(items))
	var known, changed []kafkazk.TopicPartition
	for i, it := range items {
		tp := kafkazk.TopicPartition{Topic: it.Topic, Partition: it.Partition}
		if tp.Topic == "" {
			name, ok := c.ctx.topicName(it.TopicID)
			if !ok {
				out[i].Err = kerr.UnknownTopicID
				continue
			}
			tp.Topic = name
		}
		cur, ok := c.ctx.leadership[tp]
		if ok {
			known = append(known, tp)
		}
		next, res := decideAlterPartition(c.ctx, brokerID, version, tp, it)
		if next == nil {
			out[i] = res
			continue
		}
		written := partitionLeadership{leaderAndIsr: *next, ControllerEpoch: c.epoch}
		wrote, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, &zkstore.OpSet{
			Path:    kafkazk.PartitionStatePath(tp.Topic, tp.Partition),
			Data:    written.znode().Encode(),
			Version: cur.PartitionEpoch,
		})
		switch {
		case errors.Is(err, zkstore.ErrBadVersion):
			out[i].Err = kerr.InvalidUpdateVersion
			continue
		case err != nil && isFatalZKError(err):
			return nil, err
		case err != nil:
			c.log.Warn("AlterPartition: writing the state znode", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			out[i].Err = kerr.UnknownServerError
			continue
		}
		written.PartitionEpoch = wrote[0].Stat.Version
		c.ctx.leadership[tp] = written
		out[i] = resultOf(written.leaderAndIsr)
		changed = append(changed, tp)
		c.log.Info("ISR changed by the leader's AlterPartition", "topic", tp.Topic, "partition", tp.Partition, "leader", brokerID, "isr", written.ISR, "partitionEpoch", written.PartitionEpoch)
	}
	if len(known) > 0 {
		b := newRequestBatch(c.ctx)
		b.addUpdateMetadata(c.ctx.liveBrokerIDs(), known)
		c.sendBatch(b)
	}
	for _, tp := range changed {
		if a, _ := c.ctx.assignment(tp); a.isBeingReassigned() {
			if err := c.onPartitionReassignment(tp, a.targetReplicas()); err != nil {
				if isFatalZKError(err) {
					return nil, err
				}
				c.log.Warn("continuing a reassignment after AlterPartition", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			}
		}
	}
	return out, nil
}
