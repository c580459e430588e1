package kafkazk

import (
	"errors"
	"testing"
)

func TestIsrChangeNotificationPayload(t *testing.T) {
	h := newTestTree(t)
	if err := WriteIsrChangeNotification(h.admin, []TopicPartition{{"topic-a", 0}, {"topic-b", 0}}); err != nil {
		t.Fatal(err)
	}
	data, _, err := h.admin.Get(IsrChangeNotificationPath + "/isr_change_0000000000")
	if err != nil {
		t.Fatal(err)
	}
	// KafkaZkClientTest.testPropagateIsrChanges pins this string.
	if want := `{"version":1,"partitions":[{"topic":"topic-a","partition":0},{"topic":"topic-b","partition":0}]}`; string(data) != want {
		t.Errorf("payload %s", data)
	}
}

// A leader's conditional ISR write: success returns the new version; a
// write that already happened (retry after a lost reply) is success; any
// other content is a conflict.
func TestUpdateIsr(t *testing.T) {
	h := newTestTree(t, 1, 2)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.createPartitionState("orders", 0, PartitionStateZNode{ControllerEpoch: 1, Leader: 1, ISR: []int32{1, 2}})
	tp := TopicPartition{"orders", 0}
	shrink := LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, ControllerEpoch: 1}
	v, err := UpdateIsr(h.admin, tp, shrink, 0)
	if err != nil || v != 1 {
		t.Fatalf("shrink: %d %v", v, err)
	}
	if got := h.rawState("orders", 0); got != `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}` {
		t.Errorf("state %s", got)
	}
	if v, err := UpdateIsr(h.admin, tp, shrink, 0); err != nil || v != 1 {
		t.Errorf("retried identical write: %d %v", v, err)
	}
	expand := LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1}
	if _, err := UpdateIsr(h.admin, tp, expand, 0); !errors.Is(err, ErrIsrVersionConflict) {
		t.Errorf("stale version: %v", err)
	}
	if _, err := UpdateIsr(h.admin, tp, LeaderAndIsr{Leader: 1, ControllerEpoch: 1}, 1); err == nil {
		t.Error("empty ISR written")
	}
}

// A shrink the leader writes itself after the controller did not answer
// counts as done when the controller made the same change under its own
// epoch first; any other change is a conflict.
func TestUpdateIsrPastController(t *testing.T) {
	h := newTestTree(t, 1, 2, 3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.createPartitionState("orders", 0, PartitionStateZNode{ControllerEpoch: 4, Leader: 1, LeaderEpoch: 2, ISR: []int32{1, 2, 3}})
	tp := TopicPartition{"orders", 0}
	shrink := LeaderAndIsr{Leader: 1, LeaderEpoch: 2, ISR: []int32{1, 3}, ControllerEpoch: 4}
	// The controller, at epoch 5, applied the leader's request first.
	byController := LeaderAndIsr{Leader: 1, LeaderEpoch: 2, ISR: []int32{1, 3}, ControllerEpoch: 5}
	if _, err := UpdateIsr(h.admin, tp, byController, 0); err != nil {
		t.Fatal(err)
	}
	if v, err := UpdateIsrPastController(h.admin, tp, shrink, 0); err != nil || v != 1 {
		t.Errorf("same change by the controller: %d %v", v, err)
	}
	if _, err := UpdateIsr(h.admin, tp, shrink, 0); !errors.Is(err, ErrIsrVersionConflict) {
		t.Errorf("UpdateIsr took another controller epoch for ours: %v", err)
	}
	other := LeaderAndIsr{Leader: 1, LeaderEpoch: 2, ISR: []int32{1, 2}, ControllerEpoch: 4}
	if _, err := UpdateIsrPastController(h.admin, tp, other, 0); !errors.Is(err, ErrIsrVersionConflict) {
		t.Errorf("a different ISR at a newer version: %v", err)
	}
	next := LeaderAndIsr{Leader: 1, LeaderEpoch: 2, ISR: []int32{1}, ControllerEpoch: 4}
	if v, err := UpdateIsrPastController(h.admin, tp, next, 1); err != nil || v != 2 {
		t.Errorf("a write at the current version: %d %v", v, err)
	}
}

// A write whose answer was lost is settled by reading the znode: applied
// when it holds the write, not applied when still at the expected version,
// a conflict otherwise.
func TestReconcileIsr(t *testing.T) {
	h := newTestTree(t, 1, 2)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.createPartitionState("orders", 0, PartitionStateZNode{ControllerEpoch: 1, Leader: 1, ISR: []int32{1, 2}})
	tp := TopicPartition{"orders", 0}
	shrink := LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}
	if v, applied, err := ReconcileIsr(h.admin, tp, shrink, 0); err != nil || applied || v != 0 {
		t.Fatalf("before the write: %d %v %v", v, applied, err)
	}
	if _, err := UpdateIsr(h.admin, tp, shrink, 0); err != nil {
		t.Fatal(err)
	}
	if v, applied, err := ReconcileIsr(h.admin, tp, shrink, 0); err != nil || !applied || v != 1 {
		t.Fatalf("after the write: %d %v %v", v, applied, err)
	}
	other := LeaderAndIsr{Leader: 1, ISR: []int32{1, 2}, LeaderEpoch: 1, ControllerEpoch: 1}
	if _, applied, err := ReconcileIsr(h.admin, tp, other, 0); applied || !errors.Is(err, ErrIsrVersionConflict) {
		t.Fatalf("another state: %v %v", applied, err)
	}
}
