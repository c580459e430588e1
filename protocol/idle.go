package protocol

import (
	"sync"
	"sync/atomic"
)

// idleMeter is the Go stand-in for Kafka's idle meters of its thread
// pools (KafkaRequestHandlerPool RequestHandlerAvgIdlePercent, SocketServer
// NetworkProcessorAvgIdlePercent). kbroker has no fixed pool: a request is
// handled on its connection's goroutine. What the meter measures is the
// wall time spent in the phase (busy, added once per request with one
// atomic add) against the time the Go runtime could have run it for
// (capacity, GOMAXPROCS, times the wall time): idle = 1 - busy / capacity.
// docs/metrics.md explains the choice.
type idleMeter struct {
	busy atomic.Int64 // ns

	mu      sync.Mutex
	started bool
	// The window's base (the busy time and the time it was read at, and
	// the capacity then) and the newer sample that becomes the next base,
	// as histWindow does.
	prev, cur idleSample
	// idleTotal is the last reported idle time per unit of capacity (ns),
	// kept so that it never goes backwards.
	idleTotal float64
}

type idleSample struct{ at, busy int64 }

func (m *idleMeter) add(ns int64) {
	if ns > 0 {
		m.busy.Add(ns)
	}
}

// observe returns the idle fraction over the recent window (between one
// and two windows long once the meter is that old) and the idle time per
// unit of capacity since start, in ns: Kafka's meter Count, which the
// exporter names _count. start is when the meter began (ns, monotonic);
// capacity is GOMAXPROCS.
func (m *idleMeter) observe(start, now int64, capacity int, window int64) (fraction, idleNs float64) {
	if capacity < 1 {
		capacity = 1
	}
	s := idleSample{at: now, busy: m.busy.Load()}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started {
		m.started = true
		m.prev, m.cur = idleSample{at: start}, s
	}
	if now-m.cur.at >= window {
		m.prev, m.cur = m.cur, s
	}
	fraction = idleFraction(s.busy-m.prev.busy, now-m.prev.at, capacity)
	idle := float64(now-start) - float64(s.busy)/float64(capacity)
	m.idleTotal = max(m.idleTotal, idle)
	return fraction, m.idleTotal
}

// idleFraction is 1 - busy / (capacity * wall), within [0, 1]; 1 when no
// time passed.
func idleFraction(busy, wall int64, capacity int) float64 {
	if wall <= 0 {
		return 1
	}
	f := 1 - float64(busy)/(float64(capacity)*float64(wall))
	return min(max(f, 0), 1)
}
