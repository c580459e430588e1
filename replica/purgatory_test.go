package replica

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// DelayedProduce completion (DelayedProduce.tryComplete): HW >= required
// offset with enough replicas → NONE; HW passed but the ISR shrank below min
// → NOT_ENOUGH_REPLICAS_AFTER_APPEND; leadership lost →
// NOT_LEADER_OR_FOLLOWER; deadline → REQUEST_TIMED_OUT.
func TestDelayedProduceCompletion(t *testing.T) {
	tp := TopicPartition{"t", 0}

	t.Run("completesWhenHighWatermarkReachesRequiredOffset", func(t *testing.T) {
		s := newLeader(t, 2, 0)
		appendTo(t, s, 5, 1) // the produce's records are [0, 5)
		d := &DelayedProduce{Deadline: ms(30_000), Partitions: []DelayedProducePartition{{TopicPartition: tp, RequiredOffset: 5}}}
		state := func(int) ProduceWaitState { return s.ProduceWaitState() }
		if d.TryComplete(state, ms(2)) {
			t.Fatal("completed before replication")
		}
		fetch(t, s, 2, 5, 3)
		if d.TryComplete(state, ms(3)) {
			t.Fatal("completed with one ISR follower behind")
		}
		fetch(t, s, 3, 5, 4)
		if !d.TryComplete(state, ms(4)) || d.Partitions[0].Outcome.Err != nil {
			t.Fatalf("outcome %+v", d.Partitions[0].Outcome)
		}
	})
	t.Run("notEnoughReplicasAfterAppend", func(t *testing.T) {
		s := newLeader(t, 2, 0)
		appendTo(t, s, 5, 1)
		fetch(t, s, 2, 5, 2)
		// 3 is stuck: the ISR shrinks to {1, 2}, still at min 2 → NONE.
		c := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 1))
		s.CompleteIsrChange(*c, 8, ms(lag.Milliseconds()+1))
		if o := CheckDelayedProduce(s.ProduceWaitState(), 5, ms(lag.Milliseconds()+2), ms(60_000)); !o.Done || o.Err != nil {
			t.Fatalf("outcome %+v, want NONE", o)
		}
		// A second produce: HW reaches it via ISR {1,2}, then 2 drops too.
		appendTo(t, s, 8, lag.Milliseconds()+3)
		fetch(t, s, 2, 8, lag.Milliseconds()+4)
		appendTo(t, s, 9, lag.Milliseconds()+5) // 2 never fetches again
		c = s.MaybeShrinkIsr(ms(3*lag.Milliseconds() + 10))
		s.CompleteIsrChange(*c, 9, ms(3*lag.Milliseconds()+10))
		o := CheckDelayedProduce(s.ProduceWaitState(), 8, ms(3*lag.Milliseconds()+11), ms(4*lag.Milliseconds()))
		if !o.Done || !errors.Is(o.Err, kerr.NotEnoughReplicasAfterAppend) {
			t.Fatalf("outcome %+v, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", o)
		}
	})
	t.Run("timesOutAtDeadline", func(t *testing.T) {
		s := newLeader(t, 1, 0)
		appendTo(t, s, 5, 1)
		state := func(int) ProduceWaitState { return s.ProduceWaitState() }
		d := &DelayedProduce{Deadline: ms(1000), Partitions: []DelayedProducePartition{{TopicPartition: tp, RequiredOffset: 5}}}
		if d.TryComplete(state, ms(999)) {
			t.Fatal("completed before the deadline")
		}
		if !d.TryComplete(state, ms(1000)) || !errors.Is(d.Partitions[0].Outcome.Err, kerr.RequestTimedOut) {
			t.Fatalf("outcome %+v, want REQUEST_TIMED_OUT", d.Partitions[0].Outcome)
		}
	})
	t.Run("leadershipLost", func(t *testing.T) {
		s := newLeader(t, 1, 0)
		appendTo(t, s, 5, 1)
		s.Resign()
		o := CheckDelayedProduce(s.ProduceWaitState(), 5, ms(2), ms(1000))
		if !o.Done || !errors.Is(o.Err, kerr.NotLeaderForPartition) {
			t.Fatalf("outcome %+v", o)
		}
		o = CheckDelayedProduce(ProduceWaitState{NotHosted: true, Err: kerr.UnknownTopicOrPartition}, 5, ms(2), ms(1000))
		if !o.Done || !errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
			t.Fatalf("outcome %+v", o)
		}
	})
	t.Run("partitionsCompleteIndependently", func(t *testing.T) {
		a, b := newLeader(t, 1, 0), newLeader(t, 1, 0)
		appendTo(t, a, 3, 1)
		appendTo(t, b, 4, 1)
		tpB := TopicPartition{"t", 1}
		d := &DelayedProduce{Deadline: ms(5000), Partitions: []DelayedProducePartition{{TopicPartition: tp, RequiredOffset: 3}, {TopicPartition: tpB, RequiredOffset: 4}}}
		state := func(i int) ProduceWaitState {
			if d.Partitions[i].TopicPartition == tp {
				return a.ProduceWaitState()
			}
			return b.ProduceWaitState()
		}
		fetch(t, a, 2, 3, 2)
		fetch(t, a, 3, 3, 2)
		if d.TryComplete(state, ms(3)) || !d.Partitions[0].Outcome.Done || d.Partitions[1].Outcome.Done {
			t.Fatalf("after a: %+v", d.Partitions)
		}
		if !d.TryComplete(state, ms(5000)) || d.Partitions[0].Outcome.Err != nil || !errors.Is(d.Partitions[1].Outcome.Err, kerr.RequestTimedOut) {
			t.Fatalf("at deadline: %+v", d.Partitions)
		}
	})
}

