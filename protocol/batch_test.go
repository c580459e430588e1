package protocol

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// writeCountingListener records the size of every Write on accepted conns.
type writeCountingListener struct {
	net.Listener
	mu     sync.Mutex
	writes []int
}

func (l *writeCountingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &writeCountingConn{Conn: nc, l: l}, nil
}

type writeCountingConn struct {
	net.Conn
	l *writeCountingListener
}

func (c *writeCountingConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes = append(c.l.writes, len(b))
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

// Responses that become ready together leave in one write: the write loop
// only flushes when it would otherwise wait.
func TestReadyResponsesShareOneWrite(t *testing.T) {
	h := newFakeHandler()
	release := make(chan struct{})
	var handled atomic.Int32
	h.onHandle = func(ctx context.Context, req *Request) Response {
		// Request 4 is read only after 2 and 3 were queued with their
		// answers, so releasing 1 here makes 1-3 ready at once.
		n := handled.Add(1)
		if n == 4 {
			close(release)
		}
		if n != 1 {
			return Response{Msg: h.apiVersions(req)}
		}
		return Response{Wait: func(ctx context.Context) Response {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return Response{Msg: h.apiVersions(req)}
		}}
	}
	ln := &writeCountingListener{Listener: listen(t)}
	serveOn(t, ln, h)

	c := dial(t, ln.Addr().String())
	req := apiVersionsAt(3)
	var frames []byte
	for corr := int32(1); corr <= 4; corr++ {
		frames = append(frames, encodeRequest(corr, nil, req)...)
	}
	c.write(frames)
	var sizes []int
	for want := int32(1); want <= 4; want++ {
		b, err := c.readFrame()
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, 4+len(b))
	}
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if len(ln.writes) == 0 || ln.writes[0] < sizes[0]+sizes[1]+sizes[2] {
		t.Fatalf("writes %v for responses of %v bytes; want the first three in the first write", ln.writes, sizes)
	}
}
