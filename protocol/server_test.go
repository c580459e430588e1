package protocol

import (
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func apiVersionsAt(v int16) *kmsg.ApiVersionsRequest {
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = v
	r.ClientSoftwareName = "kbroker-test"
	r.ClientSoftwareVersion = "1"
	return r
}

func TestApiVersionsV3RoundTrip(t *testing.T) {
	ts := startServer(t, ServerConfig{}, newFakeHandler())
	c := dial(t, ts.addr)
	req := apiVersionsAt(3)
	c.send(7, req)
	corr, r := c.recv(req)
	resp := r.(*kmsg.ApiVersionsResponse)
	if corr != 7 || resp.ErrorCode != 0 || len(resp.ApiKeys) != 3 {
		t.Fatalf("corr %d, error %d, %d keys; want 7, 0, 3", corr, resp.ErrorCode, len(resp.ApiKeys))
	}
	got := ts.h.seenRequests()[0]
	body := got.Body.(*kmsg.ApiVersionsRequest)
	if got.Version != 3 || got.RequestedVersion != 3 || *got.ClientID != "test-client" || body.ClientSoftwareName != "kbroker-test" {
		t.Fatalf("handler saw %+v body %+v", got, body)
	}
}

// A flexible response other than ApiVersions carries header v1; recv checks
// the tag byte.
func TestFlexibleResponseHeader(t *testing.T) {
	ts := startServer(t, ServerConfig{}, newFakeHandler())
	c := dial(t, ts.addr)
	for i, v := range []int16{0, 8, 9, 12} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		c.send(int32(i), req)
		if corr, _ := c.recv(req); corr != int32(i) {
			t.Fatalf("Metadata v%d: correlation id %d, want %d", v, corr, i)
		}
	}
}

func TestApiVersionsUnsupportedVersionGetsV0Answer(t *testing.T) {
	ts := startServer(t, ServerConfig{}, newFakeHandler())
	c := dial(t, ts.addr)
	// A v127 body we cannot know the shape of: it must not be decoded.
	id := "future-client"
	frame := encodeRequest(9, &id, apiVersionsAt(3))
	binary.BigEndian.PutUint16(frame[6:], 127)
	frame = append(frame, 0xde, 0xad)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	c.write(frame)

	corr, r := c.recv(apiVersionsAt(0))
	resp := r.(*kmsg.ApiVersionsResponse)
	if corr != 9 || resp.ErrorCode != 35 {
		t.Fatalf("corr %d error %d; want 9, 35 (UNSUPPORTED_VERSION)", corr, resp.ErrorCode)
	}
	if len(resp.ApiKeys) != 3 || resp.ApiKeys[2].ApiKey != 18 || resp.ApiKeys[2].MaxVersion != 3 {
		t.Fatalf("api list %+v", resp.ApiKeys)
	}
	got := ts.h.seenRequests()[0]
	if got.Version != 0 || got.RequestedVersion != 127 || got.Body.GetVersion() != 0 {
		t.Fatalf("handler saw version %d requested %d body v%d", got.Version, got.RequestedVersion, got.Body.GetVersion())
	}
	// The connection stays usable: the client retries at a version we know.
	req := apiVersionsAt(3)
	c.send(10, req)
	if corr, r := c.recv(req); corr != 10 || r.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
		t.Fatalf("retry: corr %d error %d", corr, r.(*kmsg.ApiVersionsResponse).ErrorCode)
	}
}

func TestPipelinedResponsesKeepOrderBehindSlowWait(t *testing.T) {
	h := newFakeHandler()
	release := make(chan struct{})
	var handled atomic.Int32
	h.onHandle = func(ctx context.Context, req *Request) Response {
		n := handled.Add(1)
		if req.CorrelationID == 1 {
			return Response{Wait: func(ctx context.Context) Response {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return Response{Msg: h.apiVersions(req)}
			}}
		}
		if n == 3 {
			// Requests 2 and 3 were read and handled while 1 waits.
			close(release)
		}
		return Response{Msg: h.apiVersions(req)}
	}
	ts := startServer(t, ServerConfig{}, h)
	c := dial(t, ts.addr)
	req := apiVersionsAt(3)
	var frames []byte
	for corr := int32(1); corr <= 3; corr++ {
		frames = append(frames, encodeRequest(corr, nil, req)...)
	}
	c.write(frames)
	for want := int32(1); want <= 3; want++ {
		if corr, _ := c.recv(req); corr != want {
			t.Fatalf("got correlation id %d, want %d", corr, want)
		}
	}
}

func TestNoneSendsNoResponse(t *testing.T) {
	h := newFakeHandler()
	h.onHandle = func(ctx context.Context, req *Request) Response {
		if req.Key == 0 {
			if acks := req.Body.(*kmsg.ProduceRequest).Acks; acks != 0 {
				t.Errorf("acks %d, want 0", acks)
			}
			return Response{None: true}
		}
		return Response{Msg: h.apiVersions(req)}
	}
	ts := startServer(t, ServerConfig{}, h)
	c := dial(t, ts.addr)
	produce := kmsg.NewPtrProduceRequest()
	produce.Version = 9
	produce.Acks = 0
	c.send(1, produce)
	req := apiVersionsAt(3)
	c.send(2, req)
	if corr, _ := c.recv(req); corr != 2 {
		t.Fatalf("first response has correlation id %d; want 2 (acks=0 produce answers nothing)", corr)
	}
}

