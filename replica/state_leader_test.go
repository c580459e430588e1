package replica

import (
	"errors"
	"slices"
	"testing"
	"time"
)

const lag = 10 * time.Second

// newLeader makes broker 1 leader of replicas [1 2 3] in epoch 5 over a log
// with LEO leo, all in the ISR, at time 0.
func newLeader(t *testing.T, minIsr int, leo int64) *LeaderState {
	t.Helper()
	s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: minIsr}, 0, leo)
	res := s.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2, 3}, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}}, leo, ms(0))
	if !res.Applied {
		t.Fatal("BecomeLeader not applied")
	}
	return s
}

func fetch(t *testing.T, s *LeaderState, id int32, offset int64, at int64) FollowerFetchResult {
	t.Helper()
	prev := s.HighWatermark()
	res, err := s.UpdateFollowerFetch(id, offset, 0, ms(at), s.LogEndOffset())
	if err != nil {
		t.Fatalf("UpdateFollowerFetch(%d, %d): %v", id, offset, err)
	}
	checkLeaderInvariants(t, s, prev)
	return res
}

func appendTo(t *testing.T, s *LeaderState, leo int64, at int64) bool {
	t.Helper()
	prev := s.HighWatermark()
	moved := s.AppendedAsLeader(leo, ms(at))
	checkLeaderInvariants(t, s, prev)
	return moved
}

// ReplicaTest.testUpdateFetchState / PartitionTest.testUpdateFollowerFetchState.
func TestUpdateFollowerFetchState(t *testing.T) {
	s := newLeader(t, 1, 10)
	fetch(t, s, 2, 10, 100)
	f, _ := s.Follower(2)
	want := FollowerProgress{LogStartOffset: 0, LogEndOffset: 10, LastFetchLeaderLogEndOffset: 10, LastFetchTime: ms(100), LastCaughtUpTime: ms(100)}
	if f != want {
		t.Fatalf("follower = %+v, want %+v", f, want)
	}
}

// The three rules of Replica.updateFetchStateOrThrow for lastCaughtUpTime,
// one step at a time.
func TestLastCaughtUpTimeRules(t *testing.T) {
	s := newLeader(t, 1, 0)
	caughtUp := func(want int64) {
		t.Helper()
		f, _ := s.Follower(2)
		if !f.LastCaughtUpTime.Equal(ms(want)) {
			t.Fatalf("lastCaughtUpTime = %v, want ms(%d)", f.LastCaughtUpTime.Sub(ms(0)), want)
		}
	}
	appendTo(t, s, 10, 50)
	fetch(t, s, 2, 10, 100) // reaches the LEO as of this fetch
	caughtUp(100)
	appendTo(t, s, 20, 150)
	fetch(t, s, 2, 15, 200) // behind the LEO now and the LEO of the previous fetch (10)? 15 >= 10: caught up as of the previous fetch
	caughtUp(100)
	appendTo(t, s, 30, 250)
	fetch(t, s, 2, 20, 300) // 20 >= LEO at previous fetch (20): caught up as of that fetch, at 200
	caughtUp(200)
	fetch(t, s, 2, 25, 400) // 25 < 30 (previous fetch's LEO) and < 30 now: unchanged
	caughtUp(200)
	fetch(t, s, 2, 30, 500)
	caughtUp(500)
}

// PartitionTest.testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp: a follower
// that always reaches the LEO the leader had at its previous fetch stays in
// the ISR though new records keep arriving between fetches.
func TestShouldNotShrinkIsrIfPreviousFetchIsCaughtUp(t *testing.T) {
	s := newLeader(t, 1, 0)
	leo := int64(0)
	for at := int64(0); at <= 60_000; at += 500 {
		prevLeo := leo
		leo += 5
		appendTo(t, s, leo, at)
		fetch(t, s, 2, prevLeo, at+1) // always one batch behind
		fetch(t, s, 3, leo, at+2)
		if c := s.MaybeShrinkIsr(ms(at + 3)); c != nil {
			t.Fatalf("at %d: shrink %v", at, c.Changed)
		}
	}
}

