package controller

import (
	"fmt"
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// Partition reassignment, KIP-455 (Kafka 2.4+): with ORS the original
// replicas and TRS the target, the assignment becomes RS = TRS ∪ ORS with
// adding_replicas = TRS − ORS and removing_replicas = ORS − TRS, written to
// /brokers/topics/<t>. The new replicas catch up; once every TRS member is
// in the ISR (the leader announces it through /isr_change_notification) a
// leader is chosen in TRS, the ORS − TRS replicas are stopped, removed from
// the ISR and deleted, and the assignment becomes TRS.

// onPartitionReassignment starts, continues or completes a reassignment to
// target: it executes decideReassignment, reads the partition's state
// znode, and executes the phase that state calls for.
func (c *Controller) onPartitionReassignment(tp kafkazk.TopicPartition, target []int32) error {
	start, err := decideReassignment(c.ctx, tp, target)
	if err != nil {
		return err
	}
	b := newRequestBatch(c.ctx)
	if err := c.dropReplicas(b, tp, start.superseded); err != nil {
		return err
	}
	if start.write {
		c.ctx.setAssignment(tp, start.next)
		if err := c.writeTopicAssignment(tp.Topic); err != nil {
			return err
		}
	}
	st, ok, err := c.readLeadership(tp)
	if err != nil {
		return err
	}
	if ok {
		c.ctx.leadership[tp] = st
	}
	if !ok || !reassignmentTargetInIsr(target, st) {
		// Phase A: everyone in RS learns the new replica set (with a
		// bumped leader epoch); the adding replicas start following.
		if err := c.bumpLeaderEpoch(b, tp, start.next.Replicas); err != nil {
			return err
		}
		c.sendBatch(b)
		return nil
	}
	// Phase B: the assignment becomes TRS.
	done := decideReassignmentCompletion(c.ctx, target, start, st)
	c.ctx.setAssignment(tp, done.assignment)
	if done.elect {
		failed, err := c.electLeaders(b, []kafkazk.TopicPartition{tp}, reassignElection, false)
		if err != nil {
			return err
		}
		if e := failed[tp]; e != nil {
			c.log.Warn("reassignment could not elect a leader in the target replicas", "topic", tp.Topic, "partition", tp.Partition, "err", e)
		}
	} else if err := c.bumpLeaderEpoch(b, tp, target); err != nil {
		return err
	}
	if err := c.dropReplicas(b, tp, done.drop); err != nil {
		return err
	}
	if err := c.writeTopicAssignment(tp.Topic); err != nil {
		return err
	}
	b.addUpdateMetadata(c.ctx.liveBrokerIDs(), []kafkazk.TopicPartition{tp})
	c.sendBatch(b)
	c.log.Info("reassignment completed", "topic", tp.Topic, "partition", tp.Partition, "replicas", target)
	return c.resumeDeletions()
}

// dropReplicas takes tp's replicas on rs offline and queues StopReplica
// with delete for them.
func (c *Controller) dropReplicas(b *requestBatch, tp kafkazk.TopicPartition, rs []int32) error {
	for _, r := range rs {
		if err := c.replicasOffline(b, r, []kafkazk.TopicPartition{tp}); err != nil {
			return err
		}
		b.addStopReplica([]int32{r}, tp, true, -1)
	}
	return nil
}

// bumpLeaderEpoch executes decideLeaderEpochBump.
func (c *Controller) bumpLeaderEpoch(b *requestBatch, tp kafkazk.TopicPartition, recipients []int32) error {
	failed, err := c.updateLeadership(b, []kafkazk.TopicPartition{tp}, func(_ kafkazk.TopicPartition, cur partitionLeadership, _ decisionInputs) decision {
		return decideLeaderEpochBump(cur, recipients)
	})
	if e := failed[tp]; e != nil {
		c.log.Warn("could not bump leader epoch for reassignment", "topic", tp.Topic, "partition", tp.Partition, "err", e)
	}
	return err
}

// writeTopicAssignment writes the context's assignment of topic, fenced.
func (c *Controller) writeTopicAssignment(topic string) error {
	_, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, &zkstore.OpSet{Path: kafkazk.TopicPath(topic), Data: c.topicZNodeOf(topic).Encode(), Version: -1})
	if err != nil {
		return fmt.Errorf("writing assignment of %s: %w", topic, err)
	}
	return nil
}

// resumeReassignments continues every reassignment recorded in the topic
// znodes (failover, broker start-up).
func (c *Controller) resumeReassignments() error {
	for _, tp := range reassignmentsToResume(c.ctx) {
		// An earlier reassignment's completion may have changed this one.
		a, _ := c.ctx.assignment(tp)
		if !a.isBeingReassigned() || c.ctx.topicsToDelete[tp.Topic] {
			continue
		}
		if err := c.onPartitionReassignment(tp, a.targetReplicas()); err != nil {
			if isFatalZKError(err) {
				return err
			}
			c.log.Warn("resuming reassignment", "topic", tp.Topic, "partition", tp.Partition, "err", err)
		}
	}
	return nil
}

// alterPartitionReassignment executes decideAlterReassignment: one
// reassignment (target nil: cancel) validated and started.
func (c *Controller) alterPartitionReassignment(tp kafkazk.TopicPartition, target []int32) error {
	to, err := decideAlterReassignment(c.ctx, tp, target)
	if err != nil {
		return err
	}
	return c.onPartitionReassignment(tp, to)
}

// OngoingReassignment is one partition being reassigned, as
// ListPartitionReassignments reports it.
type OngoingReassignment struct {
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
}

func (c *Controller) listReassignments(filter []kafkazk.TopicPartition) map[kafkazk.TopicPartition]OngoingReassignment {
	out := map[kafkazk.TopicPartition]OngoingReassignment{}
	for _, tp := range c.ctx.allPartitions() {
		a, _ := c.ctx.assignment(tp)
		if !a.isBeingReassigned() {
			continue
		}
		key := kafkazk.TopicPartition(tp)
		if filter != nil && !slices.Contains(filter, key) {
			continue
		}
		out[key] = OngoingReassignment{slices.Clone(a.Replicas), slices.Clone(a.Adding), slices.Clone(a.Removing)}
	}
	return out
}
