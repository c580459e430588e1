package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore/producerstate"
)

// pidBatch is a client's batch of n records from producer pid at epoch 0
// starting at sequence seq, timestamped ts.
func pidBatch(t testing.TB, pid int64, seq int32, n int, ts int64) Batch {
	t.Helper()
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{OffsetDelta: int32(i), Value: make([]byte, 40), Timestamp: ts}
	}
	b, err := EncodeBatch(BatchOptions{PartitionLeaderEpoch: -1, ProducerID: pid, BaseSequence: seq}, recs)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := ParseBatches(b.Raw)
	if err != nil {
		t.Fatal(err)
	}
	return bs[0]
}

// producerLastSeqs is the table in short: producer id → last sequence.
func producerLastSeqs(l Log) map[int64]int32 {
	out := map[int64]int32{}
	for _, p := range l.ActiveProducers() {
		out[p.ID] = p.LastSeq()
	}
	return out
}

func mustAppend(t *testing.T, l Log, b Batch) AppendInfo {
	t.Helper()
	info, err := l.AppendAsLeader([]Batch{b}, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// The leader's append judges idempotent batches under the log's lock:
// a retry of any of the last five batches is answered with its original
// offsets and not appended; gaps and older epochs are refused.
func TestConformanceProducerChecks(t *testing.T) {
	now := time.Now().UnixMilli()
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			for i := int32(0); i < 6; i++ {
				if info := mustAppend(t, l, pidBatch(t, 7, i*2, 2, now)); info.Duplicate || info.FirstOffset != int64(i)*2 {
					t.Fatalf("batch %d: %+v", i, info)
				}
			}
			info := mustAppend(t, l, pidBatch(t, 7, 4, 2, now))
			if !info.Duplicate || info.FirstOffset != 4 || info.LastOffset != 5 || l.LogEndOffset() != 12 {
				t.Fatalf("retry of sequences 4-5: %+v, LEO %d", info, l.LogEndOffset())
			}
			if _, err := l.AppendAsLeader([]Batch{pidBatch(t, 7, 20, 1, now)}, 0, -1); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
				t.Fatalf("gap: %v", err)
			}
			if _, err := l.AppendAsLeader([]Batch{pidBatch(t, 7, 12, 1, now), pidBatch(t, 8, 0, 1, now)}, 0, -1); err == nil {
				t.Fatal("two producer batches in one leader append were accepted")
			}
			if got := producerLastSeqs(l); !maps(got, map[int64]int32{7: 11}) {
				t.Fatalf("table %v", got)
			}
		})
	}
}

// Truncation rebuilds the table as of the new end: a producer's last
// sequence comes back down, a producer seen only in the removed suffix is
// gone, and (FileLog) the snapshots past the new end are deleted.
func TestConformanceProducersTruncate(t *testing.T) {
	now := time.Now().UnixMilli()
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			for i := int32(0); i < 20; i++ {
				mustAppend(t, l, pidBatch(t, 1, i*3, 3, now)) // offsets 0-59
			}
			mustAppend(t, l, pidBatch(t, 2, 0, 1, now)) // offset 60
			if err := l.TruncateTo(31); err != nil {
				t.Fatal(err)
			}
			// Batches end at 2, 5, ... 29: truncating to 31 cuts the batch
			// 30-32 whole, so the last kept is sequences 27-29.
			if got := producerLastSeqs(l); !maps(got, map[int64]int32{1: 29}) {
				t.Fatalf("after truncation to 31 (LEO %d): %v, want {1: 29}", l.LogEndOffset(), got)
			}
			if info := mustAppend(t, l, pidBatch(t, 1, 30, 3, now)); info.Duplicate || info.FirstOffset != l.LogEndOffset()-3 {
				t.Fatalf("sequence 30 after truncation: %+v", info)
			}
			if fl, ok := l.(*FileLog); ok {
				for _, off := range fl.ProducerSnapshotOffsets() {
					if off > 30 {
						t.Errorf("snapshot at %d survived truncation to 30", off)
					}
				}
			}
			if err := l.TruncateFullyAndStartAt(100); err != nil {
				t.Fatal(err)
			}
			if got := l.ActiveProducers(); len(got) != 0 {
				t.Fatalf("after TruncateFullyAndStartAt: %+v", got)
			}
			if fl, ok := l.(*FileLog); ok && len(fl.ProducerSnapshotOffsets()) != 0 {
				t.Fatalf("snapshots left after TruncateFullyAndStartAt: %v", fl.ProducerSnapshotOffsets())
			}
		})
	}
}

