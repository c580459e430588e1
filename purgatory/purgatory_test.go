package purgatory_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
	"github.com/kbroker/kbroker/purgatory"
)

// op completes once ready is set; it counts how often it was asked.
type op struct {
	ready atomic.Bool
	tries atomic.Int32
	// readyOnTry, when > 0, makes the op ready from that try on.
	readyOnTry int32
}

func (o *op) TryComplete(time.Time) bool {
	n := o.tries.Add(1)
	return o.ready.Load() || (o.readyOnTry > 0 && n >= o.readyOnTry)
}

func isDone[K comparable](d *purgatory.Delayed[K]) bool {
	select {
	case <-d.Done():
		return true
	default:
		return false
	}
}

var t0 = time.Unix(1_000_000, 0)

func TestCompletesAtOnceWithoutWatching(t *testing.T) {
	clock := clocktest.NewFake(t0)
	p := purgatory.New[string](clock)
	o := &op{}
	o.ready.Store(true)
	d := p.TryCompleteElseWatch(o, []string{"a"}, clock.Now(), clock.Now().Add(time.Second))
	if !isDone(d) || d.Expired() || p.Watched("a") != 0 || clock.Pending() != 0 || o.tries.Load() != 1 {
		t.Fatalf("done %v expired %v watched %d timers %d tries %d", isDone(d), d.Expired(), p.Watched("a"), clock.Pending(), o.tries.Load())
	}
}

// The check after the watch catches a change that landed between the first
// check and the watch.
func TestSecondCheckAfterWatch(t *testing.T) {
	clock := clocktest.NewFake(t0)
	p := purgatory.New[string](clock)
	o := &op{readyOnTry: 2}
	d := p.TryCompleteElseWatch(o, []string{"a", "b"}, clock.Now(), clock.Now().Add(time.Second))
	if !isDone(d) || d.Expired() || p.Watched("a")+p.Watched("b") != 0 || clock.Pending() != 0 {
		t.Fatalf("done %v expired %v watched %d/%d timers %d", isDone(d), d.Expired(), p.Watched("a"), p.Watched("b"), clock.Pending())
	}
}

// An operation watched on several keys completes on a change of any of
// them, leaves every list, stops its timer and is never asked again.
func TestCheckAndCompleteOnAnyKey(t *testing.T) {
	clock := clocktest.NewFake(t0)
	p := purgatory.New[string](clock)
	o := &op{}
	other := &op{}
	d := p.TryCompleteElseWatch(o, []string{"a", "b"}, clock.Now(), clock.Now().Add(time.Second))
	d2 := p.TryCompleteElseWatch(other, []string{"b"}, clock.Now(), clock.Now().Add(time.Second))
	if isDone(d) || p.Watched("a") != 1 || p.Watched("b") != 2 || clock.Pending() != 2 {
		t.Fatalf("watched %d/%d timers %d", p.Watched("a"), p.Watched("b"), clock.Pending())
	}
	if n := p.CheckAndComplete("a"); n != 0 || isDone(d) {
		t.Fatalf("completed %d before ready", n)
	}
	if got := o.tries.Load(); got != 3 {
		t.Fatalf("tries %d, want 3 (arrival, after watch, check of a)", got)
	}
	o.ready.Store(true)
	if n := p.CheckAndComplete("b"); n != 1 || !isDone(d) || d.Expired() {
		t.Fatalf("completed %d, done %v", n, isDone(d))
	}
	if p.Watched("a") != 0 || p.Watched("b") != 1 || clock.Pending() != 1 {
		t.Fatalf("after completion: watched %d/%d timers %d", p.Watched("a"), p.Watched("b"), clock.Pending())
	}
	tries := o.tries.Load()
	p.CheckAndComplete("a")
	p.CheckAndComplete("b")
	if o.tries.Load() != tries || d.ForceComplete() {
		t.Fatal("a completed operation was asked again or completed twice")
	}
	if isDone(d2) {
		t.Fatal("the other operation completed too")
	}
	d2.ForceComplete()
}

// At its timeout an operation completes, expired, without being asked.
func TestExpiry(t *testing.T) {
	clock := clocktest.NewFake(t0)
	p := purgatory.New[string](clock)
	o := &op{}
	d := p.TryCompleteElseWatch(o, []string{"a"}, clock.Now(), clock.Now().Add(500*time.Millisecond))
	clock.Advance(499 * time.Millisecond)
	if isDone(d) {
		t.Fatal("expired early")
	}
	tries := o.tries.Load()
	clock.Advance(time.Millisecond)
	if !isDone(d) || !d.Expired() || p.Watched("a") != 0 || o.tries.Load() != tries {
		t.Fatalf("done %v expired %v watched %d tries %d→%d", isDone(d), d.Expired(), p.Watched("a"), tries, o.tries.Load())
	}
	o.ready.Store(true)
	if p.CheckAndComplete("a") != 0 {
		t.Fatal("an expired operation completed again")
	}
}

// Checks from several goroutines racing the timeout complete each
// operation exactly once (a second completion would close Done twice and
// panic).
func TestCompletesExactlyOnce(t *testing.T) {
	clock := clocktest.NewFake(t0)
	p := purgatory.New[int](clock)
	const ops = 50
	ds := make([]*purgatory.Delayed[int], ops)
	os := make([]*op, ops)
	for i := range ds {
		os[i] = &op{}
		ds[i] = p.TryCompleteElseWatch(os[i], []int{i % 3, 3}, clock.Now(), clock.Now().Add(time.Second))
	}
	for _, o := range os {
		o.ready.Store(true)
	}
	var completed atomic.Int32
	var wg sync.WaitGroup
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			completed.Add(int32(p.CheckAndComplete(k)))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		clock.Advance(time.Second)
	}()
	wg.Wait()
	expired := 0
	for _, d := range ds {
		if !isDone(d) {
			t.Fatal("an operation never completed")
		}
		if d.Expired() {
			expired++
		}
	}
	if int(completed.Load())+expired != ops {
		t.Fatalf("%d completed by checks + %d expired, want %d", completed.Load(), expired, ops)
	}
	for k := 0; k < 4; k++ {
		if p.Watched(k) != 0 {
			t.Fatalf("key %d still watched by %d", k, p.Watched(k))
		}
	}
}
