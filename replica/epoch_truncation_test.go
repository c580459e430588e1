package replica

import (
	"testing"

	"github.com/kbroker/kbroker/logstore"
)

func cacheOf(pairs ...int64) *logstore.EpochCache {
	c := logstore.NewEpochCache(nil)
	for i := 0; i+1 < len(pairs); i += 2 {
		c.Assign(int32(pairs[i]), pairs[i+1])
	}
	return c
}

// Each case of getOffsetTruncationState, named after ReplicaFetcherThreadTest
// / AbstractFetcherThreadTest.
func TestOffsetTruncation(t *testing.T) {
	cases := []struct {
		name       string
		cache      *logstore.EpochCache
		leo, hw    int64
		leader     EpochEndOffset
		want       Truncation
		wantLatest int32 // follower's latest epoch after applying the truncation
	}{
		{"shouldTruncateToOffsetSpecifiedInEpochOffsetResponse", cacheOf(1, 0, 5, 100), 200, 50,
			EpochEndOffset{5, 156}, Truncation{156, true}, 5},
		{"followerEndOfSameEpochIsLower", cacheOf(1, 0, 3, 100, 5, 150), 200, 50,
			EpochEndOffset{3, 170}, Truncation{150, true}, 3},
		{"shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs", cacheOf(), 200, 50,
			EpochEndOffset{4, 156}, Truncation{156, true}, UndefinedEpoch},
		{"leaderEndAboveOwnLogEndDoesNotTruncate", cacheOf(0, 0, 2, 10), 30, 20,
			EpochEndOffset{2, 45}, Truncation{30, true}, 2},
		{"shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower", cacheOf(1, 0, 3, 50, 5, 101), 200, 10,
			EpochEndOffset{4, 120}, Truncation{101, false}, 3},
		{"shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20", cacheOf(0, 0, 5, 10), 200, 10,
			EpochEndOffset{UndefinedEpoch, 156}, Truncation{156, true}, 5},
		{"shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset", cacheOf(0, 0, 5, 10), 200, 77,
			EpochEndOffset{UndefinedEpoch, UndefinedEpochOffset}, Truncation{77, true}, 5},
		{"leaderEpochOlderThanAllOfOurs", cacheOf(3, 10, 5, 20), 40, 10,
			EpochEndOffset{1, 15}, Truncation{10, true}, UndefinedEpoch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := OffsetTruncation(tc.cache, tc.leo, tc.hw, tc.leader)
			if got != tc.want {
				t.Fatalf("OffsetTruncation = %+v, want %+v", got, tc.want)
			}
			tc.cache.TruncateFromEnd(got.Offset)
			if l := tc.cache.LatestEpoch(); l != tc.wantLatest {
				t.Fatalf("latest epoch after truncation = %d, want %d", l, tc.wantLatest)
			}
		})
	}
}

// PartitionTest.testLastFetchedOffsetValidation: the leader's verdict on
// LastFetchedEpoch/FetchOffset, before and after the log start moves.
func TestLastFetchedOffsetValidation(t *testing.T) {
	// Batches at epochs 0@0, 3@2, 3@5, 4@8, 7@13, 9@14; LEO 17; then leader
	// in epoch 10, which records (10, 17) at election.
	leader := cacheOf(0, 0, 3, 2, 3, 5, 4, 8, 7, 13, 9, 14, 10, 17)
	const leo = 17
	logStart := int64(0)
	type q struct {
		lastFetched int32
		offset      int64
		want        FetchEpochCheck
		diverging   EpochEndOffset
	}
	run := func(qs []q) {
		t.Helper()
		for _, c := range qs {
			got, end := CheckLastFetchedEpoch(leader, logStart, leo, c.lastFetched, c.offset)
			if got != c.want || (got == FetchEpochDiverging && end != c.diverging) {
				t.Errorf("logStart %d, read(%d, %d) = %v %+v, want %v %+v", logStart, c.lastFetched, c.offset, got, end, c.want, c.diverging)
			}
		}
	}
	run([]q{
		{2, 5, FetchEpochDiverging, EpochEndOffset{0, 2}},
		{0, 4, FetchEpochDiverging, EpochEndOffset{0, 2}},
		{6, 6, FetchEpochDiverging, EpochEndOffset{4, 13}},
		{5, 9, FetchEpochDiverging, EpochEndOffset{4, 13}},
		{10, 18, FetchEpochDiverging, EpochEndOffset{10, 17}},
		{0, 2, FetchEpochOK, EpochEndOffset{}},
		{7, 14, FetchEpochOK, EpochEndOffset{}},
		{9, 17, FetchEpochOK, EpochEndOffset{}},
		{10, 17, FetchEpochOK, EpochEndOffset{}},
		{11, 5, FetchEpochOffsetOutOfRange, EpochEndOffset{}},
		{-1, 3, FetchEpochOK, EpochEndOffset{}},
	})

	logStart = 5
	leader.TruncateFromStart(logStart)
	run([]q{
		{2, 8, FetchEpochDiverging, EpochEndOffset{2, 5}},
		{0, 5, FetchEpochOK, EpochEndOffset{}},
		{3, 5, FetchEpochOK, EpochEndOffset{}},
		{0, 0, FetchEpochOffsetOutOfRange, EpochEndOffset{}},
	})

	logStart = 10
	leader.TruncateFromStart(logStart)
	run([]q{
		{5, 6, FetchEpochOffsetOutOfRange, EpochEndOffset{}},
		{3, 6, FetchEpochOffsetOutOfRange, EpochEndOffset{}},
	})
}

// PartitionTest.testMakeLeaderUpdatesEpochCache (KAFKA-7415): a broker
// that becomes leader in epoch 8 over a log with LEO 4 answers
// OffsetForLeaderEpoch(8) with (8, 4) before writing anything.
func TestMakeLeaderUpdatesEpochCache(t *testing.T) {
	cache := logstore.NewEpochCache([]logstore.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 2, StartOffset: 2}})
	s := NewLeaderState(1, LeaderConfig{}, 0, 4)
	res := s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 8, Isr: []int32{1, 2}, Replicas: []int32{1, 2}}, 4, ms(0))
	if !res.Applied || !res.NewLeaderEpoch || res.EpochStartOffset != 4 {
		t.Fatalf("BecomeLeader = %+v", res)
	}
	cache.Assign(s.LeaderEpoch(), res.EpochStartOffset)
	if got := endOffsetFor(cache, 8, 4); got != (EpochEndOffset{8, 4}) {
		t.Fatalf("EndOffsetFor(8) = %+v, want {8 4}", got)
	}
	// Without the election-time entry the answer would be undefined and
	// the follower would fall back to HW truncation.
	if got := endOffsetFor(cache, 2, 4); got != (EpochEndOffset{2, 4}) {
		t.Fatalf("EndOffsetFor(2) = %+v, want {2 4}", got)
	}
}
