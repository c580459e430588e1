package logstore

import (
	"errors"
	"testing"
	"time"
)

// logImpls is the conformance matrix: every test runs against both.
func logImpls(t *testing.T, cfg Config) map[string]Log {
	t.Helper()
	fl, err := OpenFileLog(t.TempDir()+"/t-0", cfg, FileLogOptions{CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Close() })
	return map[string]Log{"file": fl, "mem": NewMemLog(cfg)}
}

func smallCfg() Config {
	c := DefaultConfig()
	c.SegmentBytes = 1024
	c.IndexIntervalBytes = 100
	return c
}

func TestConformanceAppendRead(t *testing.T) {
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			for i := 0; i < 40; i++ {
				info, err := l.AppendAsLeader([]Batch{mkBatch(t, 3, int64(1000+i*3))}, 5, -1)
				if err != nil {
					t.Fatal(err)
				}
				if info.FirstOffset != int64(i*3) || info.LastOffset != int64(i*3+2) {
					t.Fatalf("append %d: offsets %d..%d", i, info.FirstOffset, info.LastOffset)
				}
			}
			if l.LogEndOffset() != 120 || l.LogStartOffset() != 0 {
				t.Fatalf("LEO %d LSO %d", l.LogEndOffset(), l.LogStartOffset())
			}
			for off := int64(0); off < 120; off++ {
				bs := readBatches(t, l, off, 1<<62, 1<<20, false)
				if len(bs) == 0 || bs[0].Header.BaseOffset != off/3*3 {
					t.Fatalf("read at %d: first batch %+v", off, bs)
				}
				if last := bs[len(bs)-1].Header.LastOffset(); last != 119 {
					t.Fatalf("read at %d ended at %d", off, last)
				}
				if bs[0].Header.PartitionLeaderEpoch != 5 {
					t.Fatalf("leader epoch not stamped: %d", bs[0].Header.PartitionLeaderEpoch)
				}
			}
			if bs := readBatches(t, l, 120, 1<<62, 1<<20, false); len(bs) != 0 {
				t.Fatalf("read at LEO gave %d batches", len(bs))
			}
			for _, off := range []int64{-1, 121} {
				if _, err := l.Read(off, 1<<62, 100, true); !errors.Is(err, ErrOffsetOutOfRange) {
					t.Fatalf("read at %d: %v", off, err)
				}
			}
			recs := logRecords(t, l)
			if len(recs) != 120 || recs[7] != "=v1006-1" {
				t.Fatalf("records: %d, [7]=%q", len(recs), recs[7])
			}
		})
	}
}

func TestConformanceReadLimits(t *testing.T) {
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			appendN(t, l, 10, 2, 0, 0)
			size := len(mkBatch(t, 2, 0).Raw)
			if bs := readBatches(t, l, 0, 1<<62, 1, false); len(bs) != 0 {
				t.Fatalf("maxBytes 1 without minOneBatch gave %d batches", len(bs))
			}
			if bs := readBatches(t, l, 0, 1<<62, 1, true); len(bs) != 1 {
				t.Fatalf("minOneBatch gave %d batches", len(bs))
			}
			if bs := readBatches(t, l, 4, 1<<62, 3*size, false); len(bs) != 3 || bs[0].Header.BaseOffset != 4 {
				t.Fatalf("3 batches worth of bytes gave %d", len(bs))
			}
			// maxOffset (the high watermark) excludes batches starting at or above it.
			bs := readBatches(t, l, 0, 7, 1<<20, true)
			if len(bs) != 4 || bs[3].Header.LastOffset() != 7 {
				t.Fatalf("maxOffset 7 gave %d batches", len(bs))
			}
			if bs := readBatches(t, l, 6, 6, 1<<20, true); len(bs) != 0 {
				t.Fatalf("maxOffset == start gave %d batches", len(bs))
			}
		})
	}
}

