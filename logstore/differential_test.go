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
