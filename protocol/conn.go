package protocol

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// inflight is one request between its read and its response leaving.
type inflight struct {
	req  *Request
	resp Response
	// result receives the outcome of resp.Wait; nil when there is no Wait.
	result chan Response
	// drain marks the client's clean EOF: write what is queued, then close.
	drain bool
}

// conn is one client connection: a read loop (this goroutine in serve), a
// write loop, and one goroutine per running Wait.
type conn struct {
	srv  *Server
	nc   net.Conn
	info *ConnInfo
	log  *slog.Logger
	// lc is the listener's security; sasl is nil unless it uses SASL.
	lc   *ListenerConfig
	sasl *saslState

	// ctx is cancelled to tear the connection down; an AfterFunc closes the
	// socket then, which unblocks both loops.
	ctx    context.Context
	cancel context.CancelFunc

	br *bufio.Reader
	// wmu guards bw, wbuf and writes to the socket: the write loop and the
	// read loop's direct answers (answer) both write.
	wmu sync.Mutex
	bw  *bufio.Writer
	// wbuf is the reused encoding buffer.
	wbuf []byte
	// queued counts requests handed to the write loop whose response has
	// not been written yet. While it is zero nothing is ahead of a ready
	// response, and the read loop writes it itself.
	queued atomic.Int32

	// slots bounds requests awaiting their response: the read loop takes a
	// slot before reading a frame, the write loop returns it once the
	// response left.
	slots chan struct{}
	// queue carries requests to the write loop in request order.
	queue    chan *inflight
	waits    sync.WaitGroup
	counters connCounters
	// lastActive is the UnixNano of the last frame read or written, for
	// connections.max.idle.ms.
	lastActive atomic.Int64

	// What the memory pool's stall rule reads (holderState): the pool
	// bytes this connection holds, the UnixNano of the last bytes of a
	// partly read frame (0 between frames) and what it still lacks,
	// whether it waits for pool room, and since when a write is blocked
	// (0 when none is).
	held        atomic.Int64
	lastArrival atomic.Int64
	remaining   atomic.Int64
	waitingPool atomic.Bool
	writeSince  atomic.Int64

	// mutedUntil is the UnixNano before which the read loop takes no
	// next request: a client over its quota (Response.Throttle).
	mutedUntil atomic.Int64
}

// muteFor keeps the read loop from taking the next request for d from
// now, unless it is muted for longer already.
func (c *conn) muteFor(d time.Duration) {
	if d <= 0 {
		return
	}
	until := time.Now().Add(d).UnixNano()
	for {
		old := c.mutedUntil.Load()
		if until <= old || c.mutedUntil.CompareAndSwap(old, until) {
			return
		}
	}
}

// awaitUnmuted waits out a quota throttle before the next request is
// read, as Kafka keeps a throttled channel muted. False when the
// connection ended meanwhile.
func (c *conn) awaitUnmuted() bool {
	until := c.mutedUntil.Load()
	if until == 0 {
		return true
	}
	d := time.Until(time.Unix(0, until))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		// The throttle is not the client's idleness.
		c.touch()
		return true
	case <-c.ctx.Done():
		return false
	}
}

func newConn(s *Server, parent context.Context, nc net.Conn, info *ConnInfo, lc *ListenerConfig) *conn {
	ctx, cancel := context.WithCancel(parent)
	if lc.TLS != nil {
		// The handshake itself runs in serve, on the connection's goroutine.
		nc = tls.Server(nc, lc.TLS)
	}
	c := &conn{
		lc:     lc,
		srv:    s,
		nc:     nc,
		info:   info,
		log:    s.log.With("conn", info.ID, "listener", info.Listener, "remote", info.RemoteAddr.String()),
		ctx:    ctx,
		cancel: cancel,
		br:     bufio.NewReaderSize(nc, 64<<10),
		bw:     bufio.NewWriterSize(nc, 64<<10),
		slots:  make(chan struct{}, s.cfg.MaxInFlightPerConn),
		queue:  make(chan *inflight, s.cfg.MaxInFlightPerConn),
	}
	if lc.SASL != nil {
		c.sasl = &saslState{lc: lc}
	}
	c.touch()
	return c
}