func TestCloseResponseClosesAfterEarlierResponses(t *testing.T) {
	h := newFakeHandler()
	h.onHandle = func(ctx context.Context, req *Request) Response {
		if req.CorrelationID == 2 {
			return Response{Close: true}
		}
		return Response{Msg: h.apiVersions(req)}
	}
	ts := startServer(t, ServerConfig{}, h)
	c := dial(t, ts.addr)
	req := apiVersionsAt(3)
	c.write(append(encodeRequest(1, nil, req), encodeRequest(2, nil, req)...))
	if corr, _ := c.recv(req); corr != 1 {
		t.Fatalf("corr %d, want 1", corr)
	}
	c.expectClosed()
	ts.waitConnClosed(t)
}

func TestFrameResponse(t *testing.T) {
	h := newFakeHandler()
	payload := []byte("sendfile-me")
	h.onHandle = func(ctx context.Context, req *Request) Response {
		return Response{Frame: bytesFrame(payload)}
	}
	ts := startServer(t, ServerConfig{}, h)
	c := dial(t, ts.addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	c.send(5, req)
	b, err := c.readFrame()
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte{0, 0, 0, 5, 0}, payload...)
	if string(b) != string(want) {
		t.Fatalf("frame % x, want % x", b, want)
	}
}

type bytesFrame []byte

func (f bytesFrame) Len() int { return len(f) }
func (f bytesFrame) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(f)
	return int64(n), err
}

func TestBadInputClosesConnection(t *testing.T) {
	frame := func(b ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	tests := []struct {
		name string
		send []byte
		log  string
	}{
		{"oversized", binary.BigEndian.AppendUint32(nil, 2000), "size=2000"},
		{"negative size", binary.BigEndian.AppendUint32(nil, 0xffffffff), "size=-1"},
		{"size below header", frame(0, 18, 0, 3), "size=4"},
		{"truncated", append(binary.BigEndian.AppendUint32(nil, 100), make([]byte, 10)...), "got 10 bytes"},
		{"truncated size", []byte{0, 0}, "size prefix truncated"},
		{"client id overruns frame", frame(0, 18, 0, 0, 0, 0, 0, 1, 1, 244, 'x'), "client id length 500"},
		{"bad tag buffer", frame(0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 5), "tagged fields"},
		{"unknown api key", frame(0x27, 0x0f, 0, 0, 0, 0, 0, 1, 0xff, 0xff), "unknown api key 9999"},
		{"unsupported version", frame(0, 3, 0, 13, 0, 0, 0, 1, 0xff, 0xff), "unsupported version 13 of Metadata"},
		{"undecodable body", frame(0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 9), "decoding Metadata v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, ServerConfig{MaxRequestSize: 1024}, newFakeHandler())
			c := dial(t, ts.addr)
			c.write(tt.send)
			if tc, ok := c.nc.(interface{ CloseWrite() error }); ok {
				// EOF lets the truncated cases fail at once instead of
				// waiting for the rest of the frame.
				tc.CloseWrite()
			}
			c.expectClosed()
			info := ts.waitConnClosed(t)
			ts.waitLog(t, tt.log)
			ts.waitLog(t, "remote="+info.RemoteAddr.String())
			if n := len(ts.h.seenRequests()); n != 0 {
				t.Fatalf("handler saw %d requests", n)
			}
		})
	}
}

func TestHandlerPanicClosesOnlyThatConnection(t *testing.T) {
	h := newFakeHandler()
	h.onHandle = func(ctx context.Context, req *Request) Response {
		if req.CorrelationID == 666 {
			panic("boom")
		}
		return Response{Msg: h.apiVersions(req)}
	}
	ts := startServer(t, ServerConfig{}, h)
	bad, good := dial(t, ts.addr), dial(t, ts.addr)
	req := apiVersionsAt(3)
	good.send(1, req)
	good.recv(req)
	bad.send(666, req)
	bad.expectClosed()
	ts.waitLog(t, "handler panicked")
	ts.waitLog(t, "boom")
	good.send(2, req)
	if corr, _ := good.recv(req); corr != 2 {
		t.Fatalf("corr %d", corr)
	}
}

func TestWaitPanicClosesConnection(t *testing.T) {
	h := newFakeHandler()
	h.onHandle = func(ctx context.Context, req *Request) Response {
		return Response{Wait: func(context.Context) Response { panic("late boom") }}
	}
	ts := startServer(t, ServerConfig{}, h)
	c := dial(t, ts.addr)
	c.send(1, apiVersionsAt(3))
	c.expectClosed()
	ts.waitLog(t, "late boom")
}

