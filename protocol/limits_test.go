package protocol

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// declaredFrame is the start of a Produce frame whose prefix declares
// size bytes, with body bytes of it sent.
func declaredFrame(size uint32, body int) []byte {
	b := binary.BigEndian.AppendUint32(nil, size)
	b = append(b, 0, 0, 0, 9) // Produce v9
	return append(b, make([]byte, body)...)
}

func poolUsed(s *Server) int64 {
	used, _, _ := s.pool.stats(time.Now())
	return used
}

// waitPool waits until cond holds of the pool's use, for at most 5 s.
func waitPool(t *testing.T, s *Server, what string, cond func(int64) bool) int64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		used := poolUsed(s)
		if cond(used) {
			return used
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory pool holds %d bytes; want %s", used, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDeclaredSizeIsNotAllocated(t *testing.T) {
	ts := startServer(t, ServerConfig{QueuedMaxRequestBytes: 1 << 30}, newFakeHandler())
	var clients []*client
	// Fewer than fakeHandler's ConnClosed buffer.
	for i := 0; i < 12; i++ {
		c := dial(t, ts.addr)
		c.write(declaredFrame(DefaultMaxRequestSize, 1<<10))
		clients = append(clients, c)
	}
	// Each holds its first chunk, not the 100 MiB it declared.
	waitPool(t, ts.srv, "12 first chunks", func(u int64) bool { return u == 12*initialFrameChunk })
	for _, c := range clients {
		c.nc.Close()
	}
	waitPool(t, ts.srv, "nothing once the clients left", func(u int64) bool { return u == 0 })
}

func TestFrameGrowsAsBytesArrive(t *testing.T) {
	ts := startServer(t, ServerConfig{}, newFakeHandler())
	c := dial(t, ts.addr)
	c.write(declaredFrame(DefaultMaxRequestSize, 200<<10))
	// 200 KiB arrived: the buffer grew in steps of frameGrowth from what
	// was there at first, so it is at least that and at most frameGrowth
	// times as much.
	const arrived = 200<<10 + 4
	waitPool(t, ts.srv, "a buffer for the 200 KiB that arrived", func(u int64) bool { return u >= arrived })
	time.Sleep(50 * time.Millisecond)
	if u := poolUsed(ts.srv); u > frameGrowth*arrived {
		t.Fatalf("%d bytes held for %d that arrived", u, arrived)
	}
}

func TestExhaustedPoolMutesThenStalledHoldersMakeRoom(t *testing.T) {
	const pool = 1 << 20
	ts := startServer(t, ServerConfig{QueuedMaxRequestBytes: pool, StallGrace: 200 * time.Millisecond}, newFakeHandler())
	// Attackers fill the pool with frames they never finish.
	for i := 0; i < 8; i++ {
		c := dial(t, ts.addr)
		c.write(declaredFrame(DefaultMaxRequestSize, 200<<10))
	}
	waitPool(t, ts.srv, "the pool full", func(u int64) bool { return u >= pool-(256<<10) })
	// A well-behaved client still gets its answer, once the stalled
	// holders are closed.
	c := dial(t, ts.addr)
	req := apiVersionsAt(3)
	start := time.Now()
	c.send(1, req)
	if corr, _ := c.recv(req); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("answered after %v", d)
	}
	ts.waitLog(t, "holds request memory other connections are waiting for")
}

func TestQueuedMaxRequestsMutes(t *testing.T) {
	h := newFakeHandler()
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	h.onHandle = func(_ context.Context, req *Request) Response {
		if req.Key == 3 {
			entered <- struct{}{}
			<-release
		}
		return Response{Msg: req.Body.ResponseKind()}
	}
	ts := startServer(t, ServerConfig{QueuedMaxRequests: 1}, h)
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(9)
	a := dial(t, ts.addr)
	a.send(1, meta)
	<-entered
	// The only request slot is taken: b's request is read but waits.
	b := dial(t, ts.addr)
	av := apiVersionsAt(3)
	b.send(1, av)
	deadline := time.Now().Add(5 * time.Second)
	for ts.srv.muted.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("muted = %d, want 1", ts.srv.muted.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	a.recv(meta)
	if corr, _ := b.recv(av); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
}

func TestMaxConnectionsClosesNewOnes(t *testing.T) {
	ts := startServer(t, ServerConfig{MaxConnections: 2}, newFakeHandler())
	req := apiVersionsAt(3)
	a, b := dial(t, ts.addr), dial(t, ts.addr)
	for _, c := range []*client{a, b} {
		c.send(1, req)
		c.recv(req)
	}
	c := dial(t, ts.addr)
	c.expectClosed()
	a.send(2, req)
	a.recv(req)
	ts.waitLog(t, "limit reached")
}

func TestStuckReaderIsClosedAfterIdleTimeout(t *testing.T) {
	h := newFakeHandler()
	big := make(bytesFrame, 1<<20)
	h.onHandle = func(_ context.Context, req *Request) Response {
		if req.Key == 3 {
			return Response{Frame: big}
		}
		return Response{Msg: req.Body.ResponseKind()}
	}
	ts := startServer(t, ServerConfig{IdleTimeout: 500 * time.Millisecond}, h)
	c := dial(t, ts.addr)
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(9)
	frame := encodeRequest(1, nil, meta)
	// Pipeline requests and never read: the server's writes block once
	// the socket buffers fill, and it must give up on the connection.
	start := time.Now()
	for time.Since(start) < 10*time.Second {
		_ = c.nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.nc.Write(frame); err != nil && !isTimeout(err) {
			break
		}
	}
	ts.waitLog(t, "write")
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("stuck reader closed after %v, want about the idle timeout", d)
	}
}