func (c *conn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

func (c *conn) serve() {
	stop := context.AfterFunc(c.ctx, func() { c.nc.Close() })
	defer stop()
	if tc, ok := c.nc.(*tls.Conn); ok && !c.tlsHandshake(tc) {
		c.cancel()
		c.nc.Close()
		c.connClosed()
		return
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	c.readLoop()
	<-writerDone
	c.cancel()
	c.nc.Close()
	c.waits.Wait()
	// Requests torn down before their response give their room back.
	c.releaseHeld(c.held.Load())
	c.connClosed()
}

func (c *conn) connClosed() {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panicked in ConnClosed", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	c.srv.handler.ConnClosed(c.info)
}

// readLoop reads, decodes and handles requests in order until the
// connection ends. Any error tears the connection down, except a clean EOF
// between frames, which lets queued responses leave first.
func (c *conn) readLoop() {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic reading request; closing connection", "panic", r, "stack", string(debug.Stack()))
			c.cancel()
		}
	}()
	for {
		select {
		case c.slots <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		if !c.awaitUnmuted() {
			return
		}
		raw := c.rawTokenStage()
		frame, pf, held, err := c.readFrame(raw)
		received := nanotime()
		if errors.Is(err, errCleanEOF) {
			c.enqueue(&inflight{drain: true})
			return
		}
		if err != nil {
			c.closeOnReadError(err)
			return
		}
		// A Wait's throttle may have come while the read blocked.
		if !c.awaitUnmuted() {
			return
		}
		var req *Request
		var resp Response
		if raw {
			req = &Request{Conn: c.info, frame: pf, held: held, Size: len(frame)}
			if resp, err = c.saslRawToken(frame, time.Now()); err != nil {
				c.saslFailed(err)
				c.cancel()
				return
			}
		} else {
			req, err = decodeRequest(frame, c.srv.handler.Versions)
			if err != nil {
				c.log.Warn("closing connection: bad request", "reason", err, "size", len(frame))
				c.cancel()
				return
			}
			req.Conn = c.info
			req.frame = pf
			req.held = held
			req.times.received, req.times.decoded = received, nanotime()
			var ok bool
			if resp, ok = c.serveRequest(req); !ok {
				c.cancel()
				return
			}
			c.muteFor(resp.Throttle)
		}
		if resp.Wait == nil && !resp.Close && c.queued.Load() == 0 {
			if err := c.answer(req, resp); err != nil {
				c.log.Warn("closing connection: writing response failed", "api_key", req.Key,
					"correlation_id", req.CorrelationID, "err", err)
				c.cancel()
				return
			}
			if resp.CloseAfter {
				c.cancel()
				return
			}
			continue
		}
		e := &inflight{req: req, resp: resp}
		c.queued.Add(1)
		if resp.Wait != nil {
			e.result = make(chan Response, 1)
			c.waits.Add(1)
			go c.runWait(e)
		}
		if !c.enqueue(e) || resp.Close || resp.CloseAfter {
			return
		}
	}
}

// serveRequest answers req: the SASL exchange first where the listener
// has one, then the handler. false closes the connection.
func (c *conn) serveRequest(req *Request) (Response, bool) {
	if c.sasl != nil {
		resp, handled, err := c.interceptSASL(req, time.Now())
		if err != nil {
			if !c.sasl.authenticated() {
				c.counters.authFailed(c.sasl.reauth)
			}
			c.log.Warn("closing connection", "reason", err, "api_key", req.Key, "correlation_id", req.CorrelationID)
			return Response{}, false
		}
		if handled {
			req.times.dequeued = req.times.decoded
			req.times.localDone = nanotime()
			return resp, true
		}
	}
	if !c.takeRequestSlot() {
		return Response{}, false
	}
	t := &req.times
	t.dequeued = nanotime()
	resp, ok := c.handle(req)
	t.localDone = nanotime()
	c.srv.metrics.reqs().handled(t.localDone - t.dequeued)
	<-c.srv.requestSlots
	return resp, ok
}

// answer writes a ready response from the read loop, when no earlier
// response is still queued. Handing every response to the write loop costs
// a goroutine wake-up (often a thread wake-up) per request, which on a
// busy produce connection is a good part of the broker's CPU and of the
// produce latency. The response is flushed unless the next request has
// fully arrived already: its answer can then share the write, and answer
// or the write loop flushes both.
func (c *conn) answer(req *Request, resp Response) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	req.times.sendStart = nanotime()
	if !resp.None {
		if err := c.writeResponse(req, resp); err != nil {
			return err
		}
	}
	// A throttled response must not wait for the next request's answer:
	// that request is not read before the throttle ends.
	if resp.CloseAfter || resp.Throttle > 0 || !c.nextFrameBuffered() {
		if err := c.flushLocked(); err != nil {
			return err
		}
	}
	c.srv.metrics.reqs().record(req, &resp, nanotime())
	c.finished(req)
	return nil
}

