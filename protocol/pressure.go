package protocol

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"
)

// initialFrameChunk is the first buffer for a frame whose bytes have not
// all arrived yet: what a connection holds before its client proves, by
// sending, that it needs more.
const initialFrameChunk = 16 << 10

// stallProgressBytes is the progress a partly read frame must make per
// stall grace period not to count as stalled: a byte now and then keeps a
// connection from being idle, not from holding memory others need.
const stallProgressBytes = 64 << 10

// wholeFrameSize: a frame up to this size gets its whole buffer at once.
// Most requests are this small, and growing them would cost a copy each;
// a connection already holds a read buffer of the same size.
const wholeFrameSize = 64 << 10

// frameGrowth multiplies a frame's buffer each time it fills: a fast
// client's large frame is copied only a few times, and a slow one holds
// at most this many times what it sent.
const frameGrowth = 4

// readBody reads a frame of size bytes (after its size prefix) into a
// buffer that grows with the bytes that arrive, reserving each growth in
// the memory pool first. It returns the frame, its pooled buffer (nil if
// unpooled) and the pool bytes it holds; on error it holds nothing.
func (c *conn) readBody(size int, pooled bool) (frame []byte, pf *pooledFrame, held int64, err error) {
	var buf []byte
	n, mark := 0, 0
	c.remaining.Store(int64(size))
	c.lastArrival.Store(time.Now().UnixNano())
	defer func() {
		c.lastArrival.Store(0)
		if err != nil {
			c.srv.frames.put(pf)
			c.releaseHeld(held)
			frame, pf, held = nil, nil, 0
		}
	}()
	want := min(size, max(c.br.Buffered(), initialFrameChunk))
	if size <= wholeFrameSize {
		want = size
	}
	for {
		if want > cap(buf) {
			nb, npf := c.allocFrame(want, pooled)
			grow := int64(cap(nb) - cap(buf))
			if err := c.reserve(grow); err != nil {
				c.srv.frames.put(npf)
				return nil, pf, held, err
			}
			held += grow
			copy(nb, buf[:n])
			c.dropBuffer(buf, pf)
			buf, pf = nb[:cap(nb)], npf
		}
		limit := min(size, cap(buf))
		for n < limit {
			k, err := c.br.Read(buf[n:limit])
			n += k
			if n-mark >= stallProgressBytes {
				mark = n
				c.lastArrival.Store(time.Now().UnixNano())
				c.remaining.Store(int64(size - n))
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = fmt.Errorf("request truncated: size %d, got %d bytes before EOF", size, n)
				}
				return nil, pf, held, err
			}
		}
		if n == size {
			return buf[:size], pf, held, nil
		}
		want = min(size, frameGrowth*cap(buf))
	}
}

func (c *conn) allocFrame(size int, pooled bool) ([]byte, *pooledFrame) {
	if pooled {
		return c.srv.frames.get(size)
	}
	return make([]byte, size), nil
}

// dropBuffer gives up a buffer a frame outgrew: back to the frame pool
// when it came from there, else to the garbage collector, whose debt the
// server tracks. The pool then caches buffers nobody holds; growing by
// frameGrowth, what a frame outgrew is at most a third of what it holds,
// and the next frames take it again.
func (c *conn) dropBuffer(buf []byte, pf *pooledFrame) {
	if pf != nil {
		c.srv.frames.put(pf)
		return
	}
	c.srv.addGarbage(int64(cap(buf)))
}

// reserve takes n bytes of the memory pool for this connection, waiting
// (not reading: the connection is muted) while the pool is full. While it
// waits it looks, every half grace period, for a stalled connection
// holding room to close.
func (c *conn) reserve(n int64) error {
	pool := c.srv.pool
	if pool.tryReserve(n, time.Now()) {
		c.held.Add(n)
		return nil
	}
	c.waitingPool.Store(true)
	c.srv.muted.Add(1)
	defer func() {
		c.waitingPool.Store(false)
		c.srv.muted.Add(-1)
	}()
	tick := time.NewTicker(c.srv.cfg.StallGrace / 2)
	defer tick.Stop()
	for {
		wake := pool.wakeup()
		if pool.tryReserve(n, time.Now()) {
			c.held.Add(n)
			// The wait is not the client's: give the rest of the frame
			// a whole idle period again.
			return c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.IdleTimeout))
		}
		select {
		case <-wake:
		case <-tick.C:
			c.srv.relievePool()
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
	}
}

func (c *conn) releaseHeld(n int64) {
	if n == 0 {
		return
	}
	c.held.Add(-n)
	c.srv.pool.release(n, time.Now())
}

// relievePool closes the connection chooseStalled picks, at most once per
// half grace period whichever connection asks.
func (s *Server) relievePool() {
	now := time.Now()
	s.connMu.Lock()
	if now.Sub(s.lastRelief) < s.cfg.StallGrace/2 {
		s.connMu.Unlock()
		return
	}
	s.lastRelief = now
	conns := make([]*conn, 0, len(s.conns))
	hs := make([]holder, 0, len(s.conns))
	for c := range s.conns {
		if h := c.holderState(now); h.held > 0 {
			conns = append(conns, c)
			hs = append(hs, h)
		}
	}
	s.connMu.Unlock()
	used, _, _ := s.pool.stats(now)
	for _, i := range chooseStalled(hs, used, s.cfg.StallGrace) {
		h := hs[i]
		conns[i].log.Warn("closing connection: it holds request memory other connections are waiting for",
			"held_bytes", h.held, "stalled_for", h.stalledFor, "request_bytes_missing", h.remaining,
			"queued.max.request.bytes", s.cfg.QueuedMaxRequestBytes)
		conns[i].cancel()
	}
}

func (c *conn) holderState(now time.Time) holder {
	h := holder{held: c.held.Load(), waiting: c.waitingPool.Load()}
	if at := c.lastArrival.Load(); at != 0 {
		h.partial = true
		h.remaining = c.remaining.Load()
		if !h.waiting {
			h.stalledFor = now.Sub(time.Unix(0, at))
		}
	}
	if at := c.writeSince.Load(); at != 0 {
		h.stalledFor = max(h.stalledFor, now.Sub(time.Unix(0, at)))
	}
	return h
}

// addGarbage counts frame bytes left to the garbage collector and asks for
// a collection once they reach a quarter of the pool (at least 16 MiB):
// the pool bounds the bytes in use, and this bounds those not yet
// collected, which the runtime's own pacing would let reach the size of
// the live heap again.
func (s *Server) addGarbage(n int64) {
	if s.cfg.QueuedMaxRequestBytes <= 0 {
		return
	}
	if s.garbage.Add(n) < max(s.cfg.QueuedMaxRequestBytes/4, 16<<20) || !s.gcRunning.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.gcRunning.Store(false)
		s.garbage.Store(0)
		runtime.GC()
	}()
}

// returnMemory hands memory back to the operating system after the pool
// was busy and has drained: without it the runtime keeps what a burst of
// large requests took for minutes, and the broker looks as large as its
// worst moment.
func (s *Server) returnMemory() {
	defer s.wg.Done()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	// busiest is the pool's peak since memory was last returned: a pool
	// that drains over several ticks (connections closing one by one)
	// still has its memory returned once it is down to a quarter.
	var busiest int64
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		busiest = max(busiest, s.pool.takePeak())
		used, _, _ := s.pool.stats(time.Now())
		if busiest >= 32<<20 && used < busiest/4 {
			// Two collections: pooled frames survive the first in the
			// pools' victim caches.
			runtime.GC()
			debug.FreeOSMemory()
			busiest = 0
		}
	}
}
