package replica

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// CheckProduceBeforeAppend is the acks and min.insync.replicas check made
// before a produce touches the log (Partition.appendRecordsToLeader).
// Only acks=-1 writes
// are refused for a small ISR, and then nothing is appended. It returns nil
// when the append may proceed.
func (s *LeaderState) CheckProduceBeforeAppend(acks int16) error {
	switch {
	case acks != -1 && acks != 0 && acks != 1:
		return kerr.InvalidRequiredAcks
	case !s.isLeader:
		return kerr.NotLeaderForPartition
	case acks == -1 && len(s.isr) < s.EffectiveMinIsr():
		return kerr.NotEnoughReplicas
	}
	return nil
}

// ProduceWaitState is what a delayed acks=-1 produce needs to know about its
// partition at a check, copied from the partition under its lock
// (LeaderState.ProduceWaitState), so that the verdict reads no shared state.
type ProduceWaitState struct {
	// Leader: this broker still leads the partition.
	Leader bool
	// HighWatermark, MaximalIsr (its size) and EffectiveMinIsr are the
	// leader's, meaningful only while Leader.
	HighWatermark   int64
	MaximalIsr      int
	EffectiveMinIsr int
	// NotHosted: the partition is gone (deleted, or on an offline dir);
	// Err is then the error to answer.
	NotHosted bool
	Err       error
}

// ProduceWaitState snapshots what CheckDelayedProduce reads.
func (s *LeaderState) ProduceWaitState() ProduceWaitState {
	return ProduceWaitState{
		Leader:          s.isLeader,
		HighWatermark:   s.highWatermark,
		MaximalIsr:      len(s.maximalIsr()),
		EffectiveMinIsr: s.EffectiveMinIsr(),
	}
}

// ProduceWaitOutcome is a delayed produce partition's verdict.
type ProduceWaitOutcome struct {
	Done bool
	Err  error // nil = NONE
}

// CheckDelayedProduce decides one partition of a DelayedProduce
// (Partition.checkEnoughReplicasReachOffset and DelayedProduce):
// requiredOffset is the last appended offset + 1. The partition is
// done when it is gone, when this broker no longer leads it
// (NOT_LEADER_OR_FOLLOWER), or when the HW reached requiredOffset — NONE
// if the maximal ISR still has the effective min ISR, else
// NOT_ENOUGH_REPLICAS_AFTER_APPEND (the data is in the log anyway). Not
// done by the deadline: REQUEST_TIMED_OUT, though the records may still
// become committed.
func CheckDelayedProduce(st ProduceWaitState, requiredOffset int64, now, deadline time.Time) ProduceWaitOutcome {
	switch {
	case st.NotHosted:
		return ProduceWaitOutcome{Done: true, Err: st.Err}
	case !st.Leader:
		return ProduceWaitOutcome{Done: true, Err: kerr.NotLeaderForPartition}
	case st.HighWatermark >= requiredOffset:
		if st.MaximalIsr >= st.EffectiveMinIsr {
			return ProduceWaitOutcome{Done: true}
		}
		return ProduceWaitOutcome{Done: true, Err: kerr.NotEnoughReplicasAfterAppend}
	case !now.Before(deadline):
		return ProduceWaitOutcome{Done: true, Err: kerr.RequestTimedOut}
	}
	return ProduceWaitOutcome{}
}

// DelayedProduce is one parked acks=-1 produce request: it completes when
// every partition is done, or at its deadline (the request's TimeoutMs).
// The owner re-checks it whenever a partition's HW moves or its leadership
// changes, and at the deadline.
type DelayedProduce struct {
	Deadline   time.Time
	Partitions []DelayedProducePartition
}

// DelayedProducePartition is one partition of a DelayedProduce.
type DelayedProducePartition struct {
	TopicPartition TopicPartition
	RequiredOffset int64
	Outcome        ProduceWaitOutcome
}

// TryComplete checks every partition not yet done, with state(i) giving
// d.Partitions[i]'s current state, and reports whether the whole request
// is done. At or after the deadline it is always done: every partition
// still waiting gets REQUEST_TIMED_OUT.
func (d *DelayedProduce) TryComplete(state func(i int) ProduceWaitState, now time.Time) bool {
	done := true
	for i := range d.Partitions {
		p := &d.Partitions[i]
		if p.Outcome.Done {
			continue
		}
		p.Outcome = CheckDelayedProduce(state(i), p.RequiredOffset, now, d.Deadline)
		done = done && p.Outcome.Done
	}
	return done
}