// nextFrameBuffered reports whether a whole next request is already in the
// read buffer, so reading it cannot block. Only the read loop calls it.
func (c *conn) nextFrameBuffered() bool {
	n := c.br.Buffered()
	if n < 4 {
		return false
	}
	b, err := c.br.Peek(4)
	if err != nil {
		return false
	}
	return int64(n) >= 4+int64(binary.BigEndian.Uint32(b))
}

// takeRequestSlot waits for one of queued.max.requests; the connection is
// muted meanwhile. False when the connection ended.
func (c *conn) takeRequestSlot() bool {
	select {
	case c.srv.requestSlots <- struct{}{}:
		return true
	default:
	}
	c.srv.muted.Add(1)
	defer c.srv.muted.Add(-1)
	select {
	case c.srv.requestSlots <- struct{}{}:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// enqueue never blocks for long: the slot taken before the read reserved
// room in queue.
func (c *conn) enqueue(e *inflight) bool {
	select {
	case c.queue <- e:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func (c *conn) closeOnReadError(err error) {
	var ne net.Error
	switch {
	case c.ctx.Err() != nil:
		// Torn down from elsewhere (Close, write failure): nothing to say.
	case errors.Is(err, errIdle):
		c.log.Info("closing idle connection", "idle_timeout", c.srv.cfg.IdleTimeout)
	case errors.As(err, &ne) && ne.Timeout():
		c.log.Warn("closing connection: request not completed in time", "err", err)
	case errors.Is(err, syscall.ECONNRESET):
		// The client went away without a FIN: nothing was wrong with
		// what it sent.
		c.log.Debug("connection reset by the client", "err", err)
	case errors.As(err, new(frameSizeError)) && c.sasl != nil && !c.sasl.authenticated():
		c.counters.authFailed(c.sasl.reauth)
		c.log.Warn("closing connection: request size out of range before authentication", "size", int32(err.(frameSizeError)),
			"sasl.server.max.receive.size", c.maxFrame())
	case errors.As(err, new(frameSizeError)):
		c.log.Warn("closing connection: request size out of range", "size", int32(err.(frameSizeError)),
			"min", fixedHeaderLen, "socket.request.max.bytes", c.srv.cfg.MaxRequestSize)
	default:
		c.log.Warn("closing connection: bad frame", "reason", err)
	}
	c.cancel()
}

// handle runs Handler.Handle, turning a panic into a closed connection so
// one bad request cannot take the broker down.
func (c *conn) handle(req *Request) (resp Response, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panicked; closing connection", "api_key", req.Key, "api_version", req.Version,
				"correlation_id", req.CorrelationID, "panic", r, "stack", string(debug.Stack()))
			ok = false
		}
	}()
	return c.srv.handler.Handle(c.ctx, req), true
}

// runWait runs a response's second phase. A Wait may itself answer with a
// further Wait; it is followed in the same goroutine.
func (c *conn) runWait(e *inflight) {
	defer c.waits.Done()
	resp := e.resp
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler Wait panicked; closing connection", "api_key", e.req.Key,
				"correlation_id", e.req.CorrelationID, "panic", r, "stack", string(debug.Stack()))
			e.result <- Response{Close: true}
		}
	}()
	for resp.Wait != nil {
		resp = resp.Wait(c.ctx)
	}
	e.req.times.ready = nanotime()
	c.muteFor(resp.Throttle)
	e.result <- resp
}

