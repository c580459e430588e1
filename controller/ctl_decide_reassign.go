package controller

import (
	"fmt"
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Reassignment's decisions (KIP-455); ctl_reassign.go executes them.

// reassignmentStart is a reassignment to a target started, continued or
// superseded: the assignment it needs in /brokers/topics/<t>.
type reassignmentStart struct {
	// next is RS = TRS ∪ ORS with its adding and removing replicas, or
	// just TRS when nothing moves.
	next replicaAssignment
	// write: next differs from the assignment in the context; the
	// executor sets it and writes the topic znode.
	write bool
	// superseded is the replicas a superseded reassignment was adding
	// that this one does not want: taken offline and deleted.
	superseded []int32
}

// decideReassignment is the first step of a reassignment of tp to target.
// ORS is the replicas before any reassignment in progress.
func decideReassignment(ctx *controllerContext, tp kafkazk.TopicPartition, target []int32) (reassignmentStart, error) {
	cur, ok := ctx.assignment(tp)
	if !ok {
		return reassignmentStart{}, kerr.UnknownTopicOrPartition
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
	return reassignmentStart{
		next:       next,
		write:      !slices.Equal(next.Replicas, cur.Replicas) || !slices.Equal(next.Adding, cur.Adding) || !slices.Equal(next.Removing, cur.Removing),
		superseded: without(cur.Adding, next.Replicas),
	}, nil
}

// reassignmentTargetInIsr: every target replica is in the ISR of the
// state znode read, so the reassignment can complete.
func reassignmentTargetInIsr(target []int32, st partitionLeadership) bool {
	for _, r := range target {
		if !slices.Contains(st.ISR, r) {
			return false
		}
	}
	return true
}

// reassignmentCompletion is the last step of a reassignment.
type reassignmentCompletion struct {
	// assignment is TRS alone, put in the context and written.
	assignment replicaAssignment
	// elect: the leader is not a live TRS member, so a reassign election
	// picks one in TRS; otherwise the leader epoch is bumped for TRS.
	elect bool
	// drop is ORS − TRS, taken offline and deleted.
	drop []int32
}

// decideReassignmentCompletion completes the reassignment begun with
// start, given the partition's state znode as read.
func decideReassignmentCompletion(ctx *controllerContext, target []int32, start reassignmentStart, st partitionLeadership) reassignmentCompletion {
	return reassignmentCompletion{
		assignment: replicaAssignment{Replicas: slices.Clone(target)},
		elect:      !slices.Contains(target, st.Leader) || !ctx.isLive(st.Leader),
		drop:       start.next.Removing,
	}
}

// decideLeaderEpochBump is Kafka's updateLeaderEpochAndSendRequest: same
// leader and ISR, leader epoch + 1, sent to recipients, so that replicas
// apply the new replica set.
func decideLeaderEpochBump(cur partitionLeadership, recipients []int32) decision {
	return decision{change: true, next: cur.next(cur.Leader, slices.Clone(cur.ISR), cur.LeaderRecoveryState), recipients: recipients}
}

// reassignmentsToResume is the partitions with a reassignment recorded,
// of topics not being deleted (failover, broker start-up).
func reassignmentsToResume(ctx *controllerContext) []kafkazk.TopicPartition {
	var out []kafkazk.TopicPartition
	for _, tp := range ctx.allPartitions() {
		if a, _ := ctx.assignment(tp); a.isBeingReassigned() && !ctx.topicsToDelete[tp.Topic] {
			out = append(out, tp)
		}
	}
	return out
}

// decideAlterReassignment validates one AlterPartitionReassignments entry
// (target nil: cancel) and returns the target to reassign to (ORS for a
// cancel), or the partition's error as Kafka reports it, in Kafka's order
// (KafkaController.handleAlterPartitionReassignments): the replica list
// first, then a cancellation with nothing to cancel, then the partition's
// existence.
func decideAlterReassignment(ctx *controllerContext, tp kafkazk.TopicPartition, target []int32) ([]int32, error) {
	a, known := ctx.assignment(tp)
	if target != nil {
		if err := validateReassignmentReplicas(ctx, a.originReplicas(), target); err != nil {
			return nil, err
		}
	}
	if target == nil && (!known || !a.isBeingReassigned()) {
		return nil, &kafkazk.KafkaError{Code: kerr.NoReassignmentInProgress, Message: "No reassignment in progress for this partition."}
	}
	if !known || ctx.topicsToDelete[tp.Topic] {
		return nil, &kafkazk.KafkaError{Code: kerr.UnknownTopicOrPartition, Message: "The partition does not exist."}
	}
	if target == nil {
		return a.originReplicas(), nil
	}
	return target, nil
}

// validateReassignmentReplicas is KafkaController.validateReplicas: a
// non-empty list of distinct, valid broker ids whose new members are live.
func validateReassignmentReplicas(ctx *controllerContext, current, target []int32) error {
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
		if !ctx.isLive(r) {
			return &kafkazk.KafkaError{Code: kerr.InvalidReplicaAssignment, Message: fmt.Sprintf(
				"Replica assignment has brokers that are not alive. Replica list: %v, live broker list: %v", adding, ctx.liveBrokerIDs())}
		}
	}
	return nil
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