// IsrExpirationTest.testIsrExpirationForSlowFollowers and the
// lastCaughtUpTime rule: a follower fetching constantly but slower than the
// inflow never reaches the leader's LEO as of this or its previous fetch, so
// it is dropped once the lag time passes, while a fast follower stays.
func TestSlowFollowerFallsOutOfIsr(t *testing.T) {
	s := newLeader(t, 1, 0)
	leo, slow := int64(0), int64(0)
	var dropped []int32
	var droppedAt int64
	for at := int64(100); at <= 30_000 && dropped == nil; at += 100 {
		leo += 10
		appendTo(t, s, leo, at)
		slow += 6 // fetches every 100 ms, gets 6 records of the 10 produced
		fetch(t, s, 2, slow, at+10)
		fetch(t, s, 3, leo, at+20)
		if c := s.MaybeShrinkIsr(ms(at + 50)); c != nil {
			dropped, droppedAt = c.Changed, at+50
		}
	}
	if !slices.Equal(dropped, []int32{2}) {
		t.Fatalf("dropped %v, want [2]", dropped)
	}
	// Its second fetch (12 at 210) reached the LEO of its first fetch (10
	// at 110), so it was last caught up at 110 and never again: out at the
	// first check more than the lag after that, and not before.
	f, _ := s.Follower(2)
	if !f.LastCaughtUpTime.Equal(ms(110)) {
		t.Fatalf("lastCaughtUpTime = %v, want ms(110)", f.LastCaughtUpTime.Sub(ms(0)))
	}
	if droppedAt <= 110+lag.Milliseconds() || droppedAt > 210+lag.Milliseconds() {
		t.Fatalf("dropped at %d ms, want the first check after %d", droppedAt, 110+lag.Milliseconds())
	}
}

// IsrExpirationTest: stuck followers (no fetch at all, or fetching without
// progress) go after the lag time; caught-up ones never.
func TestIsrExpiration(t *testing.T) {
	t.Run("testIsrExpirationForStuckFollowers", func(t *testing.T) {
		s := newLeader(t, 1, 10)
		fetch(t, s, 2, 10, 0)
		fetch(t, s, 3, 10, 0)
		appendTo(t, s, 15, 1)
		if c := s.MaybeShrinkIsr(ms(lag.Milliseconds())); c != nil {
			t.Fatalf("shrunk at exactly the lag time: %v", c.Changed)
		}
		fetch(t, s, 3, 15, lag.Milliseconds()) // 3 catches up, 2 stuck at 10
		c := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 1))
		if c == nil || !slices.Equal(c.Changed, []int32{2}) || !slices.Equal(c.Isr, []int32{1, 3}) {
			t.Fatalf("shrink = %+v, want drop 2", c)
		}
	})
	t.Run("testIsrExpirationIfNoFetchRequestMade", func(t *testing.T) {
		s := newLeader(t, 1, 10)
		appendTo(t, s, 12, 1)
		c := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 1))
		if c == nil || !slices.Equal(c.Changed, []int32{2, 3}) || !slices.Equal(c.Isr, []int32{1}) {
			t.Fatalf("shrink = %+v, want [1]", c)
		}
	})
	t.Run("testIsrExpirationForCaughtUpFollowers", func(t *testing.T) {
		s := newLeader(t, 1, 10)
		for at := int64(0); at < 5*lag.Milliseconds(); at += 1000 {
			fetch(t, s, 2, 10, at)
			fetch(t, s, 3, 10, at)
			if c := s.MaybeShrinkIsr(ms(at + 500)); c != nil {
				t.Fatalf("shrunk caught-up followers: %v", c.Changed)
			}
		}
	})
	t.Run("testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd", func(t *testing.T) {
		// Follower LEO equal to the leader's LEO is never out of sync,
		// however long ago it last fetched.
		s := newLeader(t, 1, 10)
		fetch(t, s, 2, 10, 0)
		fetch(t, s, 3, 10, 0)
		if c := s.MaybeShrinkIsr(ms(100 * lag.Milliseconds())); c != nil {
			t.Fatalf("shrunk: %v", c.Changed)
		}
	})
}

