package harness

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxWireResponse bounds one response read by Wire: the tests send small
// requests, so a huge length prefix means a broken stream, not a big answer.
const maxWireResponse = 64 << 20

// Wire is one plain TCP connection to one broker that sends each request at
// exactly the version set on it (kmsg's Version field). Unlike a kgo client
// it neither negotiates versions, nor routes to a coordinator or leader, nor
// retries: what the broker answers is what the test sees. Requests on one
// Wire are serialised.
type Wire struct {
	Addr string

	mu   sync.Mutex
	conn net.Conn
	corr int32
	fmt  *kmsg.RequestFormatter
}

// DialWire connects to addr within timeout; the test's cleanup closes it.
func DialWire(t testing.TB, addr string, timeout time.Duration) *Wire {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	w := &Wire{Addr: addr, conn: conn, fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID("kbroker-compat-wire"))}
	t.Cleanup(func() { conn.Close() })
	return w
}

// Request writes req at req.GetVersion() and reads its response, both
// bounded by ctx's deadline (or 30 s without one). An error leaves the
// connection unusable.
func (w *Wire) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	if err := w.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	w.corr++
	corr := w.corr
	if _, err := w.conn.Write(w.fmt.AppendRequest(nil, req, corr)); err != nil {
		return nil, fmt.Errorf("write %s v%d: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	var size [4]byte
	if _, err := io.ReadFull(w.conn, size[:]); err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > maxWireResponse {
		return nil, fmt.Errorf("%s v%d response length %d", kmsg.NameForKey(req.Key()), req.GetVersion(), n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(w.conn, body); err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		return nil, fmt.Errorf("%s v%d: correlation id %d, want %d", kmsg.NameForKey(req.Key()), req.GetVersion(), got, corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	// Flexible responses carry a tag buffer in their header, except
	// ApiVersions, whose response header stays v0 so that any client can
	// read it (KIP-511).
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		if len(body) < 1 || body[0] != 0 {
			return nil, fmt.Errorf("%s v%d: unexpected response header tags", kmsg.NameForKey(req.Key()), req.GetVersion())
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s v%d response: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}
