package replica

import (
	"testing"
)

func wantHW(t *testing.T, s *LeaderState, hw int64) {
	t.Helper()
	if s.HighWatermark() != hw {
		t.Fatalf("HW = %d, want %d", s.HighWatermark(), hw)
	}
}

// The HW is the smallest LEO over the ISR, and moves only forward.
func TestHighWatermarkIsMinLogEndOffsetOverIsr(t *testing.T) {
	s := newLeader(t, 1, 0)
	appendTo(t, s, 10, 1)
	wantHW(t, s, 0) // ISR followers have not fetched in this leadership
	fetch(t, s, 2, 10, 2)
	wantHW(t, s, 0)
	if r := fetch(t, s, 3, 7, 3); !r.HighWatermarkMoved {
		t.Fatal("HW move not reported")
	}
	wantHW(t, s, 7)
	fetch(t, s, 3, 10, 4)
	wantHW(t, s, 10)
}

// The HW never goes back on a leader, even when a follower's LEO does
// (a follower that truncated and fetches from lower down).
func TestHighWatermarkDoesNotGoBackwards(t *testing.T) {
	s := newLeader(t, 1, 0)
	appendTo(t, s, 10, 1)
	fetch(t, s, 2, 10, 2)
	fetch(t, s, 3, 10, 3)
	wantHW(t, s, 10)
	if r := fetch(t, s, 3, 4, 4); r.HighWatermarkMoved {
		t.Fatal("HW reported moved")
	}
	wantHW(t, s, 10) // fetch() also checked non-regression
	appendTo(t, s, 12, 5)
	fetch(t, s, 2, 12, 6)
	wantHW(t, s, 10)
}

// PartitionTest.testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR
// (KAFKA-15583, 3.7+): acks=1 writes stay invisible while the ISR is below
// min.insync.replicas.
func TestHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR(t *testing.T) {
	s := newLeader(t, 2, 0)
	fetch(t, s, 2, 0, 1)
	fetch(t, s, 3, 0, 1)
	c := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 10)) // nobody has data to be behind on
	if c != nil {
		t.Fatalf("unexpected shrink %v", c.Changed)
	}
	appendTo(t, s, 5, 20)
	c = s.MaybeShrinkIsr(ms(2*lag.Milliseconds() + 10))
	if c == nil {
		t.Fatal("no shrink")
	}
	s.CompleteIsrChange(*c, 8, ms(2*lag.Milliseconds()+11))
	if !s.IsUnderMinIsr() || len(s.Isr()) != 1 {
		t.Fatalf("ISR %v under min %v", s.Isr(), s.IsUnderMinIsr())
	}
	appendTo(t, s, 9, 2*lag.Milliseconds()+12)
	wantHW(t, s, 0)
	// Follower 2 catches up and rejoins: HW may move again.
	r := fetch(t, s, 2, 9, 2*lag.Milliseconds()+13)
	if r.IsrExpansion == nil {
		t.Fatal("no expansion")
	}
	wantHW(t, s, 0) // pending, committed ISR still under min
	_, moved := s.CompleteIsrChange(*r.IsrExpansion, 9, ms(2*lag.Milliseconds()+14))
	if !moved {
		t.Fatal("HW did not move after the expansion committed")
	}
	wantHW(t, s, 9)
}

// maybeIncrementLeaderHW: a follower outside the ISR that caught up within
// the lag time holds the HW back, so that it can reach it and rejoin; without
// this a follower chasing a fast leader never satisfies LEO >= HW.
func TestCaughtUpFollowerOutsideIsrHoldsHighWatermark(t *testing.T) {
	s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1}, 0, 0)
	s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 1, Isr: []int32{1}, PartitionEpoch: 1, Replicas: []int32{1, 2}}, 0, ms(0))
	appendTo(t, s, 10, 1)
	wantHW(t, s, 10) // 2 is outside the ISR and was never caught up
	fetch(t, s, 2, 0, 2)
	wantHW(t, s, 10)
	appendTo(t, s, 20, 3)
	wantHW(t, s, 20)
	// 10 reaches the leader's LEO as of the previous fetch: caught up as
	// of 2 ms, but below the HW, so not added.
	if r := fetch(t, s, 2, 10, 4); r.IsrExpansion != nil {
		t.Fatal("expanded below the HW")
	}
	appendTo(t, s, 30, 5)
	wantHW(t, s, 20) // held: 2 is caught up and behind
	appendTo(t, s, 31, lag.Milliseconds()+2)
	wantHW(t, s, 20) // exactly the lag time: still caught up
	appendTo(t, s, 32, lag.Milliseconds()+3)
	wantHW(t, s, 32) // no longer caught up: no longer waited for
}

// PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower:
// a caught-up follower whose broker is not alive is not waited for.
func TestHighWatermarkIncreasesWithFencedOrShutdownFollower(t *testing.T) {
	s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1}, 0, 0)
	s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 1, Isr: []int32{1}, PartitionEpoch: 1, Replicas: []int32{1, 2}}, 0, ms(0))
	s.SetBrokerAlive(2, false)
	fetch(t, s, 2, 0, 1) // caught up, not eligible, not added
	appendTo(t, s, 10, 2)
	wantHW(t, s, 10)
}

// makeLeader: on election the HW waits for ISR members whose LEO is unknown,
// and a new leader's HW may be below the old leader's until they fetch.
func TestNewLeaderWaitsForIsrFollowers(t *testing.T) {
	s := NewLeaderState(2, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1}, 4, 10)
	res := s.BecomeLeader(LeaderAndIsr{Leader: 2, LeaderEpoch: 3, Isr: []int32{2, 1}, PartitionEpoch: 4, Replicas: []int32{1, 2}}, 10, ms(0))
	if res.HighWatermarkMoved {
		t.Fatal("HW moved at election with an unknown ISR follower")
	}
	wantHW(t, s, 4)
	fetch(t, s, 1, 8, 1)
	wantHW(t, s, 8)
}

// testDoNotResetReplicaStateIfLeaderEpochIsNotBumped: a LeaderAndIsr with
// the same (or older) epoch changes nothing; a bumped one on the same
// leader keeps follower LEOs.
func TestLeaderAndIsrEpochRules(t *testing.T) {
	s := newLeader(t, 1, 10)
	fetch(t, s, 2, 10, 1)
	if res := s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 5, Isr: []int32{1}, PartitionEpoch: 9, Replicas: []int32{1, 2, 3}}, 10, ms(2)); res.Applied {
		t.Fatal("same leader epoch applied")
	}
	if res := s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 6, Isr: []int32{1, 2}, PartitionEpoch: 6, Replicas: []int32{1, 2, 3}}, 10, ms(2)); res.Applied {
		t.Fatal("older partition epoch applied")
	}
	res := s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 6, Isr: []int32{1, 2}, PartitionEpoch: 8, Replicas: []int32{1, 2, 3}}, 12, ms(3))
	if !res.Applied || res.EpochStartOffset != 12 {
		t.Fatalf("re-election = %+v", res)
	}
	f2, _ := s.Follower(2)
	if f2.LogEndOffset != 10 || f2.LastFetchLeaderLogEndOffset != 12 || !f2.LastFetchTime.Equal(ms(3)) || !f2.LastCaughtUpTime.Equal(ms(3)) {
		t.Fatalf("re-elected follower in ISR = %+v", f2)
	}
	f3, _ := s.Follower(3)
	if !f3.LastCaughtUpTime.IsZero() || !f3.LastFetchTime.IsZero() {
		t.Fatalf("re-elected follower outside ISR = %+v", f3)
	}
}

// testAtMinIsr, testIsUnderMinIsr, testUnderReplicatedPartitionsCorrectSemantics,
// and the 3.7+ cap of min.insync.replicas at the replication factor.
func TestMinIsrSemantics(t *testing.T) {
	s := newLeader(t, 2, 0)
	if s.IsUnderMinIsr() || s.IsAtMinIsr() || s.IsUnderReplicated() {
		t.Fatal("full ISR misreported")
	}
	// Followers that never fetch in this leadership go after the lag time
	// (they were caught up at election, being in the ISR).
	s2 := newLeader(t, 2, 5)
	c := s2.MaybeShrinkIsr(ms(lag.Milliseconds() + 1))
	s2.CompleteIsrChange(*c, 8, ms(lag.Milliseconds()+1))
	if !s2.IsUnderMinIsr() || !s2.IsUnderReplicated() {
		t.Fatal("ISR {1} with min 2 not under min")
	}
	if err := s2.CheckProduceBeforeAppend(-1); err == nil {
		t.Fatal("acks=-1 accepted under min ISR")
	}
	if err := s2.CheckProduceBeforeAppend(1); err != nil {
		t.Fatalf("acks=1 refused: %v", err)
	}
	if err := s2.CheckProduceBeforeAppend(2); err == nil {
		t.Fatal("acks=2 accepted")
	}
	// min.insync.replicas=3 on a 2-replica partition is capped at 2.
	s3 := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 3}, 0, 0)
	s3.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 0, Isr: []int32{1, 2}, Replicas: []int32{1, 2}}, 0, ms(0))
	if s3.EffectiveMinIsr() != 2 || !s3.IsAtMinIsr() || s3.CheckProduceBeforeAppend(-1) != nil {
		t.Fatalf("effective min ISR %d", s3.EffectiveMinIsr())
	}
}
