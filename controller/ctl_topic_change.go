package controller

import (
	"github.com/kbroker/kbroker/kafkazk"
)

// processTopicChange handles a child change of /brokers/topics: topics new
// to the controller get their partitions created (New → Online), topics
// gone (deletion completed elsewhere) leave the context; decideTopicChange
// decides which.
func (c *Controller) processTopicChange() error {
	topics, err := c.childrenW(kafkazk.BrokerTopicsPath, ctlEvent{"TopicChange", c.processTopicChange})
	if err != nil {
		return err
	}
	gone, fresh := decideTopicChange(c.ctx, topics)
	for _, t := range gone {
		c.ctx.removeTopic(t)
	}
	var created []kafkazk.TopicPartition
	for _, t := range fresh {
		if err := c.loadTopic(t); err != nil {
			return err
		}
		created = append(created, c.ctx.partitionsOfTopic(t)...)
	}
	if len(created) == 0 {
		return nil
	}
	c.log.Info("new topics", "partitions", len(created))
	return c.onNewPartitionCreation(created)
}

// processPartitionModifications handles a data change of
// /brokers/topics/<t>: partitions added by CreatePartitions are created.
// The controller's own writes (reassignment, topic ids) also land here and
// add nothing.
func (c *Controller) processPartitionModifications(topic string) error {
	before := map[int32]bool{}
	for p := range c.ctx.assignments[topic] {
		before[p] = true
	}
	if _, known := c.ctx.assignments[topic]; !known {
		// Not ours (yet): TopicChange will load it.
		return nil
	}
	if err := c.loadTopic(topic); err != nil {
		return err
	}
	added, ignored := decidePartitionModifications(c.ctx, topic, before)
	if ignored {
		c.log.Info("ignoring partitions added to a topic being deleted", "topic", topic)
		return nil
	}
	if len(added) == 0 {
		return nil
	}
	c.log.Info("partitions added", "topic", topic, "count", len(added))
	return c.onNewPartitionCreation(added)
}

// onNewPartitionCreation is NonExistent → New → Online for new partitions.
func (c *Controller) onNewPartitionCreation(tps []kafkazk.TopicPartition) error {
	for _, tp := range tps {
		c.ctx.states[tp] = partitionNew
	}
	b := newRequestBatch(c.ctx)
	err := c.initializePartitions(b, tps)
	c.sendBatch(b)
	return err
}
