package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// [1,2] → [3,4]: RS is TRS ∪ ORS, adding TRS − ORS, removing ORS − TRS;
// superseding it with [3,1] keeps ORS, stops adding 4 and drops it;
// reassigning to what is already there writes nothing.
func TestDecideReassignment(t *testing.T) {
	tp := kafkazk.TopicPartition{Topic: "orders", Partition: 0}
	ctx := decideContext([]int32{1, 2, 3, 4}, map[kafkazk.TopicPartition][]int32{tp: {1, 2}})

	d, err := decideReassignment(ctx, tp, []int32{3, 4})
	if err != nil || !d.write || len(d.superseded) != 0 || !slices.Equal(d.next.Replicas, []int32{3, 4, 1, 2}) ||
		!slices.Equal(d.next.Adding, []int32{3, 4}) || !slices.Equal(d.next.Removing, []int32{1, 2}) {
		t.Fatalf("start: %+v %v", d, err)
	}
	if a, _ := ctx.assignment(tp); !slices.Equal(a.Replicas, []int32{1, 2}) {
		t.Fatalf("decision changed the context: %+v", a)
	}

	ctx.setAssignment(tp, d.next)
	d, err = decideReassignment(ctx, tp, []int32{3, 1})
	if err != nil || !d.write || !slices.Equal(d.superseded, []int32{4}) || !slices.Equal(d.next.Replicas, []int32{3, 1, 2}) ||
		!slices.Equal(d.next.Adding, []int32{3}) || !slices.Equal(d.next.Removing, []int32{2}) {
		t.Errorf("superseded: %+v %v", d, err)
	}
	// Resuming the same reassignment: nothing to write.
	if d, err := decideReassignment(ctx, tp, []int32{3, 4}); err != nil || d.write || len(d.superseded) != 0 {
		t.Errorf("resumed: %+v %v", d, err)
	}
	// Back to ORS: no longer a reassignment, 3 and 4 are dropped.
	if d, err := decideReassignment(ctx, tp, []int32{1, 2}); err != nil || !d.write || d.next.isBeingReassigned() ||
		!slices.Equal(d.next.Replicas, []int32{1, 2}) || !slices.Equal(d.superseded, []int32{3, 4}) {
		t.Errorf("cancelled: %+v %v", d, err)
	}
	if _, err := decideReassignment(ctx, kafkazk.TopicPartition{Topic: "nope"}, []int32{1}); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown partition: %v", err)
	}
}

// The reassignment completes once all of TRS is in the ISR; a leader
// outside TRS or dead calls for an election, and ORS − TRS is dropped.
func TestDecideReassignmentCompletion(t *testing.T) {
	tp := kafkazk.TopicPartition{Topic: "orders", Partition: 0}
	ctx := decideContext([]int32{1, 2, 3}, map[kafkazk.TopicPartition][]int32{tp: {3, 4, 1, 2}})
	start := reassignmentStart{next: replicaAssignment{Replicas: []int32{3, 4, 1, 2}, Adding: []int32{3, 4}, Removing: []int32{1, 2}}}
	target := []int32{3, 4}
	if reassignmentTargetInIsr(target, leadership(1, 1, []int32{1, 2, 3}, 2)) {
		t.Error("complete without 4 in the ISR")
	}
	if !reassignmentTargetInIsr(target, leadership(1, 1, []int32{1, 4, 2, 3}, 2)) {
		t.Error("not complete with TRS in the ISR")
	}
	done := decideReassignmentCompletion(ctx, target, start, leadership(1, 1, []int32{1, 2, 3, 4}, 2))
	if !done.elect || !slices.Equal(done.drop, []int32{1, 2}) || !slices.Equal(done.assignment.Replicas, target) || done.assignment.isBeingReassigned() {
		t.Errorf("leader outside TRS: %+v", done)
	}
	if done := decideReassignmentCompletion(ctx, target, start, leadership(3, 1, []int32{3, 4}, 2)); done.elect {
		t.Errorf("live leader in TRS: %+v", done)
	}
	if done := decideReassignmentCompletion(ctx, target, start, leadership(4, 1, []int32{3, 4}, 2)); !done.elect {
		t.Errorf("dead leader in TRS: %+v", done)
	}
}

