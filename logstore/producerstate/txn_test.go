package producerstate

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func txnBatch(pid int64, epoch int16, seq, delta int32) Batch {
	return Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, LastOffsetDelta: delta, MaxTimestamp: 1, Transactional: true}
}

func marker(pid int64, epoch int16, abort bool, coordinatorEpoch int32) Batch {
	return Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, MaxTimestamp: 2, Transactional: true, Control: true, Abort: abort, CoordinatorEpoch: coordinatorEpoch}
}

// at appends b at *next after checking it from origin, returning what
// Update completed.
func at(t *testing.T, s *State, next *int64, b Batch, origin Origin) (CompletedTxn, bool, error) {
	t.Helper()
	v, err := s.CheckFrom(b, origin)
	if err != nil {
		return CompletedTxn{}, false, err
	}
	if v.Duplicate {
		t.Fatalf("unexpected duplicate of %+v", b)
	}
	first := *next
	*next += int64(b.LastOffsetDelta) + 1
	c, ok := s.Update(b, first, *next-1)
	return c, ok, nil
}

func mustAt(t *testing.T, s *State, next *int64, b Batch, origin Origin) (CompletedTxn, bool) {
	t.Helper()
	c, ok, err := at(t, s, next, b, origin)
	if err != nil {
		t.Fatalf("append %+v: %v", b, err)
	}
	return c, ok
}

func TestTransactionLifecycle(t *testing.T) {
	s := New()
	var next int64
	mustAt(t, s, &next, Batch{ProducerID: 9, ProducerEpoch: 0, BaseSequence: 0, MaxTimestamp: 1}, OriginClient) // offset 0, not transactional
	mustAt(t, s, &next, txnBatch(1, 0, 0, 1), OriginClient)                                                     // 1-2
	mustAt(t, s, &next, txnBatch(2, 0, 0, 0), OriginClient)                                                     // 3
	mustAt(t, s, &next, txnBatch(1, 0, 2, 0), OriginClient)                                                     // 4
	if off, ok := s.FirstUnstableOffset(100); !ok || off != 1 {
		t.Fatalf("FUO %d %v, want 1", off, ok)
	}
	if got := s.Producer(1).CurrentTxnFirstOffset; got != 1 {
		t.Fatalf("producer 1 txn first offset %d", got)
	}
	// Producer 1 aborts at 5: producer 2's transaction (from 3) is the
	// oldest other one, so the index entry's LSO is 3.
	c, ok := mustAt(t, s, &next, marker(1, 0, true, 4), OriginCoordinator)
	want := CompletedTxn{ProducerID: 1, FirstOffset: 1, LastOffset: 5, Aborted: true, LastStableOffset: 3}
	if !ok || c != want {
		t.Fatalf("completed %+v %v, want %+v", c, ok, want)
	}
	if p := s.Producer(1); p.CoordinatorEpoch != 4 || p.CurrentTxnFirstOffset != NoOffset {
		t.Fatalf("producer 1 after marker: %+v", p)
	}
	// Still unstable from 1 until the HW passes the marker at 5.
	for _, tc := range []struct {
		hw   int64
		want int64
	}{{5, 1}, {6, 3}} {
		if off, ok := s.FirstUnstableOffset(tc.hw); !ok || off != tc.want {
			t.Fatalf("FUO at HW %d: %d %v, want %d", tc.hw, off, ok, tc.want)
		}
	}
	s.OnHighWatermark(6)
	if len(s.unreplicated) != 0 {
		t.Fatalf("unreplicated after HW 6: %+v", s.unreplicated)
	}
	// Producer 2 commits; nothing else is ongoing: LSO = marker + 1.
	c, ok = mustAt(t, s, &next, marker(2, 0, false, 4), OriginCoordinator)
	want = CompletedTxn{ProducerID: 2, FirstOffset: 3, LastOffset: 6, Aborted: false, LastStableOffset: 7}
	if !ok || c != want {
		t.Fatalf("completed %+v %v, want %+v", c, ok, want)
	}
	if off, ok := s.FirstUnstableOffset(6); !ok || off != 3 {
		t.Fatalf("FUO before the commit is replicated: %d %v", off, ok)
	}
	if _, ok := s.FirstUnstableOffset(7); ok {
		t.Fatal("FUO once everything is replicated")
	}
	// A marker for a producer without a transaction completes nothing.
	if _, ok := mustAt(t, s, &next, marker(2, 0, false, 4), OriginCoordinator); ok {
		t.Fatal("empty transaction completed")
	}
}