func TestConformanceTimestamps(t *testing.T) {
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			if ts, off := l.MaxTimestamp(); ts != -1 || off != -1 {
				t.Fatalf("empty MaxTimestamp %d %d", ts, off)
			}
			appendN(t, l, 20, 5, 1000, 0) // record i has timestamp 1000+i
			off, ts, found, err := l.OffsetForTimestamp(1042)
			if err != nil || !found || off != 42 || ts != 1042 {
				t.Fatalf("OffsetForTimestamp(1042) = %d %d %v %v", off, ts, found, err)
			}
			off, _, found, _ = l.OffsetForTimestamp(0)
			if !found || off != 0 {
				t.Fatalf("OffsetForTimestamp(0) = %d %v", off, found)
			}
			if _, _, found, _ := l.OffsetForTimestamp(5000); found {
				t.Fatal("found a record after the last timestamp")
			}
			if ts, off := l.MaxTimestamp(); ts != 1099 || off != 99 {
				t.Fatalf("MaxTimestamp %d %d", ts, off)
			}
			// An older batch afterwards keeps the max.
			appendN(t, l, 1, 2, 10, 0)
			if ts, off := l.MaxTimestamp(); ts != 1099 || off != 99 {
				t.Fatalf("MaxTimestamp after older batch %d %d", ts, off)
			}
		})
	}
}

func TestConformanceLogAppendTime(t *testing.T) {
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			info, err := l.AppendAsLeader([]Batch{mkBatch(t, 3, 100)}, 0, 777)
			if err != nil || info.LogAppendTime != 777 {
				t.Fatalf("%+v %v", info, err)
			}
			bs := readBatches(t, l, 0, 1<<62, 1<<20, true) // ParseBatches checks the new CRC
			h := bs[0].Header
			if !h.TimestampTypeIsLogAppend() || h.MaxTimestamp != 777 {
				t.Fatalf("header %+v", h)
			}
			if off, ts, found, _ := l.OffsetForTimestamp(500); !found || off != 0 || ts != 777 {
				t.Fatalf("OffsetForTimestamp under LogAppendTime: %d %d %v", off, ts, found)
			}
		})
	}
}

func TestConformanceRetention(t *testing.T) {
	cfg := smallCfg()
	cfg.RetentionMs = 1000
	for name, l := range logImpls(t, cfg) {
		t.Run(name, func(t *testing.T) {
			batch := len(mkBatch(t, 4, 0).Raw)
			perSeg := int(cfg.SegmentBytes) / batch
			// Timestamps 0.. for the first 3 segments, then new ones.
			appendN(t, l, perSeg*3, 4, 0, 0)
			old := l.LogEndOffset()
			appendN(t, l, perSeg, 4, 100000, 0)
			if err := l.Maintain(time.UnixMilli(100500)); err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() != old {
				t.Fatalf("after time retention LSO %d, want %d", l.LogStartOffset(), old)
			}
			if _, err := l.Read(0, 1<<62, 100, true); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("read below LSO: %v", err)
			}
			// Everything expired: the active segment goes too (after a roll).
			leo := l.LogEndOffset()
			if err := l.Maintain(time.UnixMilli(10_000_000)); err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() != leo || l.LogEndOffset() != leo || l.Size() != 0 {
				t.Fatalf("all expired: LSO %d LEO %d size %d", l.LogStartOffset(), l.LogEndOffset(), l.Size())
			}
			// Size retention.
			c := l.Config()
			c.RetentionMs = -1
			c.RetentionBytes = 2 * c.SegmentBytes
			l.SetConfig(c)
			appendN(t, l, perSeg*5, 4, 0, 0)
			if err := l.Maintain(time.UnixMilli(10_000_000)); err != nil {
				t.Fatal(err)
			}
			// Whole segments only: Kafka may stay up to one segment over.
			if l.Size() > c.RetentionBytes+c.SegmentBytes || l.Size() < c.RetentionBytes-c.SegmentBytes {
				t.Fatalf("size retention left %d bytes (limit %d)", l.Size(), c.RetentionBytes)
			}
			if got := len(logRecords(t, l)); int64(got) != l.LogEndOffset()-l.LogStartOffset() {
				t.Fatalf("%d records between LSO %d and LEO %d", got, l.LogStartOffset(), l.LogEndOffset())
			}
		})
	}
}

