package controller

import (
	"errors"
	"slices"
	"sort"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topic deletion (Kafka's TopicDeletionManager, /admin/delete_topics):
// brokers are told the topic is going (UpdateMetadata with leader -2), every
// replica gets StopReplica with delete; when all have confirmed, the
// controller deletes /brokers/topics/<t>, /config/topics/<t> and the marker.
// A replica on a dead broker holds the deletion until the broker returns; a
// topic being reassigned waits for the reassignment to finish.

// processTopicDeletion handles a child change of /admin/delete_topics.
func (c *Controller) processTopicDeletion() error {
	names, err := c.childrenW(kafkazk.DeleteTopicsPath, ctlEvent{"TopicDeletion", c.processTopicDeletion})
	if err != nil {
		return err
	}
	return c.processTopicDeletionMarkers(names)
}

func (c *Controller) processTopicDeletionMarkers(names []string) error {
	var unknown []string
	for _, t := range names {
		if _, ok := c.ctx.assignments[t]; !ok {
			unknown = append(unknown, t)
			continue
		}
		c.ctx.topicsToDelete[t] = true
	}
	if len(unknown) > 0 {
		c.log.Info("ignoring deletion of unknown topics", "topics", unknown)
		if err := c.deleteChildren(kafkazk.DeleteTopicsPath, unknown); err != nil {
			return err
		}
	}
	return c.resumeDeletions()
}

// resumeDeletions starts deletions not yet started and re-sends the
// StopReplica requests that could not be delivered before.
func (c *Controller) resumeDeletions() error {
	topics := make([]string, 0, len(c.ctx.topicsToDelete))
	for t := range c.ctx.topicsToDelete {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	b := newRequestBatch(c.ctx)
	var done []string
	for _, t := range topics {
		if c.topicBeingReassigned(t) {
			continue
		}
		pending, started := c.ctx.deletionPending[t]
		if !started {
			pending = map[topicPartitionReplica]bool{}
			tps := c.ctx.partitionsOfTopic(t)
			for _, tp := range tps {
				a, _ := c.ctx.assignment(tp)
				for _, r := range a.Replicas {
					pending[topicPartitionReplica{tp, r}] = false
				}
				c.ctx.states[tp] = partitionOffline
			}
			c.ctx.deletionPending[t] = pending
			b.addUpdateMetadata(c.ctx.liveBrokerIDs(), tps)
			c.log.Info("deleting topic", "topic", t)
		}
		for r, sent := range pending {
			if !sent && c.ctx.isLive(r.Replica) {
				pending[r] = true
				b.addStopReplica([]int32{r.Replica}, r.TopicPartition, true, leaderEpochDuringDelete)
			}
		}
		if len(pending) == 0 {
			done = append(done, t)
		}
	}
	c.sendBatch(b)
	for _, t := range done {
		if err := c.completeDeletion(t); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) topicBeingReassigned(topic string) bool {
	for _, a := range c.ctx.assignments[topic] {
		if a.isBeingReassigned() {
			return true
		}
	}
	return false
}

// markDeletionUnsent: the replica's StopReplica was lost (broker died, or
// it failed); it is sent again when the broker is back.
func (c *Controller) markDeletionUnsent(tp kafkazk.TopicPartition, replica int32) {
	if pending := c.ctx.deletionPending[tp.Topic]; pending != nil {
		if _, ok := pending[topicPartitionReplica{tp, replica}]; ok {
			pending[topicPartitionReplica{tp, replica}] = false
		}
	}
}

func (c *Controller) handleStopReplicaResponse(broker int32, req *kmsg.StopReplicaRequest, resp *kmsg.StopReplicaResponse) error {
	deleting := map[kafkazk.TopicPartition]bool{}
	for _, t := range req.Topics {
		for _, p := range t.PartitionStates {
			if p.Delete {
				deleting[kafkazk.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = true
			}
		}
	}
	if resp.ErrorCode != 0 {
		c.log.Warn("StopReplica failed", "broker", broker, "err", kerr.ErrorForCode(resp.ErrorCode))
		for tp := range deleting {
			c.markDeletionUnsent(tp, broker)
		}
		return nil
	}
	var touched []string
	for _, p := range resp.Partitions {
		tp := kafkazk.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		pending := c.ctx.deletionPending[tp.Topic]
		if !deleting[tp] || pending == nil {
			continue
		}
		key := topicPartitionReplica{tp, broker}
		if p.ErrorCode != 0 {
			c.log.Warn("replica deletion failed", "topic", tp.Topic, "partition", tp.Partition, "broker", broker, "err", kerr.ErrorForCode(p.ErrorCode))
			pending[key] = false
			continue
		}
		delete(pending, key)
		if !slices.Contains(touched, tp.Topic) {
			touched = append(touched, tp.Topic)
		}
	}
	for _, t := range touched {
		if len(c.ctx.deletionPending[t]) == 0 {
			if err := c.completeDeletion(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// completeDeletion removes the topic's znodes, fenced, and forgets it.
func (c *Controller) completeDeletion(topic string) error {
	ops, err := c.deleteTreeOps(kafkazk.TopicPath(topic))
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		if _, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, ops...); err != nil && !errors.Is(err, zkstore.ErrNoNode) {
			return err
		}
	}
	for _, p := range []string{kafkazk.ConfigEntityPath(kafkazk.ConfigTypeTopic, topic), kafkazk.DeleteTopicPath(topic)} {
		if _, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, &zkstore.OpDelete{Path: p, Version: -1}); err != nil && !errors.Is(err, zkstore.ErrNoNode) {
			return err
		}
	}
	c.ctx.removeTopic(topic)
	c.log.Info("deleted topic", "topic", topic)
	return nil
}

// deleteTreeOps lists deletes for path and everything under it, children
// first.
func (c *Controller) deleteTreeOps(path string) ([]zkstore.Op, error) {
	kids, _, err := c.zk.Children(path)
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sort.Strings(kids)
	var ops []zkstore.Op
	for _, k := range kids {
		sub, err := c.deleteTreeOps(path + "/" + k)
		if err != nil {
			return nil, err
		}
		ops = append(ops, sub...)
	}
	return append(ops, &zkstore.OpDelete{Path: path, Version: -1}), nil
}