// PartitionTest.testMaybeShrinkIsr, testIsrNotShrunkIfUpdateFails,
// testRetryShrinkIsr: the committed ISR changes only when the write
// succeeds; a failed write blocks further changes until LeaderAndIsr.
func TestShrinkCommitAndFailure(t *testing.T) {
	t.Run("testMaybeShrinkIsr", func(t *testing.T) {
		s := newLeader(t, 1, 10)
		fetch(t, s, 2, 10, 0)
		appendTo(t, s, 20, 1)
		fetch(t, s, 2, 20, 2)
		// 3 never fetched in this leadership: its LEO is unknown and it is
		// in the ISR, so the HW cannot move.
		if s.HighWatermark() != 0 {
			t.Fatalf("HW = %d with ISR member 3 unknown", s.HighWatermark())
		}
		c := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 1))
		if c == nil || !slices.Equal(c.Changed, []int32{3}) {
			t.Fatalf("shrink = %+v", c)
		}
		if got := s.MaximalIsr(); !slices.Equal(got, []int32{1, 2, 3}) {
			t.Fatalf("maximal ISR during a pending shrink = %v, want the old ISR", got)
		}
		if s.MaybeShrinkIsr(ms(lag.Milliseconds()+2)) != nil {
			t.Fatal("second change proposed while one is in flight")
		}
		applied, moved := s.CompleteIsrChange(*c, 8, ms(lag.Milliseconds()+3))
		if !applied || !moved || s.HighWatermark() != 20 {
			t.Fatalf("complete: applied %v moved %v HW %d, want HW 20", applied, moved, s.HighWatermark())
		}
		if !slices.Equal(s.Isr(), []int32{1, 2}) || s.PartitionEpoch() != 8 || s.LeaderEpoch() != 5 {
			t.Fatalf("after commit ISR %v partition epoch %d leader epoch %d", s.Isr(), s.PartitionEpoch(), s.LeaderEpoch())
		}
	})
	t.Run("testIsrNotShrunkIfUpdateFails", func(t *testing.T) {
		s := newLeader(t, 1, 10)
		c := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 1))
		if c == nil || c.PartitionEpoch != 7 || c.ControllerEpoch != 3 || c.LeaderEpoch != 5 {
			t.Fatalf("shrink = %+v, want conditional on version 7 with epochs 3/5", c)
		}
		if !s.FailIsrChange(*c) {
			t.Fatal("FailIsrChange refused the pending change")
		}
		if !slices.Equal(s.Isr(), []int32{1, 2, 3}) || s.PartitionEpoch() != 7 || !s.IsrUpdateBlocked() {
			t.Fatalf("after failure ISR %v version %d blocked %v", s.Isr(), s.PartitionEpoch(), s.IsrUpdateBlocked())
		}
		// 3.9 attempts nothing more until the controller speaks.
		if s.MaybeShrinkIsr(ms(lag.Milliseconds()*3)) != nil {
			t.Fatal("shrink proposed while blocked")
		}
		if applied, _ := s.CompleteIsrChange(*c, 8, ms(0)); applied {
			t.Fatal("a failed change was applied later")
		}
		// The controller's LeaderAndIsr (new epoch, new version) unblocks.
		res := s.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 6, Isr: []int32{1, 2}, PartitionEpoch: 9, Replicas: []int32{1, 2, 3}}, 10, ms(lag.Milliseconds()*3))
		if !res.Applied || s.IsrUpdateBlocked() || !slices.Equal(s.Isr(), []int32{1, 2}) {
			t.Fatalf("LeaderAndIsr after failure: %+v ISR %v", res, s.Isr())
		}
	})
	t.Run("staleChangeIsNotApplied", func(t *testing.T) {
		s := newLeader(t, 1, 10)
		c := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 1))
		s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 6, Isr: []int32{1, 2, 3}, PartitionEpoch: 8, Replicas: []int32{1, 2, 3}}, 10, ms(lag.Milliseconds()+2))
		if applied, _ := s.CompleteIsrChange(*c, 9, ms(lag.Milliseconds()+3)); applied {
			t.Fatal("a change replaced by LeaderAndIsr was applied")
		}
		if !slices.Equal(s.Isr(), []int32{1, 2, 3}) {
			t.Fatalf("ISR = %v", s.Isr())
		}
	})
}

