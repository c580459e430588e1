package brokerprobe

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type step struct {
	o    Outcome
	at   time.Duration
	want Verdict
}

func run(t *testing.T, tr *Tracker, b Target, steps []step) {
	t.Helper()
	t0 := time.Unix(1000, 0)
	for i, s := range steps {
		if got := tr.Observe(b, s.o, t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d (%v at %v): verdict %v, want %v", i, s.o, s.at, got, s.want)
		}
	}
}

func TestTrackerNeedsCountAndSpan(t *testing.T) {
	tr := NewTracker(Policy{Refusals: 3, MinSpan: 600 * time.Millisecond})
	run(t, tr, Target{ID: 2, Epoch: 10}, []step{
		{Refused, 0, NoVerdict},
		{Refused, 250 * time.Millisecond, NoVerdict},
		// Three refusals, but only 500 ms apart: not yet.
		{Refused, 500 * time.Millisecond, NoVerdict},
		{Unknown, 600 * time.Millisecond, NoVerdict},
		{Refused, 750 * time.Millisecond, Dead},
		// The verdict is given once.
		{Refused, 1000 * time.Millisecond, NoVerdict},
	})
}

func TestTrackerReachableResets(t *testing.T) {
	tr := NewTracker(Policy{Refusals: 2, MinSpan: 0})
	b := Target{ID: 1, Epoch: 5}
	run(t, tr, b, []step{
		{Refused, 0, NoVerdict},
		{Reachable, time.Millisecond, NoVerdict},
		{Refused, 2 * time.Millisecond, NoVerdict},
		{Refused, 3 * time.Millisecond, Dead},
	})
	if !tr.Failing(b) {
		t.Fatal("a judged broker is not failing")
	}
	// After an answer, a new streak can be judged again.
	run(t, tr, b, []step{
		{Reachable, 4 * time.Millisecond, NoVerdict},
		{Refused, 5 * time.Millisecond, NoVerdict},
		{Refused, 6 * time.Millisecond, Dead},
	})
}

func TestTrackerSilence(t *testing.T) {
	p := Policy{Refusals: 3, MinSpan: 600 * time.Millisecond, Silences: 2, SilentSpan: time.Second}
	// A paused broker: probes time out.
	run(t, NewTracker(p), Target{ID: 1, Epoch: 1}, []step{
		{Unanswered, 0, NoVerdict},
		{Unanswered, 900 * time.Millisecond, NoVerdict},
		{Unanswered, 1100 * time.Millisecond, Unresponsive},
		{Unanswered, 2200 * time.Millisecond, NoVerdict},
	})
	// A verdict taken back is given again on the next failure.
	tr := NewTracker(p)
	b := Target{ID: 4, Epoch: 1}
	run(t, tr, b, []step{
		{Unanswered, 0, NoVerdict},
		{Unanswered, time.Second, Unresponsive},
	})
	tr.Rearm(b)
	run(t, tr, b, []step{{Unanswered, 2 * time.Second, Unresponsive}})
	// Refusals alone never make a broker unresponsive, and a silence
	// breaks a refusal streak.
	run(t, NewTracker(p), Target{ID: 2, Epoch: 1}, []step{
		{Refused, 0, NoVerdict},
		{Refused, 1000 * time.Millisecond, NoVerdict},
		{Unanswered, 1200 * time.Millisecond, Unresponsive},
	})
	run(t, NewTracker(Policy{Refusals: 2, MinSpan: 0}), Target{ID: 3, Epoch: 1}, []step{
		{Refused, 0, NoVerdict},
		{Unanswered, time.Millisecond, NoVerdict},
		{Refused, 2 * time.Millisecond, NoVerdict},
		{Refused, 3 * time.Millisecond, Dead},
	})
}

func TestTrackerSeparatesIncarnations(t *testing.T) {
	tr := NewTracker(Policy{Refusals: 2, MinSpan: 0})
	t0 := time.Unix(0, 0)
	tr.Observe(Target{ID: 1, Epoch: 5}, Refused, t0)
	if tr.Observe(Target{ID: 1, Epoch: 6}, Refused, t0) != NoVerdict {
		t.Fatal("a refusal of the old incarnation counted against the new one")
	}
	tr.Forget(1)
	if tr.Observe(Target{ID: 1, Epoch: 6}, Refused, t0) != NoVerdict {
		t.Fatal("Forget kept a streak")
	}
}

// serveFrames answers every request frame on ln with a 4-byte frame, or
// (silent) reads and never answers.
func serveFrames(t *testing.T, ln net.Listener, silent bool) {
	t.Helper()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				if _, err := c.Read(buf); err != nil || silent {
					for err == nil { // until the prober gives up
						_, err = c.Read(buf)
					}
					return
				}
				_, _ = c.Write([]byte{0, 0, 0, 0})
			}()
		}
	}()
}

func TestProbe(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveFrames(t, ln, false)
	addr := ln.Addr().String()
	if got := Probe(ctx, addr, false, time.Second); got != Reachable {
		t.Fatalf("answering broker: %v", got)
	}
	ln.Close()
	if got := Probe(ctx, addr, false, time.Second); got != Refused {
		t.Fatalf("closed port: %v", got)
	}

	// Accepted by the kernel, never answered: a paused process.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	serveFrames(t, mute, true)
	start := time.Now()
	if got := Probe(ctx, mute.Addr().String(), false, 300*time.Millisecond); got != Unanswered {
		t.Fatalf("silent broker: %v", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("probe took %v with a 300ms timeout", took)
	}
	// The TLS handshake does not finish either.
	if got := Probe(ctx, mute.Addr().String(), true, 300*time.Millisecond); got != Unanswered {
		t.Fatalf("silent TLS broker: %v", got)
	}
}

// The probe's frame is a request a Kafka broker answers: ApiVersions.
func TestProbeFrameIsApiVersions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int16, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 512)
		n, _ := c.Read(buf)
		if n >= 6 {
			got <- int16(buf[4])<<8 | int16(buf[5])
		}
		_, _ = c.Write([]byte{0, 0, 0, 0})
	}()
	if o := Probe(context.Background(), ln.Addr().String(), false, time.Second); o != Reachable {
		t.Fatalf("probe: %v", o)
	}
	if key := <-got; key != kmsg.NewPtrApiVersionsRequest().Key() {
		t.Fatalf("probe sent api key %d", key)
	}
}

// A TLS listener that answers the handshake, whatever its certificate,
// is reachable.
func TestProbeTLSAnswered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		// No certificate configured: the server fails the handshake
		// with an alert, which is an answer.
		_ = tls.Server(c, &tls.Config{}).Handshake()
		c.Close()
	}()
	if o := Probe(context.Background(), ln.Addr().String(), true, time.Second); o != Reachable {
		t.Fatalf("TLS probe: %v", o)
	}
}
