package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// txnRecords builds a transactional batch of producer pid with the given
// keys (values "<key>-<ts>").
func txnRecords(t testing.TB, pid int64, epoch int16, seq int32, ts int64, keys ...string) Batch {
	t.Helper()
	recs := make([]Record, len(keys))
	for i, k := range keys {
		recs[i] = Record{Key: []byte(k), Value: []byte(k + "-" + string(rune('a'+i))), Timestamp: ts}
	}
	b, err := EncodeBatch(BatchOptions{PartitionLeaderEpoch: -1, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Transactional: true}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendOne(t testing.TB, l Log, b Batch) AppendInfo {
	t.Helper()
	info, err := l.AppendAsLeader([]Batch{b}, 1, -1)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func mustMarker(t testing.TB, l Log, m Marker) AppendInfo {
	t.Helper()
	info, err := l.AppendMarkerAsLeader(m, 1, 1000)
	if err != nil {
		t.Fatalf("marker %+v: %v", m, err)
	}
	return info
}

// writeTxnScenario writes: producer 1's transaction at 0-2, a plain
// batch at 3, producer 3's transaction from 4, producer 1's abort at 5,
// producer 3's commit at 6.
func writeTxnScenario(t testing.TB, l Log) {
	t.Helper()
	appendOne(t, l, txnRecords(t, 1, 0, 0, 100, "a", "b", "c"))
	appendOne(t, l, mkBatch(t, 1, 100, "d"))
	appendOne(t, l, txnRecords(t, 3, 0, 0, 100, "e"))
	if got := mustMarker(t, l, Marker{ProducerID: 1, ProducerEpoch: 0, Commit: false, CoordinatorEpoch: 2}); got.FirstOffset != 5 || got.LastOffset != 5 {
		t.Fatalf("abort marker at %d..%d", got.FirstOffset, got.LastOffset)
	}
	mustMarker(t, l, Marker{ProducerID: 3, ProducerEpoch: 0, Commit: true, CoordinatorEpoch: 2})
}

var scenarioAborted = []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 5, LastStableOffset: 4}}

func TestConformanceTransactions(t *testing.T) {
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			appendOne(t, l, txnRecords(t, 1, 0, 0, 100, "a", "b", "c"))
			if got := l.LastStableOffset(3); got != 0 {
				t.Fatalf("LSO during producer 1's transaction: %d", got)
			}
			appendOne(t, l, mkBatch(t, 1, 100, "d"))
			appendOne(t, l, txnRecords(t, 3, 0, 0, 100, "e"))
			if _, err := l.AppendAsLeader([]Batch{idemBatch(t, 3, 0, 1)}, 1, -1); !errors.Is(err, kerr.InvalidTxnState) {
				t.Fatalf("non-transactional batch inside a transaction: %v", err)
			}
			mustMarker(t, l, Marker{ProducerID: 1, ProducerEpoch: 0, Commit: false, CoordinatorEpoch: 2})
			mustMarker(t, l, Marker{ProducerID: 3, ProducerEpoch: 0, Commit: true, CoordinatorEpoch: 2})
			for _, tc := range []struct{ hw, want int64 }{{5, 0}, {6, 4}, {7, 7}} {
				if got := l.LastStableOffset(tc.hw); got != tc.want {
					t.Errorf("LSO at HW %d: %d, want %d", tc.hw, got, tc.want)
				}
			}
			got, err := l.AbortedTransactions(0, 7)
			if err != nil || !slices.Equal(got, scenarioAborted) {
				t.Fatalf("aborted txns %+v %v, want %+v", got, err, scenarioAborted)
			}
			for _, r := range [][2]int64{{6, 7}, {0, 0}} {
				if got, _ := l.AbortedTransactions(r[0], r[1]); len(got) != 0 {
					t.Errorf("aborted txns in [%d, %d): %+v", r[0], r[1], got)
				}
			}
			if _, err := l.AppendMarkerAsLeader(Marker{ProducerID: 1, ProducerEpoch: -1, CoordinatorEpoch: 2}, 1, 1000); !errors.Is(err, kerr.InvalidProducerEpoch) {
				t.Fatalf("marker of an older producer epoch: %v", err)
			}
			if _, err := l.AppendMarkerAsLeader(Marker{ProducerID: 1, ProducerEpoch: 0, CoordinatorEpoch: 1}, 1, 1000); !errors.Is(err, kerr.TransactionCoordinatorFenced) {
				t.Fatalf("marker of an older coordinator: %v", err)
			}
			// A coordinator's transactional batches all start at sequence 0.
			for i := 0; i < 2; i++ {
				info, err := l.AppendAsLeaderFrom([]Batch{txnRecords(t, 9, 0, 0, 100, "offset")}, 1, -1, OriginCoordinator)
				if err != nil || info.Duplicate {
					t.Fatalf("coordinator batch %d: %+v %v", i, info, err)
				}
			}
			// Truncating the abort marker away reopens producer 1's
			// transaction and empties the index.
			if err := l.TruncateTo(5); err != nil {
				t.Fatal(err)
			}
			if got, _ := l.AbortedTransactions(0, 5); len(got) != 0 {
				t.Fatalf("aborted txns after truncation: %+v", got)
			}
			if got := l.LastStableOffset(5); got != 0 {
				t.Fatalf("LSO after truncation: %d", got)
			}
		})
	}
}