// PartitionTest.testIsrExpansion, testIsrNotExpandedIfUpdateFails,
// testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch,
// testIsrNotExpandedIfReplicaIsFencedOrShutdown.
func TestIsrExpansion(t *testing.T) {
	setup := func(t *testing.T) *LeaderState {
		// Leader 1 in epoch 5 with ISR {1}, LEO 10, HW 10 (from before).
		s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1}, 10, 10)
		s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 5, Isr: []int32{1}, PartitionEpoch: 1, Replicas: []int32{1, 2, 3}}, 10, ms(0))
		appendTo(t, s, 20, 1)
		return s
	}
	t.Run("testIsrExpansion", func(t *testing.T) {
		s := setup(t)
		if s.HighWatermark() != 20 {
			t.Fatalf("HW = %d, want 20 (ISR is the leader alone)", s.HighWatermark())
		}
		if r := fetch(t, s, 2, 15, 2); r.IsrExpansion != nil {
			t.Fatal("expanded below the HW")
		}
		r := fetch(t, s, 2, 20, 3)
		if r.IsrExpansion == nil || !slices.Equal(r.IsrExpansion.Isr, []int32{1, 2}) || r.IsrExpansion.Kind != IsrExpand {
			t.Fatalf("expansion = %+v", r.IsrExpansion)
		}
		if got := s.MaximalIsr(); !slices.Equal(got, []int32{1, 2}) {
			t.Fatalf("maximal ISR = %v", got)
		}
		if !slices.Equal(s.Isr(), []int32{1}) {
			t.Fatal("committed ISR changed before the write")
		}
		s.CompleteIsrChange(*r.IsrExpansion, 2, ms(4))
		if !slices.Equal(s.Isr(), []int32{1, 2}) || s.PartitionEpoch() != 2 {
			t.Fatalf("ISR %v version %d", s.Isr(), s.PartitionEpoch())
		}
	})
	t.Run("lagTimeNotCheckedOnTheWayIn", func(t *testing.T) {
		s := setup(t)
		// Joining needs LEO >= HW only, however long since the follower
		// last fetched or caught up.
		if r := fetch(t, s, 2, 20, 50_000); r.IsrExpansion == nil {
			t.Fatal("not expanded at LEO >= HW")
		}
	})
	t.Run("testIsrNotExpandedIfUpdateFails", func(t *testing.T) {
		s := setup(t)
		r := fetch(t, s, 2, 20, 3)
		s.FailIsrChange(*r.IsrExpansion)
		if !slices.Equal(s.Isr(), []int32{1}) {
			t.Fatalf("ISR = %v", s.Isr())
		}
		// As in 3.9 the partition stays in its pending state until the
		// next LeaderAndIsr, so the maximal ISR still counts 2.
		if !slices.Equal(s.MaximalIsr(), []int32{1, 2}) {
			t.Fatalf("maximal ISR = %v", s.MaximalIsr())
		}
		if r := fetch(t, s, 3, 20, 4); r.IsrExpansion != nil {
			t.Fatal("expansion proposed while blocked")
		}
	})
	t.Run("testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch", func(t *testing.T) {
		// Leader elected in epoch 5 at LEO 10 with HW 3 (the old leader's
		// HW had not reached it): a follower at LEO 5 >= HW must not join
		// until it holds everything up to the epoch start offset 10.
		s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1}, 3, 10)
		s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 3}, PartitionEpoch: 1, Replicas: []int32{1, 2, 3}}, 10, ms(0))
		if r := fetch(t, s, 2, 5, 1); r.IsrExpansion != nil {
			t.Fatal("joined below the leader epoch start offset")
		}
		if r := fetch(t, s, 2, 10, 2); r.IsrExpansion == nil {
			t.Fatal("did not join at the leader epoch start offset")
		}
	})
	t.Run("testIsrNotExpandedIfReplicaIsFencedOrShutdown", func(t *testing.T) {
		s := setup(t)
		s.SetBrokerAlive(2, false)
		if r := fetch(t, s, 2, 20, 2); r.IsrExpansion != nil {
			t.Fatal("offline broker joined the ISR")
		}
		s.SetBrokerAlive(2, true)
		if r := fetch(t, s, 2, 20, 3); r.IsrExpansion == nil {
			t.Fatal("alive broker did not join")
		}
	})
	t.Run("refusedAsIneligibleBacksOff", func(t *testing.T) {
		// Not in Kafka: the controller refused broker 2 (shutting down);
		// its fetches neither propose it again nor hold the HW back until
		// IneligibleReplicaBackoff has passed.
		s := setup(t)
		r := fetch(t, s, 2, 20, 3)
		if r.IsrExpansion == nil || !s.RefuseIsrChange(*r.IsrExpansion, ms(4)) {
			t.Fatalf("expansion %+v not refused", r.IsrExpansion)
		}
		if !slices.Equal(s.MaximalIsr(), []int32{1}) {
			t.Fatalf("maximal ISR = %v after the refusal", s.MaximalIsr())
		}
		backoff := IneligibleReplicaBackoff.Milliseconds()
		if r := fetch(t, s, 2, 20, 4+backoff-2); r.IsrExpansion != nil {
			t.Fatal("proposed again within the backoff")
		}
		appendTo(t, s, 30, 4+backoff-1)
		if s.HighWatermark() != 30 {
			t.Fatalf("HW = %d: a refused follower held it back", s.HighWatermark())
		}
		if r := fetch(t, s, 2, 30, 4+backoff); r.IsrExpansion == nil {
			t.Fatal("not proposed again after the backoff")
		}
	})
}

