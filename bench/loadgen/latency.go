package main

import (
	"slices"
	"time"
)

// latencies collects every measured sample: at the rates a 2-core machine
// sustains (tens of thousands per second, tens of seconds) that is a few
// million durations, small enough to keep exactly rather than bucket.
type latencies struct {
	samples []time.Duration
}

func (l *latencies) add(d time.Duration) { l.samples = append(l.samples, d) }

// quantiles returns the nearest-rank quantile for each q in qs (0 < q <= 1);
// with no samples every quantile is 0.
func (l *latencies) quantiles(qs ...float64) []time.Duration {
	out := make([]time.Duration, len(qs))
	if len(l.samples) == 0 {
		return out
	}
	s := slices.Clone(l.samples)
	slices.Sort(s)
	for i, q := range qs {
		// Nearest rank: the smallest sample with at least q of them at or below.
		rank := int(q*float64(len(s)) + 0.999999999)
		rank = min(max(rank, 1), len(s))
		out[i] = s[rank-1]
	}
	return out
}