func TestConformanceTruncateAndDeleteRecords(t *testing.T) {
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			appendN(t, l, 5, 4, 0, 1)
			appendN(t, l, 30, 4, 100, 2)
			if err := l.TruncateTo(50); err != nil {
				t.Fatal(err)
			}
			if l.LogEndOffset() != 48 { // offset 50 is inside batch 48..51
				t.Fatalf("LEO after TruncateTo(50) = %d", l.LogEndOffset())
			}
			if l.RecoveryPoint() > 48 {
				t.Fatalf("recovery point %d past LEO", l.RecoveryPoint())
			}
			appendN(t, l, 2, 4, 200, 3)
			if got := logRecords(t, l); len(got) != 56 || got[48] != "=v200-0" {
				t.Fatalf("after truncate+append: %d records, [48]=%q", len(got), got[48])
			}
			if err := l.TruncateTo(10); err != nil {
				t.Fatal(err)
			}
			if e := l.LeaderEpochEntries(); len(e) != 1 || e[0] != (EpochEntry{1, 0}) {
				t.Fatalf("epochs after truncation %v", e)
			}
			appendN(t, l, 30, 4, 300, 4)
			if err := l.DeleteRecordsBefore(61); err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() != 61 {
				t.Fatalf("LSO %d", l.LogStartOffset())
			}
			if _, err := l.Read(60, 1<<62, 100, true); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("read below LSO: %v", err)
			}
			if bs := readBatches(t, l, 61, 1<<62, 100, true); bs[0].Header.BaseOffset != 60 {
				t.Fatalf("read at 61 starts at %d", bs[0].Header.BaseOffset)
			}
			if err := l.DeleteRecordsBefore(l.LogEndOffset() + 1); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("DeleteRecordsBefore past LEO: %v", err)
			}
			if e := l.LeaderEpochEntries(); e[0] != (EpochEntry{4, 61}) {
				t.Fatalf("epochs after DeleteRecords %v", e)
			}
			if err := l.TruncateFullyAndStartAt(500); err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() != 500 || l.LogEndOffset() != 500 || l.Size() != 0 {
				t.Fatalf("after TruncateFullyAndStartAt: %d %d %d", l.LogStartOffset(), l.LogEndOffset(), l.Size())
			}
			appendN(t, l, 1, 1, 0, 5)
			if bs := readBatches(t, l, 500, 1<<62, 100, true); len(bs) != 1 || bs[0].Header.BaseOffset != 500 {
				t.Fatalf("read after restart at 500: %v", bs)
			}
		})
	}
}

func TestConformanceEpochs(t *testing.T) {
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			appendN(t, l, 2, 5, 0, 0) // 0..9 epoch 0
			appendN(t, l, 2, 5, 0, 2) // 10..19 epoch 2
			appendN(t, l, 1, 5, 0, 2) // same epoch: no entry
			appendN(t, l, 1, 3, 0, 4) // 25..27 epoch 4
			want := []EpochEntry{{0, 0}, {2, 10}, {4, 25}}
			got := l.LeaderEpochEntries()
			if len(got) != len(want) {
				t.Fatalf("epochs %v", got)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("epochs %v, want %v", got, want)
				}
			}
			for _, c := range []struct {
				ask       int32
				epoch     int32
				endOffset int64
			}{{-1, -1, -1}, {0, 0, 10}, {1, 0, 10}, {2, 2, 25}, {3, 2, 25}, {4, 4, 28}, {5, -1, -1}} {
				e, o := l.EndOffsetForEpoch(c.ask)
				if e != c.epoch || o != c.endOffset {
					t.Errorf("EndOffsetForEpoch(%d) = %d %d, want %d %d", c.ask, e, o, c.epoch, c.endOffset)
				}
			}
		})
	}
}

func TestConformanceFollower(t *testing.T) {
	leader := NewMemLog(smallCfg())
	appendN(t, leader, 6, 3, 0, 7)
	res, _ := leader.Read(0, 1<<62, 1<<20, true)
	data, _ := res.Bytes()
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			bs, err := ParseBatches(append([]byte(nil), data...))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.AppendAsFollower(bs[1:]); !errors.Is(err, ErrUnexpectedAppendOffset) {
				t.Fatalf("gap accepted: %v", err)
			}
			info, err := l.AppendAsFollower(bs)
			if err != nil || info.FirstOffset != 0 || info.LastOffset != 17 {
				t.Fatalf("%+v %v", info, err)
			}
			if e := l.LeaderEpochEntries(); len(e) != 1 || e[0] != (EpochEntry{7, 0}) {
				t.Fatalf("follower epochs %v", e)
			}
			out := readBatches(t, l, 0, 1<<62, 1<<20, true)
			if len(out) != 6 || string(out[5].Raw) != string(bs[5].Raw) {
				t.Fatal("follower log differs from leader's")
			}
		})
	}
}

