package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// writeLoop writes responses in request order. It only flushes when it
// would otherwise wait (nothing queued, or the next response's Wait still
// running), so responses that are ready together leave in one write.
func (c *conn) writeLoop() {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic writing response; closing connection", "panic", r, "stack", string(debug.Stack()))
		}
		c.cancel()
	}()
	for {
		var e *inflight
		select {
		case e = <-c.queue:
		default:
			if !c.flush() {
				return
			}
			select {
			case e = <-c.queue:
			case <-c.ctx.Done():
				return
			}
		}
		resp := e.resp
		if e.result != nil {
			select {
			case resp = <-e.result:
			default:
				if !c.flush() {
					return
				}
				select {
				case resp = <-e.result:
				case <-c.ctx.Done():
					return
				}
			}
		}
		if e.drain || resp.Close {
			c.flush()
			return
		}
		c.wmu.Lock()
		e.req.times.sendStart = nanotime()
		var err error
		if !resp.None {
			err = c.writeResponse(e.req, resp)
		}
		// Decremented under wmu: a direct answer that sees zero then
		// waits for the lock and lands after this response.
		c.queued.Add(-1)
		c.wmu.Unlock()
		if err != nil {
			c.log.Warn("closing connection: writing response failed", "api_key", e.req.Key,
				"correlation_id", e.req.CorrelationID, "err", err)
			return
		}
		// The write loop flushes only before it would wait: the send time
		// of a small response is its copy into the buffer (a Frame's is
		// its write), the flush of the batch is booked to none.
		c.srv.metrics.reqs().record(e.req, &resp, nanotime())
		c.finished(e.req)
		if resp.CloseAfter {
			c.flush()
			return
		}
	}
}

// finished ends a request whose response left (or needs none): its frame
// goes back to the pool and its in-flight slot is freed.
func (c *conn) finished(req *Request) {
	if req.frame == nil {
		c.srv.addGarbage(req.held)
	}
	c.srv.frames.put(req.frame)
	c.releaseHeld(req.held)
	req.frame, req.held = nil, 0
	<-c.slots
}

// flush writes out what the write loop buffered; false means the
// connection is done.
func (c *conn) flush() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.flushLocked(); err != nil {
		if c.ctx.Err() == nil {
			c.log.Warn("closing connection: write failed", "err", err)
		}
		return false
	}
	return true
}

func (c *conn) flushLocked() error {
	if c.bw.Buffered() == 0 {
		return nil
	}
	if err := c.setWriteDeadline(); err != nil {
		return err
	}
	c.writeSince.Store(time.Now().UnixNano())
	defer c.writeSince.Store(0)
	return c.bw.Flush()
}

func (c *conn) setWriteDeadline() error {
	return c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.IdleTimeout))
}

const maxRetainedEncodeBuf = 1 << 20

var errEmptyResponse = errors.New("handler returned a Response with no Msg, Frame, Wait, None or Close")

// writeResponse buffers (Msg) or writes (Frame) one response; the caller
// holds wmu.
func (c *conn) writeResponse(req *Request, resp Response) error {
	// ApiVersions responses keep header v0 at every version so a client
	// that guessed a version too new can still read the answer (KIP-511).
	if resp.raw != nil {
		b := binary.BigEndian.AppendUint32(c.wbuf[:0], uint32(len(resp.raw)))
		b = append(b, resp.raw...)
		c.wbuf = b
		if _, err := c.bw.Write(b); err != nil {
			return err
		}
		c.counters.addOut(len(b))
		c.touch()
		return nil
	}
	headerV1 := req.Body.IsFlexible() && req.Key != apiVersionsKey
	switch {
	case resp.Msg != nil:
		if resp.Msg.Key() != req.Key {
			return fmt.Errorf("handler answered api key %d with a response for key %d", req.Key, resp.Msg.Key())
		}
		resp.Msg.SetVersion(req.Version)
		b := append(c.wbuf[:0], 0, 0, 0, 0)
		b = appendResponseHeader(b, req.CorrelationID, headerV1)
		b = resp.Msg.AppendTo(b)
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
		if _, err := c.bw.Write(b); err != nil {
			return err
		}
		// Keep the buffer for the next response unless one huge response
		// (a large Metadata) would pin its size for the connection's life.
		if cap(b) <= maxRetainedEncodeBuf {
			c.wbuf = b
		} else {
			c.wbuf = nil
		}
		c.counters.addOut(len(b))
	case resp.Frame != nil:
		return c.writeFrame(req, resp.Frame, headerV1)
	default:
		return errEmptyResponse
	}
	c.touch()
	return nil
}

// writeFrame writes the header through the buffer, flushes, and lets the
// Frame write to the socket itself, so a file-backed Frame can use sendfile.
func (c *conn) writeFrame(req *Request, f Frame, headerV1 bool) error {
	var hdr [9]byte
	b := appendResponseHeader(hdr[:4], req.CorrelationID, headerV1)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4+f.Len()))
	if _, err := c.bw.Write(b); err != nil {
		return err
	}
	if err := c.flushLocked(); err != nil {
		return err
	}
	if err := c.setWriteDeadline(); err != nil {
		return err
	}
	c.writeSince.Store(time.Now().UnixNano())
	n, err := f.WriteTo(c.nc)
	c.writeSince.Store(0)
	c.counters.addOut(len(b) + int(n))
	if err != nil {
		return err
	}
	if n != int64(f.Len()) {
		// The size prefix promised Len bytes; the stream is now corrupt.
		return fmt.Errorf("frame wrote %d bytes, announced %d", n, f.Len())
	}
	c.touch()
	return nil
}
