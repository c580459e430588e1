package controller

import (
	"errors"
	"sort"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
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

// processTopicDeletionMarkers executes decideDeletionMarkers, then
// resumes the deletions.
func (c *Controller) processTopicDeletionMarkers(names []string) error {
	toDelete, unknown := decideDeletionMarkers(c.ctx, names)
	for _, t := range toDelete {
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

// resumeDeletions executes decideResumeDeletions: deletions not yet
// started start, the StopReplica requests that could not be delivered
// before are sent again, and topics with nothing pending are removed.
func (c *Controller) resumeDeletions() error {
	d := decideResumeDeletions(c.ctx)
	for _, s := range d.started {
		for _, tp := range s.partitions {
			c.ctx.states[tp] = partitionOffline
		}
		c.ctx.deletionPending[s.topic] = s.pending
		c.log.Info("deleting topic", "topic", s.topic)
	}
	for _, r := range d.sent {
		c.ctx.deletionPending[r.Topic][r] = true
	}
	c.sendBatch(d.requests)
	for _, t := range d.done {
		if err := c.completeDeletion(t); err != nil {
			return err
		}
	}
	return nil
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

// handleStopReplicaResponse executes decideStopReplicaResponse.
func (c *Controller) handleStopReplicaResponse(broker int32, req *kmsg.StopReplicaRequest, resp *kmsg.StopReplicaResponse) error {
	o := decideStopReplicaResponse(c.ctx, broker, req, resp)
	if o.requestErr != nil {
		c.log.Warn("StopReplica failed", "broker", broker, "err", o.requestErr)
	}
	for _, ch := range o.changes {
		pending := c.ctx.deletionPending[ch.replica.Topic]
		if ch.confirmed {
			delete(pending, ch.replica)
			continue
		}
		if o.requestErr == nil {
			c.log.Warn("replica deletion failed", "topic", ch.replica.Topic, "partition", ch.replica.Partition, "broker", broker, "err", ch.err)
		}
		pending[ch.replica] = false
	}
	for _, t := range o.complete {
		if err := c.completeDeletion(t); err != nil {
			return err
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