func TestInFlightBoundStopsReading(t *testing.T) {
	h := newFakeHandler()
	release := make(chan struct{})
	var handled atomic.Int32
	h.onHandle = func(ctx context.Context, req *Request) Response {
		handled.Add(1)
		return Response{Wait: func(ctx context.Context) Response {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return Response{Msg: h.apiVersions(req)}
		}}
	}
	ts := startServer(t, ServerConfig{MaxInFlightPerConn: 2}, h)
	c := dial(t, ts.addr)
	req := apiVersionsAt(3)
	var frames []byte
	for corr := int32(1); corr <= 5; corr++ {
		frames = append(frames, encodeRequest(corr, nil, req)...)
	}
	c.write(frames)
	deadline := time.Now().Add(5 * time.Second)
	for handled.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// Give a wrongly unbounded reader time to pick up the rest.
	time.Sleep(100 * time.Millisecond)
	if n := handled.Load(); n != 2 {
		t.Fatalf("%d requests handled with 2 in flight allowed", n)
	}
	close(release)
	for want := int32(1); want <= 5; want++ {
		if corr, _ := c.recv(req); corr != want {
			t.Fatalf("corr %d, want %d", corr, want)
		}
	}
}

func TestIdleConnectionIsClosed(t *testing.T) {
	ts := startServer(t, ServerConfig{IdleTimeout: 200 * time.Millisecond}, newFakeHandler())
	c := dial(t, ts.addr)
	req := apiVersionsAt(3)
	// Activity keeps it open past the timeout.
	for i := int32(0); i < 4; i++ {
		c.send(i, req)
		c.recv(req)
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	c.expectClosed()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("closed after %v", d)
	}
	ts.waitLog(t, "closing idle connection")
}

func TestCloseStopsConnectionsAndWaits(t *testing.T) {
	h := newFakeHandler()
	waitEnded := make(chan struct{})
	h.onHandle = func(ctx context.Context, req *Request) Response {
		return Response{Wait: func(ctx context.Context) Response {
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond)
			close(waitEnded)
			return Response{None: true}
		}}
	}
	ts := startServer(t, ServerConfig{}, h)
	c := dial(t, ts.addr)
	c.send(1, apiVersionsAt(3))
	deadline := time.Now().Add(5 * time.Second)
	for len(h.seenRequests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { ts.srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	select {
	case <-waitEnded:
	default:
		t.Fatal("Close returned before the running Wait ended")
	}
	c.expectClosed()
	ts.waitConnClosed(t)
	if err := ts.srv.Serve(context.Background(), listen(t), "X"); err != ErrServerClosed {
		t.Fatalf("Serve after Close: %v", err)
	}
}

func TestServeStopsWithContext(t *testing.T) {
	h := newFakeHandler()
	ts := startServer(t, ServerConfig{}, h)
	ln2 := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ts.srv.Serve(ctx, ln2, "INTERNAL") }()
	c := dial(t, ln2.Addr().String())
	req := apiVersionsAt(3)
	c.send(1, req)
	c.recv(req)
	if got := ts.h.seenRequests()[0].Conn.Listener; got != "INTERNAL" {
		t.Fatalf("listener %q", got)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	c.expectClosed()
	// The other listener is unaffected.
	other := dial(t, ts.addr)
	other.send(2, req)
	other.recv(req)
}

func TestMessageForWrongKeyClosesConnection(t *testing.T) {
	h := newFakeHandler()
	h.onHandle = func(ctx context.Context, req *Request) Response {
		return Response{Msg: kmsg.NewPtrMetadataResponse()}
	}
	ts := startServer(t, ServerConfig{}, h)
	c := dial(t, ts.addr)
	c.send(1, apiVersionsAt(3))
	c.expectClosed()
	ts.waitLog(t, "response for key 3")
}

// Responses answered directly by the read loop and responses coming out
// of Waits of random lengths, pipelined in random bursts, still leave in
// request order with none lost or held back.
func TestDirectAndWaitedResponsesKeepOrder(t *testing.T) {
	h := newFakeHandler()
	h.onHandle = func(ctx context.Context, req *Request) Response {
		if req.CorrelationID%3 != 0 {
			return Response{Msg: h.apiVersions(req)}
		}
		d := time.Duration(req.CorrelationID%7) * 100 * time.Microsecond
		return Response{Wait: func(ctx context.Context) Response {
			time.Sleep(d)
			return Response{Msg: h.apiVersions(req)}
		}}
	}
	ts := startServer(t, ServerConfig{}, h)
	c := dial(t, ts.addr)
	req := apiVersionsAt(3)
	rng := rand.New(rand.NewPCG(1, 2))
	next, want := int32(1), int32(1)
	for next <= 2000 {
		var frames []byte
		for n := 1 + rng.IntN(5); n > 0; n-- {
			frames = append(frames, encodeRequest(next, nil, req)...)
			next++
		}
		c.write(frames)
		for ; want < next; want++ {
			if corr, _ := c.recv(req); corr != want {
				t.Fatalf("got correlation id %d, want %d", corr, want)
			}
		}
	}
}
