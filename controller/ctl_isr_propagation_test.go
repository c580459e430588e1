package controller

import (
	"errors"
	"testing"
	"time"
)

// ZkAlterPartitionManager's propagation timing: an isolated change is
// announced once the 5 s linger has passed (strictly); under constant churn,
// once a minute.
func TestIsrChangePropagationTiming(t *testing.T) {
	t0 := time.Unix(1732000000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	p := newIsrChangePropagator(t0)
	if got := p.due(at(2500)); got != nil {
		t.Fatalf("nothing pending, got %v", got)
	}
	p.record(topicPartition{"a", 0}, at(1000))
	if got := p.due(at(5000)); got != nil {
		t.Errorf("at 5000 (4 s after the change): %v", got)
	}
	if got := p.due(at(6000)); got != nil {
		t.Errorf("at exactly 5 s after the change: %v (the comparison is strict)", got)
	}
	got := p.due(at(7500))
	if len(got) != 1 || got[0] != (topicPartition{"a", 0}) {
		t.Fatalf("at 7500: %v", got)
	}
	if again := p.due(at(10000)); again != nil {
		t.Errorf("announced twice: %v", again)
	}
	// Churn: a change every 2.5 s from 10 s on. The linger never passes,
	// so the announcement waits for 60 s since the last one (at 7.5 s).
	var announcedAt int
	for ms := 10000; ms <= 80000; ms += 2500 {
		p.record(topicPartition{"b", int32(ms % 7)}, at(ms))
		if got := p.due(at(ms)); got != nil {
			announcedAt = ms
			break
		}
	}
	if announcedAt != 70000 {
		t.Errorf("under churn announced at %d ms, want 70000 (first tick > 7500+60000)", announcedAt)
	}
}

func TestIsrChangeNotificationPayload(t *testing.T) {
	h := newCtlHarness(t)
	if err := writeIsrChangeNotification(h.admin, []topicPartition{{"topic-a", 0}, {"topic-b", 0}}); err != nil {
		t.Fatal(err)
	}
	data, _, err := h.admin.Get(isrChangeNotificationPath + "/isr_change_0000000000")
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
	h := newCtlHarness(t, 1, 2)
	h.becomeController(1)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.run()
	tp := topicPartition{"orders", 0}
	shrink := LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, ControllerEpoch: 1}
	v, err := updateIsr(h.admin, tp, shrink, 0)
	if err != nil || v != 1 {
		t.Fatalf("shrink: %d %v", v, err)
	}
	if got := h.rawState("orders", 0); got != `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}` {
		t.Errorf("state %s", got)
	}
	if v, err := updateIsr(h.admin, tp, shrink, 0); err != nil || v != 1 {
		t.Errorf("retried identical write: %d %v", v, err)
	}
	expand := LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}, ControllerEpoch: 1}
	if _, err := updateIsr(h.admin, tp, expand, 0); !errors.Is(err, ErrIsrVersionConflict) {
		t.Errorf("stale version: %v", err)
	}
	if _, err := updateIsr(h.admin, tp, LeaderAndIsr{Leader: 1, ControllerEpoch: 1}, 1); err == nil {
		t.Error("empty ISR written")
	}
}
