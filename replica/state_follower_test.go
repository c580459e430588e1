package replica

import (
	"testing"

	"github.com/kbroker/kbroker/logstore"
)

// UnifiedLog.updateHighWatermark on a follower: the follower's HW is
// min(leader HW, own LEO), never below its log start, and may go down.
func TestFollowerHighWatermark(t *testing.T) {
	f := NewFollowerState(1, 4, 0)
	cases := []struct {
		leaderHW, logStart, leo, want int64
	}{
		{5, 0, 10, 5},   // behind the leader's HW: take it
		{12, 0, 10, 10}, // leader HW above own LEO: capped at LEO
		{3, 0, 10, 3},   // the leader's HW went down (new leader): follow it
		{3, 4, 10, 4},   // never below the own log start
	}
	for _, c := range cases {
		if got := f.ApplyFetchResponse(c.leaderHW, c.logStart, c.leo); got != c.want || f.HighWatermark() != c.want {
			t.Errorf("ApplyFetchResponse(%d, %d, %d) = %d, want %d", c.leaderHW, c.logStart, c.leo, got, c.want)
		}
	}
	f.ApplyFetchResponse(9, 0, 10)
	if got := f.Truncated(7); got != 7 {
		t.Fatalf("Truncated(7) = %d, want 7", got)
	}
	if got := f.Truncated(8); got != 7 {
		t.Fatalf("Truncated(8) = %d, want 7 (truncation never raises the HW)", got)
	}
}

func TestBecomeFollowerNeedsNewerEpoch(t *testing.T) {
	f := NewFollowerState(1, 4, 0)
	if f.BecomeFollower(2, 4) || f.LeaderID() != 1 {
		t.Fatal("same epoch accepted")
	}
	if !f.BecomeFollower(2, 5) || f.LeaderID() != 2 || f.LeaderEpoch() != 5 {
		t.Fatal("newer epoch refused")
	}
}

// ReplicaManager.makeFollowers and the fetcher: where a new follower starts,
// by IBP and epoch information.
func TestStartFollowing(t *testing.T) {
	withEpochs := cacheOf(0, 0, 3, 7)
	cases := []struct {
		name            string
		cache           *logstore.EpochCache
		truncateOnFetch bool
		want            FollowerStart
	}{
		{"ibp27FetchesFromLogEnd", withEpochs, true, FollowerStart{FetchOffset: 20}},
		{"ibp26AsksOffsetForLeaderEpoch", withEpochs, false, FollowerStart{FetchOffset: 12, Truncating: true}},
		{"testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable", logstore.NewEpochCache(nil), true, FollowerStart{FetchOffset: 12, Truncating: true, TruncateToHighWatermark: true}},
		{"noEpochsIbp26", logstore.NewEpochCache(nil), false, FollowerStart{FetchOffset: 12, Truncating: true, TruncateToHighWatermark: true}},
	}
	for _, c := range cases {
		if got := StartFollowing(c.cache, c.truncateOnFetch, 20, 12); got != c.want {
			t.Errorf("%s: StartFollowing = %+v, want %+v", c.name, got, c.want)
		}
	}
}