// PartitionTest.testFetchFromUnrecognizedFollower.
func TestFetchFromUnrecognizedFollower(t *testing.T) {
	s := newLeader(t, 1, 10)
	if _, err := s.UpdateFollowerFetch(9, 10, 0, ms(1), 10); !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("err = %v, want ErrUnknownReplica", err)
	}
	s.Resign()
	if _, err := s.UpdateFollowerFetch(2, 10, 0, ms(1), 10); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("err = %v, want ErrNotLeader", err)
	}
}

// A follower that is behind and silent for FollowerSilenceMax leaves the
// ISR long before the lag time; one that is silent but has everything, or
// behind but fetching, stays.
func TestSilentFollowerLeavesIsr(t *testing.T) {
	const silence = 2 * time.Second
	s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 2, FollowerSilenceMax: silence}, 0, 10)
	s.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2, 3}, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}}, 10, ms(0))
	fetch(t, s, 2, 10, 100)
	fetch(t, s, 3, 10, 100)
	// Nothing new: both silent, neither behind.
	if c := s.MaybeShrinkIsr(ms(5000)); c != nil {
		t.Fatalf("shrink of caught-up silent followers: %+v", c)
	}
	appendTo(t, s, 20, 5000)
	// 2 keeps fetching (behind, but talking); 3 has been silent since 100.
	fetch(t, s, 2, 15, 5100)
	c := s.MaybeShrinkIsr(ms(5200))
	if c == nil || !slices.Equal(c.Changed, []int32{3}) {
		t.Fatalf("shrink = %+v, want 3 out", c)
	}
	// Out of the ISR, the silent follower no longer holds the HW back,
	// although by the lag time alone it would still count as caught up.
	if applied, _ := s.CompleteIsrChange(*c, 8, ms(5300)); !applied || s.HighWatermark() != 15 {
		t.Fatalf("after the shrink: applied %v, HW %d, want 15", applied, s.HighWatermark())
	}
	// Silence alone does not take the ISR below min.insync.replicas: with
	// both followers silent, the leader keeps them until the lag time.
	b := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 2, FollowerSilenceMax: silence}, 0, 10)
	b.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2, 3}, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}}, 10, ms(0))
	fetch(t, b, 2, 10, 100)
	fetch(t, b, 3, 10, 100)
	appendTo(t, b, 20, 200)
	if b.HasSilentIsrFollower(ms(100 + silence.Milliseconds())) {
		t.Fatal("silent at exactly FollowerSilenceMax")
	}
	if !b.HasSilentIsrFollower(ms(100 + silence.Milliseconds() + 500)) {
		t.Fatal("the leader does not see its silent ISR followers (it reads ZooKeeper for a deposition then)")
	}
	if c := b.MaybeShrinkIsr(ms(100 + silence.Milliseconds() + 500)); c != nil {
		t.Fatalf("silence took the ISR below min.insync.replicas: %+v", c)
	}
	if c := b.MaybeShrinkIsr(ms(100 + lag.Milliseconds() + 1)); c == nil || !slices.Equal(c.Isr, []int32{1}) {
		t.Fatalf("after the lag time: shrink %+v, want ISR [1]", c)
	}

	// With a grace, silent followers stay past the lag time, until the
	// grace is over too: the controller moves a cut-off leader's partition
	// meanwhile, with a replica left in the ISR to elect.
	const grace = 10 * time.Second
	g := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 2, FollowerSilenceMax: silence, SilentFollowerGrace: grace}, 0, 10)
	g.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2, 3}, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}}, 10, ms(0))
	fetch(t, g, 2, 10, 100)
	fetch(t, g, 3, 10, 100)
	appendTo(t, g, 20, 200)
	if c := g.MaybeShrinkIsr(ms(100 + lag.Milliseconds() + 1)); c != nil {
		t.Fatalf("within the grace: shrink %+v", c)
	}
	if c := g.MaybeShrinkIsr(ms(100 + (lag + grace).Milliseconds() + 1)); c == nil || !slices.Equal(c.Isr, []int32{1}) {
		t.Fatalf("after the lag time and the grace: shrink %+v, want ISR [1]", c)
	}
	// The grace is for silence: a follower that fetches but stays behind
	// leaves at the lag time, below min.insync.replicas too.
	h := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 2, FollowerSilenceMax: silence, SilentFollowerGrace: grace}, 0, 10)
	h.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2}, PartitionEpoch: 7, Replicas: []int32{1, 2}}, 10, ms(0))
	fetch(t, h, 2, 10, 100)
	appendTo(t, h, 20, 200)
	fetch(t, h, 2, 12, lag.Milliseconds())
	if c := h.MaybeShrinkIsr(ms(100 + lag.Milliseconds() + 1)); c == nil || !slices.Equal(c.Isr, []int32{1}) {
		t.Fatalf("a fetching follower behind for the lag time: shrink %+v, want ISR [1]", c)
	}

	// Without the bound, only the lag time counts.
	k := newLeader(t, 2, 10)
	fetch(t, k, 3, 10, 100)
	appendTo(t, k, 20, 5000)
	fetch(t, k, 2, 15, 5100)
	if c := k.MaybeShrinkIsr(ms(5200)); c != nil {
		t.Fatalf("shrink without FollowerSilenceMax: %+v", c)
	}
}

