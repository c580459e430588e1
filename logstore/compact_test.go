package logstore

import (
	"os"
	"testing"
	"time"
)

func compactedLog(t *testing.T, dir string) (*FileLog, Config) {
	t.Helper()
	cfg := smallCfg()
	cfg.CleanupPolicy = "compact,delete"
	cfg.RetentionMs = -1
	l := openLog(t, dir, cfg, true, 0)
	for i := 0; i < 40; i++ {
		if _, err := l.AppendAsLeader([]Batch{mkBatch(t, 4, int64(i), "a", "b", "c", "d")}, 0, -1); err != nil {
			t.Fatal(err)
		}
	}
	return l, cfg
}

func TestFileLogCompactionSurvivesReopen(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	l, cfg := compactedLog(t, dir)
	before := l.Size()
	if err := l.Maintain(time.UnixMilli(1000)); err != nil {
		t.Fatal(err)
	}
	if l.Size() >= before {
		t.Fatalf("compaction did not shrink the log: %d → %d", before, l.Size())
	}
	want := logRecords(t, l)
	if _, err := os.Stat(segmentName(dir, 0, ".log.cleaned")); !os.IsNotExist(err) {
		t.Fatal(".cleaned file left behind")
	}
	l.Close()
	l2 := openLog(t, dir, cfg, true, 0)
	defer l2.Close()
	got := logRecords(t, l2)
	if len(got) != len(want) {
		t.Fatalf("%d records after reopen, %d before", len(got), len(want))
	}
	for off, v := range want {
		if got[off] != v {
			t.Fatalf("offset %d: %q vs %q", off, got[off], v)
		}
	}
	// Kafka's cleaner may leave offset gaps; reads at any offset still work.
	for off := int64(0); off < l2.LogEndOffset(); off++ {
		if _, err := l2.Read(off, 1<<62, 100, true); err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
	}
}

// TestFileLogRecoversInterruptedSwap: a crash after `.log.swap` was
// written but before it replaced the segment is finished at load, and a
// leftover `.cleaned` file is dropped.
func TestFileLogRecoversInterruptedSwap(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	l, cfg := compactedLog(t, dir)
	bases := l.SegmentBaseOffsets()
	l.Close()
	// The "cleaned" first segment: just its first batch.
	data, _ := os.ReadFile(segmentName(dir, bases[0], ".log"))
	bs, _ := ParseBatches(data)
	os.WriteFile(segmentName(dir, bases[0], ".log.swap"), bs[0].Raw, 0o644)
	os.WriteFile(segmentName(dir, bases[1], ".log.cleaned"), []byte("half written"), 0o644)
	l2 := openLog(t, dir, cfg, false, 0)
	defer l2.Close()
	if _, err := os.Stat(segmentName(dir, bases[1], ".log.cleaned")); !os.IsNotExist(err) {
		t.Fatal(".cleaned not removed")
	}
	if _, err := os.Stat(segmentName(dir, bases[0], ".log.swap")); !os.IsNotExist(err) {
		t.Fatal(".swap not renamed")
	}
	got := readBatches(t, l2, 0, bases[1], 1<<20, true)
	if len(got) != 1 || string(got[0].Raw) != string(bs[0].Raw) {
		t.Fatalf("first segment is not the swapped one: %d batches", len(got))
	}
	if l2.LogEndOffset() != 160 {
		t.Fatalf("LEO %d", l2.LogEndOffset())
	}
}
