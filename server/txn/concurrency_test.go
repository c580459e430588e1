package txn

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Producers, timers and partition moves all at once: nothing deadlocks,
// the race detector stays quiet, and once the partitions settle no
// transaction is left half completed.
func TestConcurrentTransactionsAndReloads(t *testing.T) {
	h := newHarness(t)
	var stop atomic.Bool
	var wg sync.WaitGroup

	tick := make(chan struct{})
	go func() {
		defer close(tick)
		for i := 0; i < 20000 && !stop.Load(); i++ {
			h.clock.Advance(time.Millisecond)
			time.Sleep(50 * time.Microsecond)
		}
	}()

	var epoch atomic.Int32
	epoch.Store(h.epoch)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 10 {
			p := int32(i % testPartitions)
			e := epoch.Add(1)
			h.c.UnloadPartition(p, e-1)
			if err := h.c.LoadPartition(p, e); err != nil {
				t.Error(err)
			}
			time.Sleep(time.Millisecond)
		}
	}()

	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("tx-%d", w)
			for cycle := range 15 {
				pid, pe, code := h.init(id, time.Minute)
				if code != errNone {
					continue
				}
				if h.add(id, pid, pe, tp("a", int32(cycle%3)), tp("b", 0)) != errNone {
					continue
				}
				req := addOffsetsRequest(id, pid, pe, 3)
				h.c.AddOffsetsToTxn(context.Background(), req, int32(w))
				h.end(id, pid, pe, cycle%2 == 0)
				h.describe(id)
				h.c.ListTransactions(listRequest(1))
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("deadlock: workers did not finish")
	}
	stop.Store(true)
	<-tick

	// Load every partition once more and let the completions run.
	e := epoch.Add(1)
	for p := int32(0); p < testPartitions; p++ {
		if err := h.c.LoadPartition(p, e); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		h.clock.Advance(time.Second)
	}
	for w := range 6 {
		id := fmt.Sprintf("tx-%d", w)
		s := h.describe(id)
		if s.ErrorCode != 0 {
			continue // never initialised while its partition was loaded
		}
		switch s.State {
		case "PrepareCommit", "PrepareAbort":
			t.Errorf("%s left in %s", id, s.State)
		}
	}
}
