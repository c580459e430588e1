package brokerprobe

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestTrackerNeedsCountAndSpan(t *testing.T) {
	tr := NewTracker(Policy{Refusals: 3, MinSpan: 600 * time.Millisecond})
	b := Target{ID: 2, Epoch: 10}
	t0 := time.Unix(1000, 0)
	steps := []struct {
		o    Outcome
		at   time.Duration
		dead bool
	}{
		{Refused, 0, false},
		{Refused, 250 * time.Millisecond, false},
		// Three refusals, but only 500 ms apart: not yet.
		{Refused, 500 * time.Millisecond, false},
		{Unknown, 600 * time.Millisecond, false},
		{Refused, 750 * time.Millisecond, true},
		// The verdict is given once.
		{Refused, 1000 * time.Millisecond, false},
	}
	for i, s := range steps {
		if got := tr.Observe(b, s.o, t0.Add(s.at)); got != s.dead {
			t.Fatalf("step %d (%v at %v): dead=%v, want %v", i, s.o, s.at, got, s.dead)
		}
	}
}

func TestTrackerReachableResets(t *testing.T) {
	tr := NewTracker(Policy{Refusals: 2, MinSpan: 0})
	b := Target{ID: 1, Epoch: 5}
	t0 := time.Unix(0, 0)
	if tr.Observe(b, Refused, t0) {
		t.Fatal("dead after one refusal")
	}
	tr.Observe(b, Reachable, t0.Add(time.Millisecond))
	if tr.Observe(b, Refused, t0.Add(2*time.Millisecond)) {
		t.Fatal("an accepted connection did not reset the streak")
	}
	if !tr.Observe(b, Refused, t0.Add(3*time.Millisecond)) {
		t.Fatal("two refusals in a row gave no verdict")
	}
}

func TestTrackerSeparatesIncarnations(t *testing.T) {
	tr := NewTracker(Policy{Refusals: 2, MinSpan: 0})
	t0 := time.Unix(0, 0)
	tr.Observe(Target{ID: 1, Epoch: 5}, Refused, t0)
	if tr.Observe(Target{ID: 1, Epoch: 6}, Refused, t0) {
		t.Fatal("a refusal of the old incarnation counted against the new one")
	}
	tr.Forget(1)
	if tr.Observe(Target{ID: 1, Epoch: 6}, Refused, t0) {
		t.Fatal("Forget kept a streak")
	}
}

func TestProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx := context.Background()
	if got := Probe(ctx, addr, time.Second); got != Reachable {
		t.Fatalf("listening port: %v", got)
	}
	ln.Close()
	if got := Probe(ctx, addr, time.Second); got != Refused {
		t.Fatalf("closed port: %v", got)
	}
}
