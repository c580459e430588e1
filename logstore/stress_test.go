package logstore

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFileLogConcurrentUse runs appends, reads, flushes, retention and
// compaction at once (run with -race); every read must return whole,
// valid batches in offset order.
func TestFileLogConcurrentUse(t *testing.T) {
	cfg := smallCfg()
	cfg.CleanupPolicy = "compact,delete"
	cfg.RetentionBytes = 20 * cfg.SegmentBytes
	cfg.RetentionMs = -1
	l := openLog(t, t.TempDir()+"/t-0", cfg, true, 0)
	defer l.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1500; i++ {
			if _, err := l.AppendAsLeader([]Batch{mkBatch(t, 3, int64(i), "a", "b", "c")}, int32(i/500), -1); err != nil {
				errc <- err
				return
			}
		}
		stop.Store(true)
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				start := l.LogStartOffset()
				res, err := l.Read(start, 1<<62, 5000, true)
				if errors.Is(err, ErrOffsetOutOfRange) {
					continue // retention moved the start meanwhile
				}
				if err != nil {
					errc <- err
					return
				}
				// Deleted or swapped segments stay open for a while, so the
				// bytes of a result stay readable.
				data, err := res.Bytes()
				if err != nil {
					errc <- err
					return
				}
				bs, err := ParseBatches(data)
				if err != nil {
					errc <- err
					return
				}
				for i := 1; i < len(bs); i++ {
					if bs[i].Header.BaseOffset <= bs[i-1].Header.LastOffset() {
						errc <- errors.New("offsets not increasing")
						return
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := l.Maintain(time.UnixMilli(1 << 40)); err != nil {
				errc <- err
				return
			}
			if err := l.Flush(); err != nil {
				errc <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("timeout")
	}
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	// Appends may have outrun the last pass.
	if err := l.Maintain(time.UnixMilli(1 << 40)); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 4500 || l.RecoveryPoint() > 4500 {
		t.Fatalf("LEO %d RP %d", l.LogEndOffset(), l.RecoveryPoint())
	}
	if l.Size() > cfg.RetentionBytes+2*cfg.SegmentBytes {
		t.Fatalf("size %d", l.Size())
	}
}
