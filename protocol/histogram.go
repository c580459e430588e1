package protocol

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
)

// histogram is a Kafka RequestMetrics histogram (Yammer Histogram, which
// the JMX exporter turns into quantile gauges and a _count). Recording is
// one atomic add into a fixed log-linear bucket of microseconds, so a
// request never takes a lock; quantiles are estimated at scrape time from
// the buckets filled over a recent window (recentWindow), as Kafka's
// exponentially decaying reservoir favours the last minutes.
type histogram struct {
	counts [histBuckets]atomic.Uint64
	win    histWindow
}

// Buckets: 0-3 µs one each, then four per power of two up to 2^40 µs
// (about 12 days); larger values land in the last bucket. Within a power
// of two the buckets are a quarter of it wide, so an estimate is within
// about 12% of the value.
const (
	histSubBits  = 2
	histSub      = 1 << histSubBits
	histMaxExp   = 40
	histBuckets  = histSub * (histMaxExp - histSubBits + 1)
	recentWindow = int64(60e9) // ns
)

// histQuantiles are the percentiles a Yammer histogram's MBean offers, with
// the quantile label the JMX exporter rules give them ("0." + 50, 75, ...).
var histQuantiles = [...]struct {
	q     float64
	label string
}{{0.50, "0.50"}, {0.75, "0.75"}, {0.95, "0.95"}, {0.98, "0.98"}, {0.99, "0.99"}, {0.999, "0.999"}}

func bucketOf(us uint64) int {
	if us < histSub {
		return int(us)
	}
	e := bits.Len64(us) // us has e bits, e > histSubBits
	if e > histMaxExp {
		return histBuckets - 1
	}
	sub := int(us>>(e-histSubBits-1)) & (histSub - 1)
	return histSub*(e-histSubBits) + sub
}

// bucketBounds is bucket i's [lo, lo+width) in microseconds.
func bucketBounds(i int) (lo, width float64) {
	if i < histSub {
		return float64(i), 1
	}
	e := i/histSub + histSubBits
	sub := i % histSub
	w := uint64(1) << (e - histSubBits - 1)
	return float64(uint64(histSub+sub) * w), float64(w)
}

// record adds one value in nanoseconds.
func (h *histogram) record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	h.counts[bucketOf(uint64(ns)/1000)].Add(1)
}

// recordMs adds one value in milliseconds (throttle times).
func (h *histogram) recordMs(ms int32) {
	if ms < 0 {
		ms = 0
	}
	h.counts[bucketOf(uint64(ms)*1000)].Add(1)
}

// histSnapshot is the buckets' counts at a time (ns on the monotonic clock).
type histSnapshot struct {
	at     int64
	counts []uint64
}

func (h *histogram) snapshot(now int64) histSnapshot {
	s := histSnapshot{at: now, counts: make([]uint64, histBuckets)}
	for i := range h.counts {
		s.counts[i] = h.counts[i].Load()
	}
	return s
}

// histWindow keeps two past snapshots so that quantiles cover between one
// and two windows of recent requests, whoever scrapes and how often.
type histWindow struct {
	mu        sync.Mutex
	started   bool
	prev, cur histSnapshot // counts nil: all zero (the start)
}

// observe returns the total count and the counts recorded since the
// window's base, rotating the base once cur is a window old.
func (w *histWindow) observe(s histSnapshot, window int64) (total uint64, recent []uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		w.started, w.cur = true, histSnapshot{at: s.at}
	}
	if s.at-w.cur.at >= window {
		w.prev, w.cur = w.cur, s
	}
	recent = make([]uint64, len(s.counts))
	for i, c := range s.counts {
		total += c
		recent[i] = c
		if w.prev.counts != nil {
			recent[i] -= w.prev.counts[i]
		}
	}
	return total, recent
}

// quantile estimates the q-quantile, in milliseconds, of counts by linear
// interpolation within its bucket; NaN when counts are all zero.
func quantile(counts []uint64, q float64) float64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return math.NaN()
	}
	rank := q * float64(n)
	var cum float64
	for i, c := range counts {
		if c == 0 {
			continue
		}
		if cum+float64(c) >= rank {
			lo, width := bucketBounds(i)
			return (lo + width*(rank-cum)/float64(c)) / 1000
		}
		cum += float64(c)
	}
	lo, width := bucketBounds(len(counts) - 1)
	return (lo + width) / 1000
}
