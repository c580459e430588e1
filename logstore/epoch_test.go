package logstore

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// entriesString renders entries as "e:start e:start".
func entriesString(es []EpochEntry) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d", e.Epoch, e.StartOffset)
	}
	return b.String()
}

// epochEnd is an EndOffsetFor answer: (epoch, end offset).
type epochEnd struct {
	LeaderEpoch int32
	EndOffset   int64
}

type epochQuery struct {
	epoch int32
	leo   int64
	want  epochEnd
}

// Cases from Kafka 3.9's LeaderEpochFileCacheTest, by name.
func TestEpochCacheKafkaCases(t *testing.T) {
	type op struct {
		kind  string // assign, end, start
		epoch int32
		off   int64
	}
	a := func(e int32, o int64) op { return op{"assign", e, o} }
	end := func(o int64) op { return op{"end", 0, o} }
	start := func(o int64) op { return op{"start", 0, o} }
	u := epochEnd{UndefinedEpoch, UndefinedEpochOffset}
	cases := []struct {
		name    string
		ops     []op
		entries string
		queries []epochQuery
	}{
		{"shouldAddEpochAndMessageOffsetToCache", []op{a(2, 10)}, "2:10", []epochQuery{{2, 11, epochEnd{2, 11}}}},
		{"shouldReturnLogEndOffsetIfLatestEpochRequested", []op{a(2, 11), a(2, 12)}, "2:11", []epochQuery{{2, 14, epochEnd{2, 14}}}},
		{"shouldReturnUndefinedOffsetIfUndefinedEpochRequested", []op{a(2, 11), a(3, 12)}, "2:11 3:12", []epochQuery{{UndefinedEpoch, 0, u}}},
		{"shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned", []op{a(2, 9), a(2, 10)}, "2:9", nil},
		{"shouldEnforceMonotonicallyIncreasingStartOffsets", []op{a(2, 9), a(3, 9)}, "3:9", nil},
		{"shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned", []op{a(2, 6), a(2, 10)}, "2:6", nil},
		{"shouldReturnUnsupportedIfNoEpochRecorded", nil, "", []epochQuery{{0, 0, u}}},
		{"shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested", nil, "", []epochQuery{{UndefinedEpoch, 73, u}}},
		{"shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch", []op{a(5, 11), a(6, 12), a(7, 13)}, "5:11 6:12 7:13", []epochQuery{{4, 0, epochEnd{4, 11}}}},
		{"shouldTruncateIfMatchingEpochButEarlierStartingOffset", []op{a(5, 11), a(6, 12), a(7, 13), a(7, 12)}, "5:11 7:12",
			[]epochQuery{{5, 0, epochEnd{5, 12}}, {6, 0, epochEnd{5, 12}}}},
		{"shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch", []op{a(1, 11), a(1, 12), a(2, 13), a(2, 14), a(3, 15), a(3, 16)}, "1:11 2:13 3:15",
			[]epochQuery{{2, 17, epochEnd{2, 15}}}},
		{"shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested", []op{a(0, 10), a(2, 13), a(4, 17)}, "0:10 2:13 4:17",
			[]epochQuery{{1, 0, epochEnd{0, 13}}, {2, 0, epochEnd{2, 17}}, {3, 0, epochEnd{2, 17}}}},
		{"shouldNotUpdateEpochAndStartOffsetIfItDidNotChange", []op{a(2, 6), a(2, 7)}, "2:6", nil},
		{"shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked", []op{a(2, 100)}, "2:100", []epochQuery{{3, 100, u}}},
		{"shouldSupportEpochsThatDoNotStartFromZero", []op{a(2, 6)}, "2:6", []epochQuery{{2, 7, epochEnd{2, 7}}}},
		{"shouldEnforceMonotonicallyIncreasingEpochs", []op{a(1, 5), a(2, 6), a(1, 7)}, "1:7",
			[]epochQuery{{1, 8, epochEnd{1, 8}}, {2, 8, u}}},
		{"shouldEnforceOffsetsIncreaseMonotonically", []op{a(2, 6), a(3, 5)}, "3:5", nil},
		{"shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes", []op{a(0, 0), a(1, 0), a(2, 5)}, "1:0 2:5",
			[]epochQuery{{2, 10, epochEnd{2, 10}}, {1, 10, epochEnd{1, 5}}, {0, 10, epochEnd{0, 0}}}},
		{"shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages", []op{a(0, 0), a(0, 1), a(0, 2), a(1, 3), a(1, 4), a(1, 5), a(2, 6), a(2, 7), a(2, 8)}, "0:0 1:3 2:6",
			[]epochQuery{{2, 9, epochEnd{2, 9}}, {0, 9, epochEnd{0, 3}}, {1, 9, epochEnd{1, 6}}}},
		{"shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries", []op{a(2, 6), a(3, 8), a(4, 11), end(8)}, "2:6", nil},
		{"shouldPreserveResetOffsetOnClearEarliestIfOneExists", []op{a(2, 6), a(3, 8), a(4, 11), start(8)}, "3:8 4:11", nil},
		{"shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs", []op{a(2, 6), a(3, 8), a(4, 11), start(9)}, "3:9 4:11", nil},
		{"shouldNotClearAnythingIfOffsetToEarly", []op{a(2, 6), a(3, 8), a(4, 11), start(1)}, "2:6 3:8 4:11", nil},
		{"shouldNotClearAnythingIfOffsetToFirstOffset", []op{a(2, 6), a(3, 8), a(4, 11), start(6)}, "2:6 3:8 4:11", nil},
		{"shouldRetainLatestEpochOnClearAllEarliest", []op{a(2, 6), a(3, 8), a(4, 11), start(11)}, "4:11", nil},
		{"shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2", []op{a(0, 0), a(1, 7), a(2, 10), start(5)}, "0:5 1:7 2:10", nil},
		{"shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset", []op{a(2, 6), a(3, 8), a(4, 11), start(15)}, "4:15", nil},
		{"shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest", []op{a(2, 6), a(3, 8), a(4, 11), end(9)}, "2:6 3:8", nil},
		{"shouldClearAllEntriesOnTruncateFromEndToZero", []op{a(2, 6), a(3, 8), a(4, 11), end(0)}, "", nil},
		{"shouldNotResetEpochHistoryTailIfUndefinedPassed", []op{a(2, 6), a(3, 8), a(4, 11), end(UndefinedEpochOffset)}, "2:6 3:8 4:11", nil},
		{"shouldFetchEndOffsetOfEmptyCache", nil, "", []epochQuery{{7, 0, u}}},
		{"shouldIgnoreNegativeEpochsAndOffsets", []op{a(-1, 5), a(2, -1)}, "", nil},
		{"endOffsetFor example: {2:100} ask 3", []op{a(2, 100)}, "2:100", []epochQuery{{3, 200, u}}},
		{"endOffsetFor example: {0:10 2:13 4:17} ask 1 and 3", []op{a(0, 10), a(2, 13), a(4, 17)}, "0:10 2:13 4:17",
			[]epochQuery{{1, 20, epochEnd{0, 13}}, {3, 20, epochEnd{2, 17}}, {4, 20, epochEnd{4, 20}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewEpochCache(nil)
			for _, o := range tc.ops {
				switch o.kind {
				case "assign":
					c.Assign(o.epoch, o.off)
				case "end":
					c.TruncateFromEnd(o.off)
				case "start":
					c.TruncateFromStart(o.off)
				}
				checkEpochCacheMonotonic(t, c)
			}
			if got := entriesString(c.Entries()); got != tc.entries {
				t.Fatalf("entries = %q, want %q", got, tc.entries)
			}
			for _, q := range tc.queries {
				e, o := c.EndOffsetFor(q.epoch, q.leo)
				if got := (epochEnd{e, o}); got != q.want {
					t.Errorf("EndOffsetFor(%d, %d) = %+v, want %+v", q.epoch, q.leo, got, q.want)
				}
			}
		})
	}
}

// An undefined start offset leaves the cache alone, like an undefined end.
func TestEpochCacheTruncateFromStartUndefinedIsNoop(t *testing.T) {
	c := NewEpochCache([]EpochEntry{{Epoch: 2, StartOffset: 6}, {Epoch: 3, StartOffset: 8}})
	if c.TruncateFromStart(UndefinedEpochOffset) {
		t.Fatal("TruncateFromStart(-1) changed the cache")
	}
	if got := entriesString(c.Entries()); got != "2:6 3:8" {
		t.Fatalf("entries = %q", got)
	}
}

func TestEpochCachePreviousEpoch(t *testing.T) {
	c := NewEpochCache(nil)
	want := func(w int32) {
		t.Helper()
		if got := c.PreviousEpoch(); got != w {
			t.Fatalf("PreviousEpoch = %d, want %d", got, w)
		}
	}
	want(UndefinedEpoch)
	c.Assign(2, 10)
	want(UndefinedEpoch)
	c.Assign(4, 15)
	want(2)
	c.Assign(10, 20)
	want(4)
	c.TruncateFromEnd(18)
	want(2)
}

// Entries returns a copy: mutating it must not change the cache.
func TestEpochCacheEntriesIsACopy(t *testing.T) {
	c := NewEpochCache([]EpochEntry{{Epoch: 1, StartOffset: 0}})
	es := c.Entries()
	es[0].StartOffset = 99
	if !slices.Equal(c.Entries(), []EpochEntry{{Epoch: 1, StartOffset: 0}}) {
		t.Fatal("Entries aliases the cache")
	}
}

func checkEpochCacheMonotonic(t *testing.T, c *EpochCache) {
	t.Helper()
	es := c.Entries()
	for i := 1; i < len(es); i++ {
		if es[i].Epoch <= es[i-1].Epoch || es[i].StartOffset <= es[i-1].StartOffset {
			t.Fatalf("epoch cache not strictly ascending: %s", entriesString(es))
		}
	}
}

func TestEpochCacheRules(t *testing.T) {
	// Examples from LeaderEpochFileCacheTest.
	c := NewEpochCache([]EpochEntry{{5, 11}, {6, 12}, {7, 13}})
	if e, o := c.EndOffsetFor(4, 100); e != 4 || o != 11 {
		t.Fatalf("ask 4: %d %d", e, o)
	}
	c = NewEpochCache([]EpochEntry{{0, 10}, {2, 13}, {4, 17}})
	if e, o := c.EndOffsetFor(1, 100); e != 0 || o != 13 {
		t.Fatalf("ask 1: %d %d", e, o)
	}
	if e, o := c.EndOffsetFor(3, 100); e != 2 || o != 17 {
		t.Fatalf("ask 3: %d %d", e, o)
	}
	c = NewEpochCache([]EpochEntry{{2, 100}})
	if e, o := c.EndOffsetFor(3, 200); e != -1 || o != -1 {
		t.Fatalf("ask 3 of {2:100}: %d %d", e, o)
	}
	// assign removes contradicting entries.
	c = NewEpochCache([]EpochEntry{{1, 0}, {2, 10}, {3, 20}})
	c.Assign(2, 5)
	if es := c.Entries(); len(es) != 2 || es[1] != (EpochEntry{2, 5}) {
		t.Fatalf("assign: %v", es)
	}
	c.TruncateFromStart(7)
	if es := c.Entries(); len(es) != 1 || es[0] != (EpochEntry{2, 7}) {
		t.Fatalf("truncateFromStart: %v", es)
	}
}