// frameSizeError is a size prefix below the smallest header or above
// socket.request.max.bytes. Kafka closes the connection on both: the stream
// cannot be resynchronised.
type frameSizeError int32

func (e frameSizeError) Error() string { return fmt.Sprintf("request size %d out of range", int32(e)) }

var (
	errCleanEOF = errors.New("client closed the connection")
	errIdle     = errors.New("connection idle")
)

// readFrame reads one size-prefixed frame into a pooled buffer (pf, nil
// for an unpooled size). kmsg decoding keeps byte fields (Produce records)
// as sub-slices of the frame, so it is only reused when the handler
// recycles the request's API (FrameRecycler), after its response left.
//
// raw reads a bare SASL token, which has no request header.
func (c *conn) readFrame(raw bool) (frame []byte, pf *pooledFrame, held int64, err error) {
	idle := c.srv.cfg.IdleTimeout
	for {
		deadline := time.Unix(0, c.lastActive.Load()).Add(idle)
		if err := c.nc.SetReadDeadline(deadline); err != nil {
			return nil, nil, 0, err
		}
		_, err := c.br.Peek(4)
		if err == nil {
			break
		}
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			// A response written meanwhile counts as activity too.
			if time.Since(time.Unix(0, c.lastActive.Load())) < idle {
				continue
			}
			return nil, nil, 0, errIdle
		case errors.Is(err, io.EOF) && c.br.Buffered() == 0:
			return nil, nil, 0, errCleanEOF
		case errors.Is(err, io.EOF):
			return nil, nil, 0, fmt.Errorf("size prefix truncated after %d bytes", c.br.Buffered())
		}
		return nil, nil, 0, err
	}
	var sizeBuf [4]byte
	if _, err := io.ReadFull(c.br, sizeBuf[:]); err != nil {
		return nil, nil, 0, err
	}
	size := int32(uint32(sizeBuf[0])<<24 | uint32(sizeBuf[1])<<16 | uint32(sizeBuf[2])<<8 | uint32(sizeBuf[3]))
	minSize := int32(fixedHeaderLen)
	if raw {
		minSize = 0
	}
	if size < minSize || int64(size) > int64(c.maxFrame()) {
		return nil, nil, 0, frameSizeError(size)
	}
	// A frame may take a while to arrive, but not longer than a whole idle
	// period: a client that stalls mid-frame is as dead as an idle one.
	if err := c.nc.SetReadDeadline(time.Now().Add(idle)); err != nil {
		return nil, nil, 0, err
	}
	pooled := false
	if c.srv.recycles != nil && !raw {
		// The api key opens the header; a frame shorter than that is
		// reported as truncated below.
		if key, err := c.br.Peek(2); err == nil && c.srv.recycles(int16(binary.BigEndian.Uint16(key))) {
			pooled = true
		}
	}
	frame, pf, held, err = c.readBody(int(size), pooled)
	if err != nil {
		return nil, nil, 0, err
	}
	c.counters.addIn(4 + int(size))
	c.touch()
	return frame, pf, held, nil
}