// DeleteRecords forgets producers whose every batch is below the new log
// start; Maintain expires producers idle for producer.id.expiration.ms.
func TestConformanceProducersEvictAndExpire(t *testing.T) {
	now := time.Now()
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			mustAppend(t, l, pidBatch(t, 1, 0, 5, now.UnixMilli()))                   // 0-4
			mustAppend(t, l, pidBatch(t, 2, 0, 5, now.Add(time.Hour).UnixMilli()))    // 5-9
			mustAppend(t, l, pidBatch(t, 3, 0, 5, now.Add(30*time.Hour).UnixMilli())) // 10-14
			if err := l.DeleteRecordsBefore(5); err != nil {
				t.Fatal(err)
			}
			if got := producerLastSeqs(l); !maps(got, map[int64]int32{2: 4, 3: 4}) {
				t.Fatalf("after DeleteRecords to 5: %v", got)
			}
			// Producer 2 was last seen at now+1h; at now+26h it is idle for
			// more than a day, producer 3 (seen at now+30h) is not.
			if err := l.Maintain(now.Add(26 * time.Hour)); err != nil {
				t.Fatal(err)
			}
			if got := producerLastSeqs(l); !maps(got, map[int64]int32{3: 4}) {
				t.Fatalf("after expiry: %v", got)
			}
		})
	}
}

func maps(a, b map[int64]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func snapshotFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	slices.Sort(m)
	return m
}

