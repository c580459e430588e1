package protocol

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeHandler serves ApiVersions itself and delegates everything else to
// onHandle.
type fakeHandler struct {
	versions map[int16][2]int16
	onHandle func(ctx context.Context, req *Request) Response

	mu     sync.Mutex
	seen   []*Request
	closed chan *ConnInfo
}

func newFakeHandler() *fakeHandler {
	return &fakeHandler{
		versions: map[int16][2]int16{
			0:  {3, 11}, // Produce
			3:  {0, 12}, // Metadata
			18: {0, 3},  // ApiVersions
		},
		closed: make(chan *ConnInfo, 16),
	}
}

func (h *fakeHandler) Versions(key int16) (int16, int16, bool) {
	v, ok := h.versions[key]
	return v[0], v[1], ok
}

func (h *fakeHandler) Handle(ctx context.Context, req *Request) Response {
	h.mu.Lock()
	h.seen = append(h.seen, req)
	h.mu.Unlock()
	if h.onHandle != nil {
		return h.onHandle(ctx, req)
	}
	if req.Key == apiVersionsKey {
		return Response{Msg: h.apiVersions(req)}
	}
	return Response{Msg: req.Body.ResponseKind()}
}

func (h *fakeHandler) apiVersions(req *Request) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	if req.RequestedVersion != req.Version {
		resp.ErrorCode = 35 // UNSUPPORTED_VERSION
	}
	for _, key := range []int16{0, 3, 18} {
		v := h.versions[key]
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: key, MinVersion: v[0], MaxVersion: v[1]})
	}
	return resp
}

func (h *fakeHandler) ConnClosed(c *ConnInfo) { h.closed <- c }

func (h *fakeHandler) seenRequests() []*Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Request(nil), h.seen...)
}

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type testServer struct {
	srv   *Server
	addr  string
	logs  *syncBuffer
	h     *fakeHandler
	serve chan error
}

func startServer(t *testing.T, cfg ServerConfig, h *fakeHandler) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ts := &testServer{
		srv:   NewServer(cfg, h, slog.New(slog.NewTextHandler(logs, nil))),
		addr:  ln.Addr().String(),
		logs:  logs,
		h:     h,
		serve: make(chan error, 1),
	}
	go func() { ts.serve <- ts.srv.Serve(context.Background(), ln, "PLAINTEXT") }()
	t.Cleanup(func() {
		ts.srv.Close()
		select {
		case err := <-ts.serve:
			if err != nil {
				t.Errorf("Serve returned %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after Close")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return ts
}

// waitLog waits until the server log contains substr.
func (ts *testServer) waitLog(t *testing.T, substr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !bytes.Contains([]byte(ts.logs.String()), []byte(substr)) {
		if time.Now().After(deadline) {
			t.Fatalf("log never contained %q; log:\n%s", substr, ts.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitConnClosed waits for Handler.ConnClosed.
func (ts *testServer) waitConnClosed(t *testing.T) *ConnInfo {
	t.Helper()
	select {
	case c := <-ts.h.closed:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("ConnClosed was not called")
		return nil
	}
}

// client is a raw Kafka client for tests: it frames requests itself so
// tests can also send what no real client would.
type client struct {
	t  testing.TB
	nc net.Conn
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc}
}

// encodeRequest builds a full frame, size prefix included.
func encodeRequest(corr int32, clientID *string, body kmsg.Request) []byte {
	b := []byte{0, 0, 0, 0}
	b = binary.BigEndian.AppendUint16(b, uint16(body.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(body.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if clientID == nil {
		b = binary.BigEndian.AppendUint16(b, 0xffff)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(*clientID)))
		b = append(b, *clientID...)
	}
	if body.IsFlexible() {
		b = append(b, 0)
	}
	b = body.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func (c *client) write(b []byte) {
	c.t.Helper()
	if err := c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) send(corr int32, body kmsg.Request) {
	c.t.Helper()
	id := "test-client"
	c.write(encodeRequest(corr, &id, body))
}

// readFrame reads one response frame and returns it without the prefix.
func (c *client) readFrame() ([]byte, error) {
	if err := c.nc.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(c.nc, b)
	return b, err
}

// recv reads a response to req (sent at req's version) and decodes it.
func (c *client) recv(req kmsg.Request) (int32, kmsg.Response) {
	c.t.Helper()
	b, err := c.readFrame()
	if err != nil {
		c.t.Fatalf("reading response: %v", err)
	}
	corr := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	if req.IsFlexible() && req.Key() != apiVersionsKey {
		if len(b) == 0 || b[0] != 0 {
			c.t.Fatalf("flexible response header without an empty tag buffer: % x", b)
		}
		b = b[1:]
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(b); err != nil {
		c.t.Fatalf("decoding %T: %v", resp, err)
	}
	return corr, resp
}

// expectClosed asserts the server closes the connection (EOF or reset),
// not merely that it stays silent.
func (c *client) expectClosed() {
	c.t.Helper()
	_, err := c.readFrame()
	var ne net.Error
	switch {
	case err == nil:
		c.t.Fatal("got a response; want the connection closed")
	case errors.As(err, &ne) && ne.Timeout():
		c.t.Fatal("connection still open after 5s; want it closed")
	}
}

// serveOn serves h on ln with a default-configured Server until the test
// ends; it works for listeners startServer cannot take (wrapped ones).
func serveOn(t testing.TB, ln net.Listener, h Handler) *Server {
	t.Helper()
	srv := NewServer(ServerConfig{}, h, slog.New(slog.DiscardHandler))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), ln, "PLAINTEXT") }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return srv
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
