package zkbroker

import (
	"testing"
	"time"

	"github.com/kbroker/kbroker/kafkazk"
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
	p.record(kafkazk.TopicPartition{Topic: "a", Partition: 0}, at(1000))
	if got := p.due(at(5000)); got != nil {
		t.Errorf("at 5000 (4 s after the change): %v", got)
	}
	if got := p.due(at(6000)); got != nil {
		t.Errorf("at exactly 5 s after the change: %v (the comparison is strict)", got)
	}
	got := p.due(at(7500))
	if len(got) != 1 || got[0] != (kafkazk.TopicPartition{Topic: "a", Partition: 0}) {
		t.Fatalf("at 7500: %v", got)
	}
	if again := p.due(at(10000)); again != nil {
		t.Errorf("announced twice: %v", again)
	}
	// Churn: a change every 2.5 s from 10 s on. The linger never passes,
	// so the announcement waits for 60 s since the last one (at 7.5 s).
	var announcedAt int
	for ms := 10000; ms <= 80000; ms += 2500 {
		p.record(kafkazk.TopicPartition{Topic: "b", Partition: int32(ms % 7)}, at(ms))
		if got := p.due(at(ms)); got != nil {
			announcedAt = ms
			break
		}
	}
	if announcedAt != 70000 {
		t.Errorf("under churn announced at %d ms, want 70000 (first tick > 7500+60000)", announcedAt)
	}
}