// A follower that has not fetched since this broker became leader may
// be backing off after asking before the leader knew of its leadership:
// its silence counts FollowerFetchBackoff longer, until its first fetch.
func TestSilenceAtNewLeadershipAllowsFetchBackoff(t *testing.T) {
	const silence, backoff = time.Second, time.Second
	cfg := LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1, FollowerSilenceMax: silence, FollowerFetchBackoff: backoff}
	s := NewLeaderState(1, cfg, 0, 10)
	s.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2, 3}, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}}, 10, ms(0))
	if c := s.MaybeShrinkIsr(ms(1900)); c != nil {
		t.Fatalf("shrink of followers within FollowerSilenceMax + FollowerFetchBackoff of the leadership: %+v", c)
	}
	// 2 has fetched: from then on, FollowerSilenceMax alone.
	fetch(t, s, 2, 10, 1950)
	appendTo(t, s, 20, 1960)
	c := s.MaybeShrinkIsr(ms(2001))
	if c == nil || !slices.Equal(c.Changed, []int32{3}) {
		t.Fatalf("shrink = %+v, want 3 out (never fetched, silent for both bounds)", c)
	}
	if applied, _ := s.CompleteIsrChange(*c, 8, ms(2002)); !applied {
		t.Fatal("shrink not applied")
	}
	if c := s.MaybeShrinkIsr(ms(2900)); c != nil {
		t.Fatalf("shrink of 2 within FollowerSilenceMax of its fetch: %+v", c)
	}
	if c := s.MaybeShrinkIsr(ms(2951)); c == nil || !slices.Equal(c.Changed, []int32{2}) {
		t.Fatalf("shrink = %+v, want 2 out (fetched once, then silent for FollowerSilenceMax)", c)
	}

	// Re-elected in a new epoch, a follower's old fetches count for
	// nothing: it restarts its fetching for the epoch and may back off too.
	r := NewLeaderState(1, cfg, 0, 10)
	r.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2}, PartitionEpoch: 7, Replicas: []int32{1, 2}}, 10, ms(0))
	fetch(t, r, 2, 10, 100)
	r.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 6, Isr: []int32{1, 2}, PartitionEpoch: 8, Replicas: []int32{1, 2}}, 10, ms(200))
	appendTo(t, r, 20, 300)
	if c := r.MaybeShrinkIsr(ms(1900)); c != nil {
		t.Fatalf("re-elected: shrink within both bounds of the new epoch: %+v", c)
	}
	if c := r.MaybeShrinkIsr(ms(2201)); c == nil {
		t.Fatal("re-elected: no shrink of a follower silent for both bounds")
	}
}