// idemBatch is a non-transactional batch of an idempotent producer.
func idemBatch(t testing.TB, pid int64, epoch int16, seq int32) Batch {
	t.Helper()
	b, err := EncodeBatch(BatchOptions{PartitionLeaderEpoch: -1, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, []Record{{Key: []byte("x"), Value: []byte("y"), Timestamp: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A follower that replicates the leader's batches, markers included,
// builds the same transaction index and last stable offset.
func TestConformanceFollowerTransactions(t *testing.T) {
	leader := NewMemLog(smallCfg())
	writeTxnScenario(t, leader)
	batches := readBatches(t, leader, 0, 1<<62, 1<<20, false)
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			if _, err := l.AppendAsFollower(batches); err != nil {
				t.Fatal(err)
			}
			got, err := l.AbortedTransactions(0, 7)
			if err != nil || !slices.Equal(got, scenarioAborted) {
				t.Fatalf("follower's aborted txns %+v %v", got, err)
			}
			if got := l.LastStableOffset(6); got != 4 {
				t.Fatalf("follower's LSO at HW 6: %d", got)
			}
		})
	}
}

func TestDecodeTxnMarkerOfMarkerBatch(t *testing.T) {
	b, err := markerBatch(Marker{ProducerID: 7, ProducerEpoch: 3, Commit: true, CoordinatorEpoch: 42}, 1234)
	if err != nil {
		t.Fatal(err)
	}
	h := &b.Header
	if !h.IsControl() || !h.IsTransactional() || h.BaseSequence != -1 || h.NumRecords != 1 || h.ProducerID != 7 || h.ProducerEpoch != 3 || h.MaxTimestamp != 1234 {
		t.Fatalf("marker batch header %+v", h)
	}
	recs, err := DecodeRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	// EndTransactionMarker's layout: key version 0 + type 1 (commit),
	// value version 0 + coordinator epoch.
	if want := []byte{0, 0, 0, 1}; !slices.Equal(recs[0].Key, want) {
		t.Fatalf("key % x, want % x", recs[0].Key, want)
	}
	if want := []byte{0, 0, 0, 0, 0, 42}; !slices.Equal(recs[0].Value, want) {
		t.Fatalf("value % x, want % x", recs[0].Value, want)
	}
	m, ok, err := batchTxnMarker(b)
	if err != nil || !ok || m != (TxnMarker{Commit: true, CoordinatorEpoch: 42}) {
		t.Fatalf("decoded %+v %v %v", m, ok, err)
	}
	for _, bad := range []struct{ key, value []byte }{
		{[]byte{0, 0, 0}, []byte{0, 0, 0, 0, 0, 1}},
		{[]byte{0xff, 0xff, 0, 1}, []byte{0, 0, 0, 0, 0, 1}},
		{[]byte{0, 0, 0, 2}, []byte{0, 0, 0, 0, 0, 1}},
		{[]byte{0, 0, 0, 0}, []byte{0, 0, 0, 0, 1}},
		{[]byte{0, 0, 0, 0}, []byte{0x80, 0, 0, 0, 0, 1}},
	} {
		if _, err := DecodeTxnMarker(bad.key, bad.value); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("key % x value % x: %v", bad.key, bad.value, err)
		}
	}
	// A newer version reads as version 0, as Kafka does.
	if m, err := DecodeTxnMarker([]byte{0, 1, 0, 0}, []byte{0, 3, 0, 0, 0, 9, 0xaa}); err != nil || m != (TxnMarker{CoordinatorEpoch: 9}) {
		t.Fatalf("newer versions: %+v %v", m, err)
	}
}

func TestFileLogTxnIndexFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openLog(t, dir, smallCfg(), true, 0)
	writeTxnScenario(t, l)
	data, err := os.ReadFile(segmentName(dir, 0, txnIndexSuffix))
	if err != nil {
		t.Fatal(err)
	}
	// version 0, producer 1, first 0, last 5, LSO 4: AbortedTxn.java.
	want := []byte{
		0, 0, // version
		0, 0, 0, 0, 0, 0, 0, 1, // producer id
		0, 0, 0, 0, 0, 0, 0, 0, // first offset
		0, 0, 0, 0, 0, 0, 0, 5, // last offset
		0, 0, 0, 0, 0, 0, 0, 4, // last stable offset
	}
	if !slices.Equal(data, want) || len(data) != abortedTxnSize {
		t.Fatalf(".txnindex\n% x\nwant\n% x", data, want)
	}
	// An ongoing transaction and the index survive a clean restart.
	appendOne(t, l, txnRecords(t, 4, 0, 0, 100, "f"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, smallCfg(), true, 0)
	if got, _ := l.AbortedTransactions(0, 8); !slices.Equal(got, scenarioAborted) {
		t.Fatalf("after restart: %+v", got)
	}
	if got := l.LastStableOffset(8); got != 7 {
		t.Fatalf("LSO after restart: %d, want 7 (producer 4's transaction)", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// An unclean restart recovers the segment and rebuilds its index,
	// even without the file.
	if err := os.Remove(segmentName(dir, 0, txnIndexSuffix)); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, smallCfg(), false, 0)
	defer func() { l.Close() }()
	if got, _ := l.AbortedTransactions(0, 8); !slices.Equal(got, scenarioAborted) {
		t.Fatalf("after recovery: %+v", got)
	}
	if got, _ := os.ReadFile(segmentName(dir, 0, txnIndexSuffix)); !slices.Equal(got, want) {
		t.Fatalf("rebuilt .txnindex % x", got)
	}
	if got := l.LastStableOffset(8); got != 7 {
		t.Fatalf("LSO after recovery: %d", got)
	}
	// With no snapshot at all, the replay alone brings the open
	// transaction back.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range segFiles(t, dir, snapshotSuffix) {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	l = openLog(t, dir, smallCfg(), false, 0)
	if got := l.LastStableOffset(8); got != 7 {
		t.Fatalf("LSO after a replay without snapshots: %d", got)
	}
	if got, _ := l.AbortedTransactions(0, 8); !slices.Equal(got, scenarioAborted) {
		t.Fatalf("after a replay without snapshots: %+v", got)
	}
}

// Recovery of a later segment rebuilds its index from the transactions
// ongoing at its start, which the snapshot at the roll carries.
func TestFileLogTxnIndexRebuiltAcrossSegments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallCfg()
	cfg.SegmentBytes = 300
	l := openLog(t, dir, cfg, true, 0)
	appendOne(t, l, txnRecords(t, 1, 0, 0, 100, "a"))
	appendOne(t, l, txnRecords(t, 2, 0, 0, 100, "b"))
	for i := 0; i < 6; i++ {
		appendOne(t, l, mkBatch(t, 1, 100, "p"))
	}
	mustMarker(t, l, Marker{ProducerID: 2, ProducerEpoch: 0, CoordinatorEpoch: 0})
	mustMarker(t, l, Marker{ProducerID: 1, ProducerEpoch: 0, CoordinatorEpoch: 0})
	bases := l.SegmentBaseOffsets()
	if len(bases) < 2 {
		t.Fatalf("segments %v: want the markers past the first", bases)
	}
	before, _ := l.AbortedTransactions(0, l.LogEndOffset())
	want := []AbortedTxn{{ProducerID: 2, FirstOffset: 1, LastOffset: 8, LastStableOffset: 0}, {ProducerID: 1, FirstOffset: 0, LastOffset: 9, LastStableOffset: 10}}
	if !slices.Equal(before, want) {
		t.Fatalf("aborted %+v, want %+v", before, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	last := bases[len(bases)-1]
	if err := os.Remove(segmentName(dir, last, txnIndexSuffix)); err != nil {
		t.Fatalf("the last segment must hold an abort: %v", err)
	}
	l = openLog(t, dir, cfg, false, last)
	defer l.Close()
	if got, _ := l.AbortedTransactions(0, l.LogEndOffset()); !slices.Equal(got, want) {
		t.Fatalf("after recovering segment %d: %+v", last, got)
	}
}

func TestFileLogTxnIndexGoesWithItsSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openLog(t, dir, smallCfg(), true, 0)
	defer l.Close()
	writeTxnScenario(t, l)
	appendN(t, l, 30, 3, 200, 1)
	if segs := l.SegmentBaseOffsets(); len(segs) < 2 {
		t.Fatalf("segments %v", segs)
	}
	if got := segFiles(t, dir, txnIndexSuffix); len(got) != 1 {
		t.Fatalf("txn index files %v", got)
	}
	if err := l.DeleteRecordsBefore(l.SegmentBaseOffsets()[1]); err != nil {
		t.Fatal(err)
	}
	if got := segFiles(t, dir, txnIndexSuffix); len(got) != 0 {
		t.Fatalf("txn index files after the segment went: %v", got)
	}
	if got, _ := l.AbortedTransactions(l.LogStartOffset(), l.LogEndOffset()); len(got) != 0 {
		t.Fatalf("aborted txns after deletion: %+v", got)
	}
}

// The cleaner drops an aborted transaction's records instead of letting
// them replace committed values, and stops at the last stable offset.
func TestConformanceCompactionWithTransactions(t *testing.T) {
	cfg := smallCfg()
	cfg.CleanupPolicy = "compact"
	cfg.SegmentBytes = 200
	for name, l := range logImpls(t, cfg) {
		t.Run(name, func(t *testing.T) {
			appendOne(t, l, mkBatch(t, 1, 100, "k"))                  // 0: k committed
			appendOne(t, l, txnRecords(t, 1, 0, 0, 100, "k"))         // 1: aborted k
			mustMarker(t, l, Marker{ProducerID: 1, ProducerEpoch: 0}) // 2: abort
			appendOne(t, l, txnRecords(t, 2, 0, 0, 100, "j"))         // 3: committed j
			mustMarker(t, l, Marker{ProducerID: 2, Commit: true})     // 4: commit
			appendOne(t, l, mkBatch(t, 1, 100, "j"))                  // 5: plain j
			appendOne(t, l, txnRecords(t, 5, 0, 0, 100, "j"))         // 6: ongoing j
			appendOne(t, l, mkBatch(t, 1, 100, "z"))                  // 7
			appendOne(t, l, mkBatch(t, 1, 100, "z"))                  // 8
			if segs := len(l.(interface{ SegmentBaseOffsets() []int64 }).SegmentBaseOffsets()); segs < 5 {
				t.Fatalf("%d segments; the test wants several", segs)
			}
			if err := l.Maintain(time.UnixMilli(1 << 40)); err != nil {
				t.Fatal(err)
			}
			got := logRecords(t, l)
			if got[0] != "k=v100-0" {
				t.Errorf("committed k lost: %v", got)
			}
			if _, ok := got[1]; ok {
				t.Errorf("aborted record kept: %v", got)
			}
			if _, ok := got[3]; ok {
				t.Errorf("committed j not replaced by the later j: %v", got)
			}
			if _, ok := got[6]; !ok {
				t.Errorf("ongoing transaction's record cleaned: %v", got)
			}
			for _, off := range []int64{2, 4} {
				if bs := readBatches(t, l, off, off+1, 1<<20, true); len(bs) == 0 || !bs[0].Header.IsControl() {
					t.Errorf("marker at %d not kept", off)
				}
			}
		})
	}
}