func TestDecideLeaderEpochBump(t *testing.T) {
	cur := leadership(1, 4, []int32{1, 2}, 6)
	cur.LeaderRecoveryState = kafkazk.LeaderRecovered
	d := decideLeaderEpochBump(cur, []int32{1, 2, 3})
	if !d.change || d.next.Leader != 1 || d.next.LeaderEpoch != 5 || !slices.Equal(d.next.ISR, []int32{1, 2}) ||
		d.next.PartitionEpoch != 6 || d.next.LeaderRecoveryState != kafkazk.LeaderRecovered || !slices.Equal(d.recipients, []int32{1, 2, 3}) {
		t.Errorf("bump %+v", d)
	}
	d.next.ISR[0] = 9
	if cur.ISR[0] != 1 {
		t.Error("decision shares its input's ISR")
	}
}

func TestReassignmentsToResume(t *testing.T) {
	a0, a1, d0 := kafkazk.TopicPartition{Topic: "a", Partition: 0}, kafkazk.TopicPartition{Topic: "a", Partition: 1}, kafkazk.TopicPartition{Topic: "doomed", Partition: 0}
	ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{a0: {1}})
	ctx.setAssignment(a1, replicaAssignment{Replicas: []int32{2, 1}, Adding: []int32{2}, Removing: []int32{1}})
	ctx.setAssignment(d0, replicaAssignment{Replicas: []int32{2, 1}, Adding: []int32{2}})
	ctx.topicsToDelete["doomed"] = true
	if got := reassignmentsToResume(ctx); !slices.Equal(got, []kafkazk.TopicPartition{a1}) {
		t.Errorf("to resume %v", got)
	}
}

// AlterPartitionReassignments' checks in Kafka's order; a cancel goes back
// to ORS.
func TestDecideAlterReassignment(t *testing.T) {
	tp, moving := kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.TopicPartition{Topic: "orders", Partition: 1}
	ctx := decideContext([]int32{1, 2, 3}, map[kafkazk.TopicPartition][]int32{tp: {1, 2}})
	ctx.setAssignment(moving, replicaAssignment{Replicas: []int32{3, 1, 2}, Adding: []int32{3}, Removing: []int32{2}})
	for name, c := range map[string]struct {
		tp     kafkazk.TopicPartition
		target []int32
		code   error
	}{
		"empty":           {tp, []int32{}, kerr.InvalidReplicaAssignment},
		"duplicates":      {tp, []int32{3, 3}, kerr.InvalidReplicaAssignment},
		"negative":        {tp, []int32{-1}, kerr.InvalidReplicaAssignment},
		"dead new member": {tp, []int32{3, 9}, kerr.InvalidReplicaAssignment},
		"nothing to stop": {tp, nil, kerr.NoReassignmentInProgress},
		"unknown":         {kafkazk.TopicPartition{Topic: "nope"}, []int32{1}, kerr.UnknownTopicOrPartition},
		"unknown cancel":  {kafkazk.TopicPartition{Topic: "nope"}, nil, kerr.NoReassignmentInProgress},
	} {
		if _, err := decideAlterReassignment(ctx, c.tp, c.target); !errors.Is(err, c.code) {
			t.Errorf("%s: %v, want %v", name, err, c.code)
		}
	}
	if to, err := decideAlterReassignment(ctx, tp, []int32{3, 1}); err != nil || !slices.Equal(to, []int32{3, 1}) {
		t.Errorf("valid: %v %v", to, err)
	}
	if to, err := decideAlterReassignment(ctx, moving, nil); err != nil || !slices.Equal(to, []int32{1, 2}) {
		t.Errorf("cancel: %v %v", to, err)
	}
	ctx.topicsToDelete["orders"] = true
	if _, err := decideAlterReassignment(ctx, tp, []int32{2, 1}); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("topic being deleted: %v", err)
	}
}