// Snapshots are written at every roll (named by the new segment's base
// offset) and at close (the log end offset), and a reopened log starts
// from the latest one: the table is the one closed.
func TestFileLogSnapshotsAtRollAndClose(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l, err := OpenFileLog(dir, smallCfg(), FileLogOptions{CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for i := int32(0); i < 30; i++ {
		mustAppend(t, l, pidBatch(t, int64(1+i%3), i/3*2, 2, now))
	}
	bases := l.SegmentBaseOffsets()
	if len(bases) < 3 {
		t.Fatalf("segments %v: the test needs rolls", bases)
	}
	var want []string
	for _, b := range bases[1:] {
		want = append(want, filepath.Base(segmentName(dir, b, ".snapshot")))
	}
	if got := snapshotFiles(t, dir); !slices.Equal(got, want) {
		t.Fatalf("snapshot files %v, want one per roll %v", got, want)
	}
	// The snapshot at a roll holds the table as of that offset.
	data, err := os.ReadFile(filepath.Join(dir, want[0]))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := producerstate.DecodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range entries {
		if p.LastOffset() >= bases[1] {
			t.Fatalf("snapshot at %d holds producer %d's batch at %d", bases[1], p.ID, p.LastOffset())
		}
	}
	before := l.ActiveProducers()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	leo := int64(60)
	want = append(want, filepath.Base(segmentName(dir, leo, ".snapshot")))
	if got := snapshotFiles(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after close: %v, want %v", got, want)
	}
	l2, err := OpenFileLog(dir, smallCfg(), FileLogOptions{CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := l2.ActiveProducers(); !equalProducers(got, before) {
		t.Fatalf("reopened table\n%+v\nclosed with\n%+v", got, before)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	// With every segment emptied the log ends at the last segment's base,
	// and no batch is left to replay: the table can only come from the
	// snapshot there, while the later ones (past the new end) go.
	last := bases[len(bases)-1]
	for _, b := range bases {
		if err := os.Truncate(segmentName(dir, b, ".log"), 0); err != nil {
			t.Fatal(err)
		}
	}
	l3, err := OpenFileLog(dir, smallCfg(), FileLogOptions{CleanShutdown: false})
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	if l3.LogEndOffset() != last {
		t.Fatalf("log end %d, want %d", l3.LogEndOffset(), last)
	}
	want3 := map[int64]int32{1: 15, 2: 15, 3: 15} // batches 0..23 of 30 end below offset 48
	if got := producerLastSeqs(l3); !maps(got, want3) {
		t.Fatalf("table from the snapshot at %d: %v, want %v", last, got, want3)
	}
	if got := l3.ProducerSnapshotOffsets(); got[len(got)-1] != last {
		t.Fatalf("snapshots %v: the ones past the log end %d must go", got, last)
	}
}

func equalProducers(a, b []producerstate.Producer) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Epoch != b[i].Epoch || a[i].LastSeq() != b[i].LastSeq() || a[i].LastOffset() != b[i].LastOffset() {
			return false
		}
	}
	return true
}

// Clean and unclean reopen: the latest snapshot plus a replay of the
// batches after it give back every producer with all its cached batches
// written after the snapshot, so a retry of an older in-flight batch after
// a crash is still a duplicate. A corrupt latest snapshot is deleted and
// the one before it used.
func TestFileLogProducersSurviveReopen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		clean   bool
		corrupt bool
	}{{"clean", true, false}, {"crash", false, false}, {"crash with corrupt snapshot", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t-0")
			l, err := OpenFileLog(dir, smallCfg(), FileLogOptions{CleanShutdown: true})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now().UnixMilli()
			for i := int32(0); i < 40; i++ {
				mustAppend(t, l, pidBatch(t, 5, i*2, 2, now))
			}
			mustAppend(t, l, pidBatch(t, 6, 0, 1, now))
			want := producerLastSeqs(l)
			if tc.clean {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				// A SIGKILL: nothing closed, no snapshot at the log end;
				// what was written is in the files.
				l.bg.Wait()
				defer l.Close()
			}
			snaps := snapshotFiles(t, dir)
			if len(snaps) < 2 {
				t.Fatalf("snapshots %v: the test needs two", snaps)
			}
			if tc.corrupt {
				if err := os.WriteFile(filepath.Join(dir, snaps[len(snaps)-1]), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l2, err := OpenFileLog(dir, smallCfg(), FileLogOptions{CleanShutdown: tc.clean, RecoveryPoint: 0})
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			if got := producerLastSeqs(l2); !maps(got, want) {
				t.Fatalf("reopened table %v, want %v", got, want)
			}
			if !tc.clean {
				// sequences 72-73 were the fifth-last batch of producer 5.
				info := mustAppend(t, l2, pidBatch(t, 5, 72, 2, now))
				if !info.Duplicate || info.FirstOffset != 72 {
					t.Fatalf("retry of an older in-flight batch after the crash: %+v", info)
				}
			}
			if info := mustAppend(t, l2, pidBatch(t, 5, 80, 2, now)); info.Duplicate || info.FirstOffset != 81 {
				t.Fatalf("next sequence after reopen: %+v", info)
			}
			// Open wrote a snapshot at the log end it found (Kafka does).
			if got := l2.ProducerSnapshotOffsets(); got[len(got)-1] < 81 {
				t.Fatalf("snapshots after open: %v", got)
			}
		})
	}
}

// Retention deletes a segment's snapshot with the segment.
func TestFileLogSnapshotsDeletedWithSegments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l, err := OpenFileLog(dir, smallCfg(), FileLogOptions{CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := time.Now().UnixMilli()
	for i := int32(0); i < 30; i++ {
		mustAppend(t, l, pidBatch(t, 9, i*2, 2, now))
	}
	bases := l.SegmentBaseOffsets()
	if err := l.DeleteRecordsBefore(bases[2]); err != nil {
		t.Fatal(err)
	}
	for _, off := range l.ProducerSnapshotOffsets() {
		if off < bases[2] {
			t.Errorf("snapshot at %d kept below the first segment %d", off, bases[2])
		}
	}
	for _, name := range snapshotFiles(t, dir) {
		if name < filepath.Base(segmentName(dir, bases[2], ".snapshot")) {
			t.Errorf("snapshot file %s kept below the first segment %d", name, bases[2])
		}
	}
	if got := producerLastSeqs(l); !maps(got, map[int64]int32{9: 59}) {
		t.Fatalf("table %v", got)
	}
}
