package logstore

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openLog(t *testing.T, dir string, cfg Config, clean bool, rp int64) *FileLog {
	t.Helper()
	l, err := OpenFileLog(dir, cfg, FileLogOptions{CleanShutdown: clean, RecoveryPoint: rp, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func segFiles(t *testing.T, dir, suffix string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	sort.Strings(m)
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func TestFileLogSegmentNamesAndIndexFormat(t *testing.T) {
	dir := t.TempDir() + "/orders-3"
	cfg := smallCfg()
	l := openLog(t, dir, cfg, true, 0)
	appendN(t, l, 40, 3, 1000, 0)
	bases := l.SegmentBaseOffsets()
	if len(bases) < 3 || bases[0] != 0 {
		t.Fatalf("segments %v", bases)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	logs := segFiles(t, dir, ".log")
	if logs[0] != "00000000000000000000.log" || len(logs) != len(bases) {
		t.Fatalf("log files %v", logs)
	}
	for _, b := range bases {
		name := segmentName(dir, b, ".log")
		data, _ := os.ReadFile(name)
		bs, err := ParseBatches(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if bs[0].Header.BaseOffset != b {
			t.Fatalf("%s starts at %d", name, bs[0].Header.BaseOffset)
		}
		// Every index entry points at the batch holding its offset.
		idx, _ := os.ReadFile(segmentName(dir, b, ".index"))
		if len(idx)%8 != 0 || len(idx) == 0 {
			t.Fatalf("index of %d has %d bytes (trimmed on close?)", b, len(idx))
		}
		for i := 0; i < len(idx); i += 8 {
			rel := int64(binary.BigEndian.Uint32(idx[i:]))
			pos := int(binary.BigEndian.Uint32(idx[i+4:]))
			h := parseHeader(data[pos:])
			if h.LastOffset() != b+rel {
				t.Fatalf("index entry %d→%d: batch there ends at %d", b+rel, pos, h.LastOffset())
			}
		}
		tix, _ := os.ReadFile(segmentName(dir, b, ".timeindex"))
		if len(tix)%12 != 0 || len(tix) == 0 {
			t.Fatalf("time index of %d has %d bytes", b, len(tix))
		}
		last := tix[len(tix)-12:]
		maxTs := int64(binary.BigEndian.Uint64(last))
		var want int64
		for _, bt := range bs {
			want = max(want, bt.Header.MaxTimestamp)
		}
		if maxTs != want {
			t.Fatalf("time index of %d ends at %d, max timestamp %d", b, maxTs, want)
		}
	}
	// Reopen after a clean close: same content.
	l2 := openLog(t, dir, cfg, true, 0)
	defer l2.Close()
	if l2.LogEndOffset() != 120 || len(logRecords(t, l2)) != 120 {
		t.Fatalf("reopened LEO %d", l2.LogEndOffset())
	}
	appendN(t, l2, 1, 1, 5000, 0)
	if l2.LogEndOffset() != 121 {
		t.Fatal("append after reopen")
	}
}

func TestFileLogRollByTime(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentMs = 1000
	l := openLog(t, t.TempDir()+"/t-0", cfg, true, 0)
	defer l.Close()
	appendN(t, l, 3, 1, 10_000, 0) // timestamps 10000..10002
	if n := len(l.SegmentBaseOffsets()); n != 1 {
		t.Fatalf("rolled early: %d segments", n)
	}
	appendN(t, l, 1, 1, 11_001, 0) // 1001 ms after the first batch
	if b := l.SegmentBaseOffsets(); len(b) != 2 || b[1] != 3 {
		t.Fatalf("segments %v, want a roll at 3", b)
	}
	// No timestamps: segment.ms counts from the segment's creation.
	clock := &fakeClock{t: time.Unix(100, 0)}
	l2, err := OpenFileLog(t.TempDir()+"/t-1", cfg, FileLogOptions{CleanShutdown: true, Logger: quiet, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	l2.AppendAsLeader([]Batch{mkBatch(t, 1, -1)}, 0, -1)
	clock.t = clock.t.Add(2 * time.Second)
	l2.AppendAsLeader([]Batch{mkBatch(t, 1, -1)}, 0, -1)
	if n := len(l2.SegmentBaseOffsets()); n != 2 {
		t.Fatalf("no roll by creation time: %d segments", n)
	}
}

func TestFileLogRollWhenIndexFull(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IndexIntervalBytes = 0 // an index entry per batch after the first
	cfg.MaxIndexBytes = 4 * 8
	l := openLog(t, t.TempDir()+"/t-0", cfg, true, 0)
	defer l.Close()
	appendN(t, l, 12, 1, 0, 0)
	if n := len(l.SegmentBaseOffsets()); n < 2 {
		t.Fatalf("index full did not roll: %d segments", n)
	}
	if len(logRecords(t, l)) != 12 {
		t.Fatal("records lost")
	}
}

// crash simulates a kill: files stay as written, nothing is trimmed.
func crash(l *FileLog) {
	l.bg.Wait()
	for _, s := range l.segments {
		s.closeFiles()
	}
	l.closed = true
}

func TestFileLogRecoveryTornTail(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	cfg := smallCfg()
	l := openLog(t, dir, cfg, true, 0)
	appendN(t, l, 20, 2, 0, 3)
	leo := l.LogEndOffset()
	active := segmentName(dir, l.SegmentBaseOffsets()[len(l.SegmentBaseOffsets())-1], ".log")
	crash(l)
	// A partial batch (the start of a valid one) and garbage at the end.
	f, _ := os.OpenFile(active, os.O_APPEND|os.O_WRONLY, 0)
	part := mkBatch(t, 5, 0).Raw
	f.Write(part[:len(part)-7])
	f.Close()
	l2 := openLog(t, dir, cfg, false, 0)
	if l2.LogEndOffset() != leo {
		t.Fatalf("LEO %d after torn tail, want %d", l2.LogEndOffset(), leo)
	}
	if e := l2.LeaderEpochEntries(); len(e) != 1 || e[0] != (EpochEntry{3, 0}) {
		t.Fatalf("epochs %v", e)
	}
	appendN(t, l2, 1, 1, 0, 3)
	if len(logRecords(t, l2)) != int(leo)+1 {
		t.Fatal("append after recovery")
	}
	l2.Close()
}

func TestFileLogRecoveryCorruptCRCInMiddle(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	cfg := smallCfg()
	l := openLog(t, dir, cfg, true, 0)
	appendN(t, l, 60, 2, 0, 0)
	bases := l.SegmentBaseOffsets()
	if len(bases) < 4 {
		t.Fatalf("want several segments, got %v", bases)
	}
	crash(l)
	// Flip a byte inside the third batch of the second segment.
	victim := segmentName(dir, bases[1], ".log")
	data, _ := os.ReadFile(victim)
	bs, _ := ParseBatches(data)
	pos := len(bs[0].Raw) + len(bs[1].Raw) + BatchHeaderSize + 2
	data[pos] ^= 0xff
	os.WriteFile(victim, data, 0o644)
	l2 := openLog(t, dir, cfg, false, 0)
	defer l2.Close()
	want := bs[2].Header.BaseOffset
	if l2.LogEndOffset() != want {
		t.Fatalf("LEO %d, want truncation at %d", l2.LogEndOffset(), want)
	}
	if got := l2.SegmentBaseOffsets(); len(got) != 2 {
		t.Fatalf("later segments kept: %v", got)
	}
	if n := len(segFiles(t, dir, ".log")); n != 2 {
		t.Fatalf("%d .log files on disk", n)
	}
	if len(logRecords(t, l2)) != int(want) {
		t.Fatal("records before the corruption lost")
	}
}

func TestFileLogRecoveryPointSkipsFlushedSegments(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	cfg := smallCfg()
	l := openLog(t, dir, cfg, true, 0)
	appendN(t, l, 60, 2, 0, 0)
	bases := l.SegmentBaseOffsets()
	crash(l)
	// Corrupt the first segment: below the recovery point it is trusted
	// (Kafka only recovers from the recovery point on).
	first := segmentName(dir, bases[0], ".log")
	data, _ := os.ReadFile(first)
	data[BatchHeaderSize+1] ^= 0xff
	os.WriteFile(first, data, 0o644)
	l2 := openLog(t, dir, cfg, false, bases[2])
	defer l2.Close()
	if l2.LogEndOffset() != 120 {
		t.Fatalf("LEO %d", l2.LogEndOffset())
	}
}

func TestFileLogIndexRebuild(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	cfg := smallCfg()
	l := openLog(t, dir, cfg, true, 0)
	appendN(t, l, 60, 2, 1000, 0)
	l.Close()
	want, _ := os.ReadFile(segmentName(dir, 0, ".index"))
	wantT, _ := os.ReadFile(segmentName(dir, 0, ".timeindex"))
	for _, f := range segFiles(t, dir, "index") {
		os.Remove(filepath.Join(dir, f))
	}
	// A bogus index for a segment that does not exist is removed.
	os.WriteFile(segmentName(dir, 999, ".index"), make([]byte, 16), 0o644)
	l2 := openLog(t, dir, cfg, true, 0)
	if len(logRecords(t, l2)) != 120 {
		t.Fatal("records")
	}
	for off := int64(0); off < 120; off += 7 {
		if bs := readBatches(t, l2, off, 1<<62, 1, true); bs[0].Header.BaseOffset != off/2*2 {
			t.Fatalf("read at %d after rebuild", off)
		}
	}
	l2.Close()
	got, _ := os.ReadFile(segmentName(dir, 0, ".index"))
	gotT, _ := os.ReadFile(segmentName(dir, 0, ".timeindex"))
	if string(got) != string(want) || string(gotT) != string(wantT) {
		t.Fatalf("rebuilt index differs: %d vs %d bytes", len(got), len(want))
	}
	if _, err := os.Stat(segmentName(dir, 999, ".index")); !os.IsNotExist(err) {
		t.Fatal("orphan index kept")
	}
	// A corrupt index (garbage) is rebuilt too.
	os.WriteFile(segmentName(dir, 0, ".index"), []byte("garbage!"), 0o644)
	l3 := openLog(t, dir, cfg, true, 0)
	defer l3.Close()
	if bs := readBatches(t, l3, 33, 1<<62, 1, true); bs[0].Header.BaseOffset != 32 {
		t.Fatal("read after corrupt index")
	}
}

func TestFileLogEpochCheckpointFormat(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	l := openLog(t, dir, smallCfg(), true, 0)
	appendN(t, l, 1, 1, 0, 0)
	appendN(t, l, 1, 1, 0, 1)
	appendN(t, l, 1, 1, 0, 2)
	l.Close()
	data, _ := os.ReadFile(filepath.Join(dir, "leader-epoch-checkpoint"))
	if string(data) != "0\n3\n0 0\n1 1\n2 2\n" {
		t.Fatalf("leader-epoch-checkpoint %q", data)
	}
}

func TestFileLogLogEndBelowStartAfterReopen(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	l := openLog(t, dir, smallCfg(), true, 0)
	appendN(t, l, 5, 2, 0, 0)
	l.Close()
	l2, err := OpenFileLog(dir, smallCfg(), FileLogOptions{CleanShutdown: true, LogStartOffset: 50, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if l2.LogStartOffset() != 50 || l2.LogEndOffset() != 50 || l2.Size() != 0 {
		t.Fatalf("LSO %d LEO %d", l2.LogStartOffset(), l2.LogEndOffset())
	}
}

func TestFileLogSendfile(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1 << 20
	l := openLog(t, t.TempDir()+"/t-0", cfg, true, 0)
	defer l.Close()
	// ~8 MiB over several segments: more than the socket buffers hold, so
	// sendfile meets EAGAIN while the peer is not reading yet.
	value := make([]byte, 1000)
	for i := 0; i < 80; i++ {
		recs := make([]Record, 100)
		for j := range recs {
			value[0], value[1] = byte(i), byte(j)
			recs[j] = Record{Value: append([]byte(nil), value...), Timestamp: int64(i)}
		}
		b, err := EncodeBatch(BatchOptions{ProducerID: -1}, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendAsLeader([]Batch{b}, 0, -1); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.SegmentBaseOffsets()) < 5 {
		t.Fatal("expected several segments")
	}
	res, err := l.Read(0, 1<<62, 64<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := res.Bytes()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		time.Sleep(200 * time.Millisecond)
		b, _ := io.ReadAll(io.LimitReader(c, int64(len(want))))
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetWriteBuffer(64 << 10)
	n, err := res.WriteTo(c)
	if err != nil || n != int64(len(want)) {
		t.Fatalf("WriteTo %d %v", n, err)
	}
	select {
	case b := <-got:
		if string(b) != string(want) {
			t.Fatalf("peer got %d bytes, want %d identical", len(b), len(want))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("timeout")
	}
}

// Index entries reach the files in batches and at every flush, and an
// unclean start rebuilds whatever never got there: reads still land on
// the right batch, and the rebuilt indexes match the ones written.
func TestFileLogIndexEntriesWrittenInBatches(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	cfg := DefaultConfig()
	cfg.IndexIntervalBytes = 1 // an entry per batch
	l := openLog(t, dir, cfg, true, 0)
	onFile := func() int {
		data, err := os.ReadFile(segmentName(dir, 0, ".index"))
		if err != nil {
			t.Fatal(err)
		}
		rel, _, ok := loadOffsetIndex(data, 0, 1<<40)
		if !ok {
			t.Fatal("index file does not load")
		}
		return len(rel)
	}
	// The first batch starts the count: an entry is added once more than
	// IndexIntervalBytes were appended since the last one.
	appendN(t, l, 10, 2, 1000, 0)
	if n := onFile(); n != 0 {
		t.Fatalf("%d entries on file after 9 appends, want them held back", n)
	}
	appendN(t, l, indexWriteBatch, 2, 2000, 0)
	if n := onFile(); n != indexWriteBatch {
		t.Fatalf("%d entries on file, want one batch of %d", n, indexWriteBatch)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	flushed := onFile()
	if flushed != 9+indexWriteBatch {
		t.Fatalf("%d entries on file after Flush, want %d", flushed, 9+indexWriteBatch)
	}
	appendN(t, l, 5, 2, 3000, 0)
	if n := onFile(); n != flushed {
		t.Fatalf("%d entries on file, want the %d flushed ones", n, flushed)
	}
	want := map[int64]int64{}
	for off := int64(0); off < 2*(10+indexWriteBatch+5); off++ {
		want[off] = readBatches(t, l, off, 1<<62, 1, true)[0].Header.BaseOffset
	}
	// A crash: l is never closed; the next open is unclean from offset 0.
	l2 := openLog(t, dir, cfg, false, 0)
	defer l2.Close()
	for off, base := range want {
		if got := readBatches(t, l2, off, 1<<62, 1, true)[0].Header.BaseOffset; got != base {
			t.Fatalf("read at %d after unclean start: batch %d, want %d", off, got, base)
		}
	}
	if n := onFile(); n != 9+indexWriteBatch+5 {
		t.Fatalf("%d entries on file after recovery, want all %d", n, 9+indexWriteBatch+5)
	}
}
