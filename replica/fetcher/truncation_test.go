package fetcher

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A follower with a divergent suffix is truncated by leader epochs, never
// by its HW, and ends with the leader's log (KIP-101, KIP-279, KIP-320).
// Names follow Kafka's tests.
func TestTruncationScenarios(t *testing.T) {
	cases := []struct {
		name            string
		truncateOnFetch bool
		follower        []rec
		followerHW      int64
		leader          []rec
		leaderEpoch     int32
		// questions are the epochs asked with OffsetForLeaderEpoch, in order.
		questions []int32
		// truncations are the offsets the follower's log was cut to.
		truncations []int64
		// firstFetches are the first (FetchOffset, LastFetchedEpoch) sent.
		firstFetches [][2]int64
	}{{
		name:     "committed record kept (KIP-101 scenario 1)",
		follower: []rec{{0, "m0"}, {0, "m1"}}, followerHW: 1,
		leader: []rec{{0, "m0"}, {0, "m1"}}, leaderEpoch: 1,
		questions: []int32{0},
	}, {
		name:     "shouldNotAllowDivergentLogs (KIP-101 scenario 2)",
		follower: []rec{{0, "m0"}, {0, "m1"}}, followerHW: 2,
		leader: []rec{{0, "m0"}, {1, "m2"}}, leaderEpoch: 1,
		questions: []int32{0}, truncations: []int64{1},
	}, {
		// The leader answers (1, 2) for epoch 2; the follower's own end
		// of epoch 1 is 1: cut there, done (KIP-279's fast failover case).
		name:     "KIP-279 fast leader failover",
		follower: []rec{{1, "m0"}, {2, "x1"}}, followerHW: 1,
		leader: []rec{{1, "m0"}, {1, "m1"}, {3, "y2"}}, leaderEpoch: 3,
		questions: []int32{2}, truncations: []int64{1},
	}, {
		name:     "diverging epochs answered by OffsetForLeaderEpoch",
		follower: []rec{{0, "a"}, {2, "b"}, {4, "c"}}, followerHW: 2,
		leader: []rec{{0, "a"}, {2, "b"}, {5, "d"}}, leaderEpoch: 5,
		questions: []int32{4}, truncations: []int64{2},
	}, {
		// Each answer names an epoch the follower never had, so it cuts
		// to its own smaller epoch and asks again (KIP-279).
		name:     "testTruncation, multi-round",
		follower: []rec{{0, "a"}, {2, "b"}, {4, "c"}}, followerHW: 2,
		leader: []rec{{1, "x"}, {3, "y"}, {5, "z"}}, leaderEpoch: 5,
		questions: []int32{4, 2, 0}, truncations: []int64{2, 1, 0},
	}, {
		name:     "testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable (empty cache)",
		follower: []rec{{-1, "m0"}, {-1, "x1"}}, followerHW: 1,
		leader: []rec{{-1, "m0"}, {0, "m1"}}, leaderEpoch: 0,
		truncations: []int64{1},
	}, {
		name: "testDivergingEpochs, truncate on fetch", truncateOnFetch: true,
		follower: []rec{{0, "a"}, {2, "b"}, {4, "c"}}, followerHW: 2,
		leader: []rec{{0, "a"}, {2, "b"}, {5, "d"}}, leaderEpoch: 5,
		truncations:  []int64{2},
		firstFetches: [][2]int64{{3, 4}, {2, 2}, {3, 5}},
	}, {
		name: "testTruncation, truncate on fetch", truncateOnFetch: true,
		follower: []rec{{0, "a"}, {2, "b"}, {4, "c"}}, followerHW: 2,
		leader: []rec{{1, "x"}, {3, "y"}, {5, "z"}}, leaderEpoch: 5,
		truncations:  []int64{2, 1, 0},
		firstFetches: [][2]int64{{3, 4}, {2, 2}, {1, 0}, {0, -1}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leaderLog := memLogOf(t, tc.leader...)
			leader := newFakeLeader()
			leader.addPartition("t", 0, leaderLog, tc.leaderEpoch)
			cfg := testConfig()
			cfg.TruncateOnFetch = tc.truncateOnFetch
			h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})

			follower := newFakePartition("t", 0, memLogOf(t, tc.follower...), tc.leaderEpoch, tc.followerHW)
			h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
			waitFor(t, 5*time.Second, "same log", func() bool {
				return follower.log.LogEndOffset() == leaderLog.LogEndOffset() && len(leader.fetchesOf(follower.tp())) > len(tc.firstFetches)
			})
			h.m.Close()
			requireSameLog(t, leaderLog, follower.log)

			var asked []int32
			for _, q := range leader.epochQuestions() {
				asked = append(asked, q.LeaderEpoch)
				if q.CurrentLeaderEpoch != tc.leaderEpoch {
					t.Errorf("OffsetForLeaderEpoch with current epoch %d, want %d", q.CurrentLeaderEpoch, tc.leaderEpoch)
				}
			}
			if !slices.Equal(asked, tc.questions) {
				t.Errorf("asked epochs %v, want %v", asked, tc.questions)
			}
			follower.mu.Lock()
			cuts := follower.truncations
			follower.mu.Unlock()
			if !slices.Equal(cuts, tc.truncations) {
				t.Errorf("truncated to %v, want %v", cuts, tc.truncations)
			}
			fetches := leader.fetchesOf(follower.tp())
			for i, want := range tc.firstFetches {
				got := [2]int64{fetches[i].fetchOffset, int64(fetches[i].lastFetchedEpoch)}
				if got != want {
					t.Errorf("fetch %d: (offset, last fetched epoch) %v, want %v; all: %s", i, got, want, fetchList(fetches))
				}
			}
		})
	}
}

func fetchList(fs []fetchSeen) string {
	var s string
	for _, f := range fs {
		s += fmt.Sprintf("(%d,%d) ", f.fetchOffset, f.lastFetchedEpoch)
	}
	return s
}

// A diverging answer is not appended and does not move the HW
// (testTruncateOnFetchDoesNotUpdateHighWatermark).
func TestDivergingFetchDoesNotMoveHighWatermark(t *testing.T) {
	leaderLog := memLogOf(t, []rec{{0, "a"}, {2, "b"}, {5, "d"}}...)
	leader := newFakeLeader()
	lp := leader.addPartition("t", 0, leaderLog, 5)
	leader.set(func() { lp.hw = 3 })
	cfg := testConfig()
	cfg.TruncateOnFetch = true
	h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})
	follower := newFakePartition("t", 0, memLogOf(t, []rec{{0, "a"}, {2, "b"}, {4, "c"}}...), 5, 1)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "catch-up", func() bool { return follower.HighWatermark() == 3 })
	h.m.Close()
	follower.mu.Lock()
	defer follower.mu.Unlock()
	// The first HW update comes from the first non-diverging answer, the
	// fetch at offset 2 that returned d.
	if len(follower.hwSets) == 0 || follower.hwSets[0][1] != 3 {
		t.Fatalf("first HW update %v: want one after d was appended (LEO 3)", follower.hwSets)
	}
}
