package protocol

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A response with Throttle leaves at once, and the connection's next
// request is not read (so not handled) before the throttle ends, also
// when it already arrived; a Wait's final response mutes the same way
// for the requests read after it (those read while it waited are not
// held back: docs/quotas.md).
func TestThrottleMutesConnection(t *testing.T) {
	const throttle = 400 * time.Millisecond
	for _, viaWait := range []bool{false, true} {
		h := newFakeHandler()
		var mu sync.Mutex
		handledAt := map[int32]time.Time{}
		h.onHandle = func(ctx context.Context, req *Request) Response {
			mu.Lock()
			handledAt[req.CorrelationID] = time.Now()
			mu.Unlock()
			resp := Response{Msg: h.apiVersions(req)}
			if req.CorrelationID != 1 {
				return resp
			}
			resp.Throttle = throttle
			if viaWait {
				return Response{Wait: func(context.Context) Response { return resp }}
			}
			return resp
		}
		ts := startServer(t, ServerConfig{}, h)
		c := dial(t, ts.addr)
		req := apiVersionsAt(3)
		start := time.Now()
		if viaWait {
			c.write(encodeRequest(1, nil, req))
		} else {
			c.write(append(encodeRequest(1, nil, req), encodeRequest(2, nil, req)...))
		}
		if corr, _ := c.recv(req); corr != 1 {
			t.Fatalf("first answer has correlation id %d", corr)
		}
		if d := time.Since(start); d >= throttle {
			t.Errorf("viaWait=%v: throttled response took %v, want it at once", viaWait, d)
		}
		if viaWait {
			c.write(encodeRequest(2, nil, req))
		}
		if corr, _ := c.recv(req); corr != 2 {
			t.Fatalf("second answer has correlation id %d", corr)
		}
		mu.Lock()
		gap := handledAt[2].Sub(handledAt[1])
		mu.Unlock()
		if gap < throttle-20*time.Millisecond {
			t.Errorf("viaWait=%v: next request handled %v after the throttled one, want >= %v", viaWait, gap, throttle)
		}
	}
}
