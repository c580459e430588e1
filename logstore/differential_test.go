package logstore

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestReadMatchesMemLog drives FileLog and MemLog with the same appends and
// compares random reads byte for byte.
func TestReadMatchesMemLog(t *testing.T) {
	cfg := smallCfg()
	cfg.SegmentBytes = 4000
	cfg.IndexIntervalBytes = 300
	logs := logImpls(t, cfg)
	fl, ml := logs["file"], logs["mem"]
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 300; i++ {
		n := 1 + r.Intn(6)
		b1, b2 := mkBatch(t, n, int64(i*10)), mkBatch(t, n, int64(i*10))
		if _, err := fl.AppendAsLeader([]Batch{b1}, 0, -1); err != nil {
			t.Fatal(err)
		}
		if _, err := ml.AppendAsLeader([]Batch{b2}, 0, -1); err != nil {
			t.Fatal(err)
		}
	}
	leo := fl.LogEndOffset()
	if ml.LogEndOffset() != leo {
		t.Fatal("LEO differs")
	}
	for i := 0; i < 2000; i++ {
		start := r.Int63n(leo + 1)
		maxOff := start + r.Int63n(leo-start+2)
		if r.Intn(4) == 0 {
			maxOff = 1 << 62
		}
		maxBytes := r.Intn(20000)
		minOne := r.Intn(2) == 0
		a, err1 := fl.Read(start, maxOff, maxBytes, minOne)
		b, err2 := ml.Read(start, maxOff, maxBytes, minOne)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		x, _ := a.Bytes()
		y, _ := b.Bytes()
		if !bytes.Equal(x, y) {
			t.Fatalf("Read(%d, %d, %d, %v): file %d bytes, mem %d bytes", start, maxOff, maxBytes, minOne, len(x), len(y))
		}
	}
}

// TestOffsetForTimestampMatchesMemLog uses out-of-order timestamps; the
// targets never equal a record timestamp, so the time index's "<=" lookup
// and MemLog's full scan must agree.
func TestOffsetForTimestampMatchesMemLog(t *testing.T) {
	cfg := smallCfg()
	cfg.IndexIntervalBytes = 200
	logs := logImpls(t, cfg)
	fl, ml := logs["file"], logs["mem"]
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 200; i++ {
		n := 1 + r.Intn(4)
		ts := int64(r.Intn(5000)) * 2
		for _, l := range []Log{fl, ml} {
			if _, err := l.AppendAsLeader([]Batch{mkBatch(t, n, ts)}, 0, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, l := range []Log{fl, ml} {
		if err := l.DeleteRecordsBefore(37); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 500; i++ {
		target := int64(r.Intn(10100))*2 + 1
		o1, t1, f1, e1 := fl.OffsetForTimestamp(target)
		o2, t2, f2, e2 := ml.OffsetForTimestamp(target)
		if o1 != o2 || t1 != t2 || f1 != f2 || e1 != nil || e2 != nil {
			t.Fatalf("OffsetForTimestamp(%d): file %d %d %v %v, mem %d %d %v %v", target, o1, t1, f1, e1, o2, t2, f2, e2)
		}
	}
	a1, b1 := fl.MaxTimestamp()
	a2, b2 := ml.MaxTimestamp()
	if a1 != a2 || b1 != b2 {
		t.Fatalf("MaxTimestamp file %d %d, mem %d %d", a1, b1, a2, b2)
	}
}
