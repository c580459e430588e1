package controller

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// flakyChannel fails the first failures sends, then records.
type flakyChannel struct {
	mu       sync.Mutex
	failures int
	attempts int
	got      []int32 // controller epochs of delivered requests, in order
}

func (f *flakyChannel) Send(_ context.Context, _ int32, req kmsg.Request) (kmsg.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts++
	if f.failures > 0 {
		f.failures--
		return nil, errors.New("connection refused")
	}
	f.got = append(f.got, req.(*kmsg.UpdateMetadataRequest).ControllerEpoch)
	return req.ResponseKind(), nil
}

// Per broker, requests are delivered in order, one at a time, a failed
// send retried until it succeeds; removing the broker stops the retries.
func TestChannelManagerOrderAndRetry(t *testing.T) {
	ch := &flakyChannel{failures: 3}
	var mu sync.Mutex
	responses := 0
	m := &channelManager{
		ch: ch, retryBackoff: time.Millisecond, sendTimeout: time.Second,
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		onResponse: func(int32, kmsg.Request, kmsg.Response) {
			mu.Lock()
			responses++
			mu.Unlock()
		},
	}
	m.addBroker(liveBroker{ID: 1}, "PLAINTEXT")
	for i := int32(1); i <= 5; i++ {
		r := kmsg.NewPtrUpdateMetadataRequest()
		r.ControllerEpoch = i
		m.send(1, r)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := responses
		mu.Unlock()
		if n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d responses", n)
		}
		time.Sleep(time.Millisecond)
	}
	ch.mu.Lock()
	got, attempts := ch.got, ch.attempts
	ch.mu.Unlock()
	for i, e := range got {
		if e != int32(i+1) {
			t.Fatalf("delivery order %v", got)
		}
	}
	if attempts != 8 {
		t.Errorf("attempts %d, want 8", attempts)
	}
	// A broker that never answers: removal ends the retry loop.
	ch.mu.Lock()
	ch.failures = 1 << 30
	ch.mu.Unlock()
	m.send(1, kmsg.NewPtrUpdateMetadataRequest())
	done := make(chan struct{})
	go func() { m.removeBroker(1); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("removeBroker did not stop the sender")
	}
	m.send(1, kmsg.NewPtrUpdateMetadataRequest()) // dropped, no panic
	m.close()
}
