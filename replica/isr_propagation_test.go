package replica

import (
	"slices"
	"testing"
)

// The isr-change-propagation rule (ReplicaManager.maybePropagateIsrChanges
// with ZkAlterPartitionManager's constants): run every 2500 ms from start-up;
// announce when the set is non-empty and the last change is more than 5 s old
// or the last announcement more than 60 s old, comparisons strict, timers
// starting at the broker's start.
func TestIsrChangePropagation(t *testing.T) {
	tpA := TopicPartition{"a", 0}
	tpB := TopicPartition{"b", 1}
	tpA1 := TopicPartition{"a", 1}

	t.Run("isolatedChangeAnnouncedAfterFiveSeconds", func(t *testing.T) {
		p := NewIsrChangePropagation(ms(0))
		if p.Due(ms(0)) != nil {
			t.Fatal("empty set announced")
		}
		p.Record(tpA, ms(1000))
		var got []TopicPartition
		var at int64
		for tick := int64(0); tick <= 20_000 && got == nil; tick += IsrChangePropagationInterval.Milliseconds() {
			got, at = p.Due(ms(tick)), tick
		}
		// Strictly more than 5 s after 1000: the tick at 7500 (6000 is not
		// a tick; 5000 is too early).
		if at != 7500 || !slices.Equal(got, []TopicPartition{tpA}) {
			t.Fatalf("announced %v at %d, want [a-0] at 7500", got, at)
		}
		if p.Pending() != 0 || p.Due(ms(10_000)) != nil {
			t.Fatal("set not cleared")
		}
	})
	t.Run("strictComparisons", func(t *testing.T) {
		p := NewIsrChangePropagation(ms(0))
		p.Record(tpA, ms(1000))
		if p.Due(ms(6000)) != nil {
			t.Fatal("announced exactly 5 s after the change")
		}
		if got := p.Due(ms(6001)); !slices.Equal(got, []TopicPartition{tpA}) {
			t.Fatalf("Due(6001) = %v", got)
		}
	})
	t.Run("steadyChurnAnnouncedAboutOnceAMinute", func(t *testing.T) {
		p := NewIsrChangePropagation(ms(0))
		var announcements []int64
		for tick := int64(0); tick <= 130_000; tick += IsrChangePropagationInterval.Milliseconds() {
			// A change every 2.5 s: never 5 s of quiet.
			p.Record(TopicPartition{"t", int32(tick / 2500 % 3)}, ms(tick))
			if got := p.Due(ms(tick)); got != nil {
				announcements = append(announcements, tick)
			}
		}
		// Last announcement at start (0): first due strictly after 60 s,
		// at the 62500 tick; then 60 s after that, at 125000.
		if !slices.Equal(announcements, []int64{62_500, 125_000}) {
			t.Fatalf("announcements at %v, want [62500 125000]", announcements)
		}
	})
	t.Run("oneNodeHoldsTheWholeSetSorted", func(t *testing.T) {
		p := NewIsrChangePropagation(ms(0))
		p.Record(tpB, ms(100))
		p.Record(tpA1, ms(200))
		p.Record(tpA, ms(300))
		p.Record(tpA, ms(400))
		got := p.Due(ms(5401))
		if !slices.Equal(got, []TopicPartition{tpA, tpA1, tpB}) {
			t.Fatalf("Due = %v", got)
		}
	})
	t.Run("timersStartAtBrokerStart", func(t *testing.T) {
		// Started at 100 s: a change at 100.5 s is not "60 s since the last
		// notification" (which would hold if that timer started at zero).
		p := NewIsrChangePropagation(ms(100_000))
		p.Record(tpA, ms(100_500))
		if p.Due(ms(102_500)) != nil {
			t.Fatal("announced 2 s after the change")
		}
	})
}
