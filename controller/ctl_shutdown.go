package controller

import (
	"github.com/kbroker/kbroker/kafkazk"
)

// controlledShutdown is the controller side of ControlledShutdown, the
// executor of decideControlledShutdown: leadership moves off the broker, it
// leaves the ISRs of partitions it follows, and the partitions it still leads
// (no other ISR member available) are returned; the broker retries until none
// is left.
func (c *Controller) controlledShutdown(id int32, brokerEpoch int64) ([]kafkazk.TopicPartition, error) {
	d := decideControlledShutdown(c.ctx, id, brokerEpoch)
	if d.err != nil {
		return nil, d.err
	}
	c.ctx.shuttingDown[id] = true
	c.log.Info("controlled shutdown", "broker", id)

	batch := d.requests
	failed, err := c.electLeaders(batch, d.led, controlledShutdownElection, false)
	if err != nil {
		return nil, err
	}
	for tp, e := range failed {
		c.log.Info("partition stays led by the shutting-down broker", "topic", tp.Topic, "partition", tp.Partition, "broker", id, "err", e)
	}
	if err := c.removeReplicaFromIsr(batch, id, d.followed); err != nil {
		return nil, err
	}
	c.sendBatch(batch)
	return controlledShutdownRemaining(c.ctx, id), nil
}