func TestTransactionChecks(t *testing.T) {
	s := New()
	var next int64
	mustAt(t, s, &next, txnBatch(1, 3, 0, 0), OriginClient)
	steps := []struct {
		name    string
		batch   Batch
		origin  Origin
		wantErr error
	}{
		{"non-transactional batch inside a transaction", Batch{ProducerID: 1, ProducerEpoch: 3, BaseSequence: 1, MaxTimestamp: 1}, OriginClient, kerr.InvalidTxnState},
		{"marker of an older producer epoch", marker(1, 2, false, 0), OriginCoordinator, kerr.InvalidProducerEpoch},
		{"marker ends it", marker(1, 3, true, 5), OriginCoordinator, nil},
		{"marker from an older coordinator", marker(1, 3, false, 4), OriginCoordinator, kerr.TransactionCoordinatorFenced},
		{"marker from the same coordinator epoch", marker(1, 3, false, 5), OriginCoordinator, nil},
		{"a newer coordinator", marker(1, 4, false, 6), OriginCoordinator, nil},
		{"non-transactional after the transaction", Batch{ProducerID: 1, ProducerEpoch: 4, BaseSequence: 0, MaxTimestamp: 1}, OriginClient, nil},
	}
	for _, st := range steps {
		_, _, err := at(t, s, &next, st.batch, st.origin)
		if !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: err %v, want %v", st.name, err, st.wantErr)
		}
	}
	if p := s.Producer(1); p.Epoch != 4 || p.CoordinatorEpoch != 6 {
		t.Fatalf("producer after markers: %+v", p)
	}
}

// A group coordinator's transactional offset commits all carry sequence
// 0: from the coordinator they are neither duplicates nor out of order,
// but still fenced by epoch.
func TestCoordinatorOriginSkipsSequence(t *testing.T) {
	s := New()
	var next int64
	for i := 0; i < 3; i++ {
		if _, _, err := at(t, s, &next, txnBatch(5, 1, 0, 0), OriginCoordinator); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if next != 3 {
		t.Fatalf("appended %d batches, want 3", next)
	}
	if v, err := s.Check(txnBatch(5, 1, 0, 0)); err != nil || !v.Duplicate {
		t.Fatalf("from a client the same batch is a duplicate: %+v %v", v, err)
	}
	if _, err := s.CheckFrom(txnBatch(5, 0, 0, 0), OriginCoordinator); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("older epoch from the coordinator: %v", err)
	}
}

func TestOngoingTxnsFollowLoadEvictClear(t *testing.T) {
	s := New()
	s.Load(Producer{ID: 1, Epoch: 0, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 10, Batches: []BatchMetadata{{LastOffset: 12}}})
	s.Load(Producer{ID: 2, Epoch: 0, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 4, Batches: []BatchMetadata{{LastOffset: 30}}})
	s.Load(Producer{ID: 3, Epoch: 0, CoordinatorEpoch: -1, CurrentTxnFirstOffset: NoOffset, Batches: []BatchMetadata{{LastOffset: 31}}})
	if off, ok := s.FirstUnstableOffset(0); !ok || off != 4 || s.OngoingTxns() != 2 {
		t.Fatalf("after load: FUO %d %v, %d ongoing", off, ok, s.OngoingTxns())
	}
	// Reloading an entry replaces its transaction.
	s.Load(Producer{ID: 2, Epoch: 0, CoordinatorEpoch: -1, CurrentTxnFirstOffset: NoOffset, Batches: []BatchMetadata{{LastOffset: 30}}})
	if off, ok := s.FirstUnstableOffset(0); !ok || off != 10 || s.OngoingTxns() != 1 {
		t.Fatalf("after reload: FUO %d %v, %d ongoing", off, ok, s.OngoingTxns())
	}
	s.Evict(20) // producer 1's data is all below 20
	if _, ok := s.FirstUnstableOffset(0); ok || s.Producer(1) != nil {
		t.Fatal("evicted producer's transaction remains")
	}
	s.Load(Producer{ID: 4, Epoch: 0, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 40, Batches: []BatchMetadata{{LastOffset: 40}}})
	s.Clear()
	if _, ok := s.FirstUnstableOffset(0); ok {
		t.Fatal("Clear kept a transaction")
	}
}

// Expire keeps a producer inside a transaction, however idle.
func TestExpireKeepsOngoingTxn(t *testing.T) {
	s := New()
	var next int64
	mustAt(t, s, &next, txnBatch(1, 0, 0, 0), OriginClient)
	s.Expire(1 << 40)
	if s.Producer(1) == nil || s.OngoingTxns() != 1 {
		t.Fatal("producer with a transaction expired")
	}
}

// A marker that bumps the epoch leaves an entry without batches; eviction
// by the log start keeps it, so the epochs it fences with survive
// retention and restarts (only expiration removes it).
func TestEvictKeepsMarkerOnlyEntries(t *testing.T) {
	s := New()
	var next int64
	mustAt(t, s, &next, txnBatch(1, 0, 0, 0), OriginClient)
	mustAt(t, s, &next, marker(1, 1, true, 3), OriginCoordinator)
	s.Evict(100)
	p := s.Producer(1)
	if p == nil || p.Epoch != 1 || p.CoordinatorEpoch != 3 {
		t.Fatalf("marker-only entry after Evict: %+v", p)
	}
	if _, err := s.CheckFrom(marker(1, 1, false, 2), OriginCoordinator); !errors.Is(err, kerr.TransactionCoordinatorFenced) {
		t.Fatalf("zombie coordinator after eviction: %v", err)
	}
	s.Expire(1 << 40)
	if s.Producer(1) != nil {
		t.Fatal("expiration keeps the entry")
	}
}
