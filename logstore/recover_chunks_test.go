package logstore

import (
	"bytes"
	"os"
	"testing"
)

// Recovery reads a segment through a chunk buffer: batches that straddle
// chunk boundaries, and one larger than a chunk, come back whole, and a
// torn copy of a large batch at the end is cut off.
func TestFileLogRecoveryAcrossChunks(t *testing.T) {
	dir := t.TempDir() + "/t-0"
	cfg := DefaultConfig()
	l := openLog(t, dir, cfg, true, 0)
	var want [][]byte
	add := func(n, size int) {
		recs := make([]Record, n)
		for i := range recs {
			v := bytes.Repeat([]byte{byte(len(want))}, size)
			recs[i] = Record{Value: v}
			want = append(want, v)
		}
		if _, err := l.AppendAsLeader([]Batch{plainBatch(t, recs)}, 0, -1); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 300; i++ {
		add(3, 97+i%50) // odd sizes: boundaries fall inside batches
		if i == 150 {
			add(1, 3*scanChunk) // larger than a chunk
		}
	}
	big := make([]Record, 1)
	big[0] = Record{Value: bytes.Repeat([]byte{7}, 2*scanChunk)}
	torn, err := EncodeBatch(BatchOptions{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseOffset: l.LogEndOffset()}, big)
	if err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	active := segmentName(dir, l.SegmentBaseOffsets()[len(l.SegmentBaseOffsets())-1], ".log")
	crash(l)
	f, err := os.OpenFile(active, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(torn.Raw[:len(torn.Raw)-100])
	f.Close()

	l2 := openLog(t, dir, cfg, false, 0)
	defer l2.Close()
	if l2.LogEndOffset() != leo {
		t.Fatalf("LEO %d after recovery, want %d", l2.LogEndOffset(), leo)
	}
	got := logRecords(t, l2)
	if len(got) != len(want) {
		t.Fatalf("%d records after recovery, want %d", len(got), len(want))
	}
	for i := range want {
		if v := got[int64(i)]; v != "="+string(want[i]) {
			t.Fatalf("record %d: %d bytes, want %d", i, len(v), len(want[i]))
		}
	}
	st, _ := os.Stat(active)
	if l2.Size() != st.Size() {
		t.Fatalf("segment file %d bytes, log %d: the torn batch was not cut off", st.Size(), l2.Size())
	}
}