// An ISR write that never reached ZooKeeper does not block the leader
// until the next LeaderAndIsr, as a refused one does: the change is
// proposed again.
func TestUnsentIsrChangeProposedAgain(t *testing.T) {
	s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1}, 0, 10)
	s.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2}, PartitionEpoch: 7, Replicas: []int32{1, 2}}, 10, ms(0))
	c := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 1))
	if c == nil {
		t.Fatal("no shrink of a follower that never fetched")
	}
	if !s.AbandonIsrChange(*c) {
		t.Fatal("pending change not abandoned")
	}
	again := s.MaybeShrinkIsr(ms(lag.Milliseconds() + 2))
	if again == nil || !slices.Equal(again.Isr, c.Isr) {
		t.Fatalf("after an unsent write: %+v, want %+v proposed again", again, c)
	}
	if !s.FailIsrChange(*again) || s.MaybeShrinkIsr(ms(lag.Milliseconds()+3)) != nil || !s.IsrUpdateBlocked() {
		t.Fatal("a refused write did not block further changes")
	}
}

// A shrink says whether the followers it keeps are still heard from: the
// follower fetching while the other fell silent (the leader is fine, the
// other broker is not), or every follower fading at once (the leader is
// likelier the one cut off), or none kept at all.
func TestShrinkTellsWhetherKeptFollowersFetch(t *testing.T) {
	const silence = time.Second
	cfg := LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1, FollowerSilenceMax: silence}
	leader := func() *LeaderState {
		s := NewLeaderState(1, cfg, 0, 10)
		s.BecomeLeader(LeaderAndIsr{ControllerEpoch: 3, Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2, 3}, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}}, 10, ms(0))
		fetch(t, s, 2, 10, 100)
		fetch(t, s, 3, 10, 100)
		return s
	}

	s := leader()
	appendTo(t, s, 20, 200)
	for at := int64(250); at <= 1150; at += 100 {
		fetch(t, s, 2, 20, at)
	}
	c := s.MaybeShrinkIsr(ms(1200))
	if c == nil || !slices.Equal(c.Changed, []int32{3}) || !c.FollowersFetching {
		t.Fatalf("3 silent, 2 fetching: %+v", c)
	}

	s = leader()
	appendTo(t, s, 20, 200)
	fetch(t, s, 2, 10, 150)
	c = s.MaybeShrinkIsr(ms(1120))
	if c == nil || !slices.Equal(c.Changed, []int32{3}) || c.FollowersFetching {
		t.Fatalf("3 silent, 2 last heard 970 ms ago: %+v", c)
	}

	s = leader()
	appendTo(t, s, 20, 200)
	c = s.MaybeShrinkIsr(ms(1200))
	if c == nil || !slices.Equal(c.Isr, []int32{1}) || c.FollowersFetching {
		t.Fatalf("both silent: %+v", c)
	}
}