// CheckProduceBeforeAppend: the min ISR gate applies to acks=-1 only.
func TestNotEnoughReplicasBeforeAppend(t *testing.T) {
	s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 2}, 0, 0)
	s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 0, Isr: []int32{1}, Replicas: []int32{1, 2, 3}}, 0, ms(0))
	if err := s.CheckProduceBeforeAppend(-1); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=-1: %v", err)
	}
	for _, acks := range []int16{0, 1} {
		if err := s.CheckProduceBeforeAppend(acks); err != nil {
			t.Fatalf("acks=%d: %v", acks, err)
		}
	}
	if err := s.CheckProduceBeforeAppend(-2); !errors.Is(err, kerr.InvalidRequiredAcks) {
		t.Fatalf("acks=-2: %v", err)
	}
}

// DelayedFetch completion cases (Kafka's DelayedFetchTest).
func TestDelayedFetchCompletion(t *testing.T) {
	tp := TopicPartition{"t", 0}
	leaderCache := cacheOf(0, 0, 2, 10)
	base := FetchWaitState{EndOffset: 20, LogEndOffset: 20, Cache: leaderCache}
	cases := []struct {
		name string
		req  FetchWaitPartition
		st   FetchWaitState
		now  int64
		want FetchWaitReason
	}{
		{"nothingNewWaits", FetchWaitPartition{tp, 20, 1 << 20, 2}, base, 10, FetchWaiting},
		{"testNotLeaderOrFollower", FetchWaitPartition{tp, 20, 1 << 20, 2}, FetchWaitState{Gone: true}, 10, FetchPartitionGone},
		{"testFetchWithFencedEpoch", FetchWaitPartition{tp, 20, 1 << 20, 2}, FetchWaitState{Gone: true, EndOffset: 20}, 10, FetchPartitionGone},
		{"leaderTruncatedBelowFetchOffset", FetchWaitPartition{tp, 25, 1 << 20, -1}, base, 10, FetchTruncatedOrBehind},
		{"fetchOnOlderSegment", FetchWaitPartition{tp, 15, 1 << 20, -1}, FetchWaitState{EndOffset: 20, EndOnNewerSegment: true}, 10, FetchTruncatedOrBehind},
		{"bytesBelowMinBytesWait", FetchWaitPartition{tp, 15, 1 << 20, -1}, FetchWaitState{EndOffset: 20, BytesAvailable: 99}, 10, FetchWaiting},
		{"minBytesReached", FetchWaitPartition{tp, 15, 1 << 20, -1}, FetchWaitState{EndOffset: 20, BytesAvailable: 100}, 10, FetchMinBytes},
		{"bytesCappedAtPartitionMaxBytes", FetchWaitPartition{tp, 15, 50, -1}, FetchWaitState{EndOffset: 20, BytesAvailable: 500}, 10, FetchWaiting},
		{"testDivergingEpoch", FetchWaitPartition{tp, 20, 1 << 20, 1}, base, 10, FetchDiverged},
		{"unknownLastFetchedEpoch", FetchWaitPartition{tp, 20, 1 << 20, 3}, base, 10, FetchDiverged},
		{"timeout", FetchWaitPartition{tp, 20, 1 << 20, 2}, base, 500, FetchTimedOut},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &DelayedFetch{MinBytes: 100, Deadline: ms(500), Partitions: []FetchWaitPartition{tc.req}}
			got := d.TryComplete(func(int) FetchWaitState { return tc.st }, ms(tc.now))
			if got != tc.want {
				t.Fatalf("TryComplete = %d, want %d", got, tc.want)
			}
		})
	}
}

// testDelayedFetchWithMessageOnlyHighWatermark: a consumer fetch parked at
// the HW wakes when the HW moves (its end offset is the HW), not when the
// leader's LEO does.
func TestDelayedFetchWakesOnHighWatermark(t *testing.T) {
	tp := TopicPartition{"t", 0}
	s := newLeader(t, 1, 10)
	fetch(t, s, 2, 10, 1)
	fetch(t, s, 3, 10, 1)
	wantHW(t, s, 10)
	d := &DelayedFetch{MinBytes: 1, Deadline: ms(500), Partitions: []FetchWaitPartition{{tp, 10, 1 << 20, -1}}}
	// Bytes on the segment between the fetch offset and the end offset:
	// 100 bytes per offset in this test.
	state := func(int) FetchWaitState {
		return FetchWaitState{EndOffset: s.HighWatermark(), BytesAvailable: 100 * (s.HighWatermark() - 10)}
	}
	appendTo(t, s, 12, 2)
	if got := d.TryComplete(state, ms(3)); got != FetchWaiting {
		t.Fatalf("woke before the HW moved: %d", got)
	}
	fetch(t, s, 2, 12, 4)
	fetch(t, s, 3, 12, 5)
	if got := d.TryComplete(state, ms(6)); got != FetchMinBytes {
		t.Fatalf("did not wake on HW: %d", got)
	}
}
