package main

import (
	"testing"
	"time"
)

func TestQuantilesNearestRank(t *testing.T) {
	var l latencies
	// 1..1000 ms in reverse order: sorting is part of what is tested.
	for i := 1000; i >= 1; i-- {
		l.add(time.Duration(i) * time.Millisecond)
	}
	got := l.quantiles(0.5, 0.99, 0.999, 1)
	want := []time.Duration{500 * time.Millisecond, 990 * time.Millisecond, 999 * time.Millisecond, 1000 * time.Millisecond}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("quantile %d = %v, want %v", i, got[i], want[i])
		}
	}
	if l.samples[0] != 1000*time.Millisecond {
		t.Errorf("quantiles reordered the samples in place")
	}
}

func TestQuantilesEmptyAndSingle(t *testing.T) {
	var l latencies
	if got := l.quantiles(0.5); got[0] != 0 {
		t.Errorf("empty p50 = %v, want 0", got[0])
	}
	l.add(7 * time.Millisecond)
	for _, q := range []float64{0.001, 0.5, 0.999} {
		if got := l.quantiles(q); got[0] != 7*time.Millisecond {
			t.Errorf("single-sample q%v = %v, want 7ms", q, got[0])
		}
	}
}
