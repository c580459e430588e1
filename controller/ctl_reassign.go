package controller

import (
	"fmt"
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Partition reassignment, KIP-455 (Kafka 2.4+): with ORS the original
// replicas and TRS the target, the assignment becomes RS = TRS ∪ ORS with
// adding_replicas = TRS − ORS and removing_replicas = ORS − TRS, written to
// /brokers/topics/<t>. The new replicas catch up; once every TRS member is
// in the ISR (the leader announces it through /isr_change_notification) a
// leader is chosen in TRS, the ORS − TRS replicas are stopped, removed from
// the ISR and deleted, and the assignment becomes TRS.

// onPartitionReassignment starts, continues or completes a reassignment to
// target.
func (c *Controller) onPartitionReassignment(tp kafkazk.TopicPartition, target []int32) error {
	cur, ok := c.ctx.assignment(tp)
	if !ok {
		return kerr.UnknownTopicOrPartition
	}
	origin := cur.Replicas
	if cur.isBeingReassigned() {
		origin = cur.originReplicas()
	}
	next := replicaAssignment{
		Replicas: distinct(append(slices.Clone(target), origin...)),
		Adding:   without(target, origin),
		Removing: without(origin, target),
	}
	if !next.isBeingReassigned() {
		next = replicaAssignment{Replicas: slices.Clone(target)}
	}
	b := newRequestBatch(c.ctx)
	// Replicas a superseded reassignment was adding and this one does not
	// want are stopped and deleted.
	if err := c.dropReplicas(b, tp, without(cur.Adding, next.Replicas)); err != nil {
		return err
	}
	if !slices.Equal(next.Replicas, cur.Replicas) || !slices.Equal(next.Adding, cur.Adding) || !slices.Equal(next.Removing, cur.Removing) {
		c.ctx.setAssignment(tp, next)
		if err := c.writeTopicAssignment(tp.Topic); err != nil {
			return err
		}
	}
	complete, err := c.reassignmentComplete(tp, target)
	if err != nil {
		return err
	}
	if !complete {
		// Phase A: everyone in RS learns the new replica set (with a
		// bumped leader epoch); the adding replicas start following.
		if err := c.bumpLeaderEpoch(b, tp, next.Replicas); err != nil {
			return err
		}
		c.sendBatch(b)
		return nil
	}
	// Phase B: the assignment becomes TRS.
	removing := next.Removing
	done := replicaAssignment{Replicas: slices.Clone(target)}
	c.ctx.setAssignment(tp, done)
	st := c.ctx.leadership[tp]
	if !slices.Contains(target, st.Leader) || !c.ctx.isLive(st.Leader) {
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
	if err := c.dropReplicas(b, tp, removing); err != nil {
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

// reassignmentComplete: every target replica is in the ISR, read afresh.
func (c *Controller) reassignmentComplete(tp kafkazk.TopicPartition, target []int32) (bool, error) {
	st, ok, err := c.readLeadership(tp)
	if err != nil || !ok {
		return false, err
	}
	c.ctx.leadership[tp] = st
	for _, r := range target {
		if !slices.Contains(st.ISR, r) {
			return false, nil
		}
	}
	return true, nil
}

// bumpLeaderEpoch is Kafka's updateLeaderEpochAndSendRequest: same leader
// and ISR, leader epoch + 1, so that replicas apply the new replica set.
func (c *Controller) bumpLeaderEpoch(b *requestBatch, tp kafkazk.TopicPartition, recipients []int32) error {
	failed, err := c.updateLeadership(b, []kafkazk.TopicPartition{tp}, func(_ kafkazk.TopicPartition, cur partitionLeadership, _ decisionInputs) decision {
		return decision{change: true, next: cur.next(cur.Leader, slices.Clone(cur.ISR), cur.LeaderRecoveryState), recipients: recipients}
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
	for _, tp := range c.ctx.allPartitions() {
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

// alterPartitionReassignment validates and starts one reassignment (target
// nil: cancel), returning the partition's error as Kafka reports it, in
// Kafka's order (KafkaController.handleAlterPartitionReassignments): the
// replica list first, then a cancellation with nothing to cancel, then the
// partition's existence.
func (c *Controller) alterPartitionReassignment(tp kafkazk.TopicPartition, target []int32) error {
	a, known := c.ctx.assignment(tp)
	if target != nil {
		if err := c.validateReassignmentReplicas(a.originReplicas(), target); err != nil {
			return err
		}
	}
	if target == nil && (!known || !a.isBeingReassigned()) {
		return &kafkazk.KafkaError{Code: kerr.NoReassignmentInProgress, Message: "No reassignment in progress for this partition."}
	}
	if !known || c.ctx.topicsToDelete[tp.Topic] {
		return &kafkazk.KafkaError{Code: kerr.UnknownTopicOrPartition, Message: "The partition does not exist."}
	}
	if target == nil {
		return c.onPartitionReassignment(tp, a.originReplicas())
	}
	return c.onPartitionReassignment(tp, target)
}

// validateReassignmentReplicas is KafkaController.validateReplicas: a
// non-empty list of distinct, valid broker ids whose new members are live.
func (c *Controller) validateReassignmentReplicas(current, target []int32) error {
	switch {
	case len(target) == 0:
		return &kafkazk.KafkaError{Code: kerr.InvalidReplicaAssignment, Message: "Empty replica list specified in partition reassignment."}
	case len(distinct(target)) != len(target):
		return &kafkazk.KafkaError{Code: kerr.InvalidReplicaAssignment, Message: fmt.Sprintf("Duplicate replica ids in partition reassignment replica list: %v", target)}
	case slices.ContainsFunc(target, func(r int32) bool { return r < 0 }):
		return &kafkazk.KafkaError{Code: kerr.InvalidReplicaAssignment, Message: fmt.Sprintf("Invalid broker id in replica list: %v", target)}
	}
	var adding []int32
	for _, r := range target {
		if !slices.Contains(current, r) {
			adding = append(adding, r)
		}
	}
	for _, r := range adding {
		if !c.ctx.isLive(r) {
			return &kafkazk.KafkaError{Code: kerr.InvalidReplicaAssignment, Message: fmt.Sprintf(
				"Replica assignment has brokers that are not alive. Replica list: %v, live broker list: %v", adding, c.ctx.liveBrokerIDs())}
		}
	}
	return nil
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

func distinct(rs []int32) []int32 {
	out := []int32{}
	for _, r := range rs {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
