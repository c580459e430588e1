package protocol

import (
	"sync"
	"time"
)

// memoryPool accounts for the bytes of request frames from their first
// byte read to their response leaving: Kafka's queued.max.request.bytes
// (SocketServer's MemoryPool). It hands out no memory itself; a connection
// reserves before it allocates, and waits — reads nothing more — while
// the pool is full, which is Kafka's muted channel.
//
// It differs from Kafka's SimpleMemoryPool in what a frame is charged:
// the bytes that have arrived (rounded up to the buffer grown for them),
// not the size its prefix declares, so that a client declaring 100 MiB
// and sending 1 KiB holds 1 KiB of the pool rather than 100 MiB of it.
type memoryPool struct {
	mu       sync.Mutex
	capacity int64 // 0: unlimited
	used     int64
	// released is closed at the next release to wake the connections
	// waiting for room; nil while none waits, so that the release of
	// every request costs no channel.
	released chan struct{}
	// depletedSince is when a reservation was last refused with the pool
	// still refusing (zero while it is not), depleted the total time it
	// has refused so far: Kafka's MemoryPoolDepletedTimeTotal.
	depletedSince time.Time
	depleted      time.Duration
	peak          int64
}

func newMemoryPool(capacity int64) *memoryPool {
	if capacity < 0 {
		capacity = 0
	}
	return &memoryPool{capacity: capacity}
}

// tryReserve takes n bytes if they fit. A reservation always succeeds on
// an empty pool, so that one frame larger than the whole pool can still be
// read (alone), as with Kafka's non-strict pool.
func (p *memoryPool) tryReserve(n int64, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.capacity > 0 && p.used > 0 && p.used+n > p.capacity {
		if p.depletedSince.IsZero() {
			p.depletedSince = now
		}
		return false
	}
	p.used += n
	p.peak = max(p.peak, p.used)
	return true
}

// release returns n bytes and wakes the waiters.
func (p *memoryPool) release(n int64, now time.Time) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	p.used -= n
	if p.used < 0 {
		panic("protocol: memory pool released more than was reserved")
	}
	if !p.depletedSince.IsZero() {
		p.depleted += now.Sub(p.depletedSince)
		p.depletedSince = time.Time{}
	}
	if p.released != nil {
		close(p.released)
		p.released = nil
	}
	p.mu.Unlock()
}

// wakeup is closed at the next release.
func (p *memoryPool) wakeup() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released == nil {
		p.released = make(chan struct{})
	}
	return p.released
}

// stats is what the metrics report: bytes in use, bytes available
// (capacity-used, or -1 when unlimited, as Kafka's MemoryPool.NONE
// reports Long.MAX_VALUE), and the depleted time so far.
func (p *memoryPool) stats(now time.Time) (used, available int64, depleted time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	depleted = p.depleted
	if !p.depletedSince.IsZero() {
		depleted += now.Sub(p.depletedSince)
	}
	available = -1
	if p.capacity > 0 {
		available = p.capacity - p.used
	}
	return p.used, available, depleted
}

// takePeak returns the largest use since the last call and starts over.
func (p *memoryPool) takePeak() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	peak := p.peak
	p.peak = p.used
	return peak
}

// holder is what the pool's stall rule knows of one connection holding
// pool memory.
type holder struct {
	held int64
	// partial is a frame being read; remaining is what it still lacks.
	partial   bool
	remaining int64
	// waiting: the connection itself waits for pool room.
	waiting bool
	// stalledFor is how long its partial frame has received too little
	// (stallProgressBytes) or its pending write has not completed; zero
	// when neither.
	stalledFor time.Duration
}

// chooseStalled picks the connections to close so that waiting
// connections get room. Holders whose frame or write has made no progress
// for at least grace are taken, all of them: their clients are slow or
// gone, and the room they hold is what well-behaved clients wait for.
// When there are none but every byte in use belongs to partial frames
// that themselves wait for room, nothing will ever be released (they
// would wait for each other forever), so the one that still lacks the
// most is closed.
func chooseStalled(hs []holder, used int64, grace time.Duration) []int {
	var out []int
	for i, h := range hs {
		if h.held > 0 && !h.waiting && h.stalledFor >= grace {
			out = append(out, i)
		}
	}
	if len(out) > 0 {
		return out
	}
	best := -1
	var waitingHeld int64
	for i, h := range hs {
		if h.held == 0 {
			continue
		}
		if !h.partial || !h.waiting {
			return nil
		}
		waitingHeld += h.held
		if best < 0 || h.remaining > hs[best].remaining {
			best = i
		}
	}
	if best < 0 || waitingHeld < used {
		return nil
	}
	return []int{best}
}