func TestConformanceRecordTooLarge(t *testing.T) {
	cfg := smallCfg()
	cfg.SegmentBytes = 200
	for name, l := range logImpls(t, cfg) {
		t.Run(name, func(t *testing.T) {
			if _, err := l.AppendAsLeader([]Batch{mkBatch(t, 20, 0)}, 0, -1); !errors.Is(err, ErrRecordTooLarge) {
				t.Fatalf("got %v", err)
			}
			if l.LogEndOffset() != 0 {
				t.Fatal("rejected batch was appended")
			}
		})
	}
}

func TestConformanceCompaction(t *testing.T) {
	cfg := smallCfg()
	cfg.CleanupPolicy = "compact"
	cfg.DeleteRetentionMs = 1000
	for name, l := range logImpls(t, cfg) {
		t.Run(name, func(t *testing.T) {
			keys := []string{"a", "b", "c", "a", "b"}
			for i := 0; i < 30; i++ {
				if _, err := l.AppendAsLeader([]Batch{mkBatch(t, 5, int64(i*5), keys...)}, 0, -1); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := l.AppendAsLeader([]Batch{tombstone(t, "c", 200)}, 0, -1); err != nil {
				t.Fatal(err)
			}
			// Fill enough to roll the tombstone out of the active segment.
			for i := 0; i < 12; i++ {
				if _, err := l.AppendAsLeader([]Batch{mkBatch(t, 1, 300, "z")}, 0, -1); err != nil {
					t.Fatal(err)
				}
			}
			leo := l.LogEndOffset()
			if err := l.Maintain(time.UnixMilli(400)); err != nil {
				t.Fatal(err)
			}
			recs := logRecords(t, l)
			count := map[string]int{}
			for _, kv := range recs {
				count[kv[:1]]++
			}
			if count["a"] != 1 || count["b"] != 1 || count["c"] != 1 {
				t.Fatalf("after compaction: %v (%d records)", count, len(recs))
			}
			if recs[148] != "a=v145-3" || recs[150] != "c=" {
				t.Fatalf("latest values lost: a=%q c=%q", recs[148], recs[150])
			}
			if l.LogEndOffset() != leo || l.LogStartOffset() != 0 {
				t.Fatal("compaction moved the log's ends")
			}
			// Offsets stay readable from the start, gaps and all.
			if bs := readBatches(t, l, 0, 1<<62, 1<<20, true); len(bs) == 0 || bs[0].Header.LastOffset() < 0 {
				t.Fatal("read from 0 after compaction failed")
			}
			// Much later the tombstone is past delete.retention.ms.
			if err := l.Maintain(time.UnixMilli(100000)); err != nil {
				t.Fatal(err)
			}
			recs = logRecords(t, l)
			if _, ok := recs[150]; ok {
				t.Fatal("tombstone kept past delete.retention.ms")
			}
			if recs[148] != "a=v145-3" {
				t.Fatal("latest a lost in second pass")
			}
		})
	}
}

func TestConformanceRetentionStopsAtHighWatermark(t *testing.T) {
	cfg := smallCfg()
	cfg.RetentionMs = 1000
	for name, l := range logImpls(t, cfg) {
		t.Run(name, func(t *testing.T) {
			appendN(t, l, 60, 2, 0, 0)
			segs := l.(interface{ SegmentBaseOffsets() []int64 }).SegmentBaseOffsets()
			if len(segs) < 4 {
				t.Fatalf("segments %v", segs)
			}
			// Only the first two segments are below the high watermark.
			l.(HighWatermarkSetter).SetHighWatermark(segs[2])
			if err := l.Maintain(time.UnixMilli(1 << 40)); err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() != segs[2] {
				t.Fatalf("LSO %d, want %d", l.LogStartOffset(), segs[2])
			}
			l.(HighWatermarkSetter).SetHighWatermark(l.LogEndOffset())
			if err := l.Maintain(time.UnixMilli(1 << 40)); err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() != l.LogEndOffset() {
				t.Fatalf("LSO %d LEO %d", l.LogStartOffset(), l.LogEndOffset())
			}
		})
	}
}
