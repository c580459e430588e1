package controller

import (
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// controlledShutdown is the controller side of ControlledShutdown
// (KafkaController.doControlledShutdown): leadership moves off the broker, it
// leaves the ISRs of partitions it follows, and the partitions it still leads
// (no other ISR member available) are returned; the broker retries until none
// is left.
func (c *Controller) controlledShutdown(id int32, brokerEpoch int64) ([]kafkazk.TopicPartition, error) {
	b, ok := c.ctx.brokers[id]
	if !ok {
		return nil, kerr.BrokerNotAvailable
	}
	// -1 is "unknown", never stale (AbstractControlRequest.UNKNOWN_BROKER_EPOCH).
	if brokerEpoch != -1 && brokerEpoch < b.Epoch {
		return nil, kerr.StaleBrokerEpoch
	}
	c.ctx.shuttingDown[id] = true
	c.log.Info("controlled shutdown", "broker", id)

	var led, followed []kafkazk.TopicPartition
	for _, tp := range c.ctx.partitionsOnBroker(id) {
		a, _ := c.ctx.assignment(tp)
		st, has := c.ctx.leadership[tp]
		if len(a.Replicas) <= 1 || !has || c.ctx.topicsToDelete[tp.Topic] {
			continue
		}
		if st.Leader == id {
			led = append(led, tp)
		} else {
			followed = append(followed, tp)
		}
	}
	batch := newRequestBatch(c.ctx)
	failed, err := c.electLeaders(batch, led, controlledShutdownElection, false)
	if err != nil {
		return nil, err
	}
	for tp, e := range failed {
		c.log.Info("partition stays led by the shutting-down broker", "topic", tp.Topic, "partition", tp.Partition, "broker", id, "err", e)
	}
	if err := c.replicasOffline(batch, id, followed); err != nil {
		return nil, err
	}
	c.sendBatch(batch)

	remaining := []kafkazk.TopicPartition{}
	for _, tp := range c.ctx.partitionsOnBroker(id) {
		a, _ := c.ctx.assignment(tp)
		if st, ok := c.ctx.leadership[tp]; ok && len(a.Replicas) > 1 && st.Leader == id {
			remaining = append(remaining, kafkazk.TopicPartition(tp))
		}
	}
	return remaining, nil
}
