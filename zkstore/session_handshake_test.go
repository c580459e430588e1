package zkstore

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// A server that accepts connections and never answers the handshake (a
// ZooKeeper still starting) must not hold the client for go-zookeeper's
// ten read timeouts: with a 3 s session the client gives up on such a
// connection after a second and dials again.
func TestDialRetriesAHandshakeTheServerNeverAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			// Read the ConnectRequest and say nothing.
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	start := time.Now()
	_, err = Dial(ctx, ln.Addr().String(), 3*time.Second, slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("Dial got a session from a server that never answers")
	}
	// go-zookeeper waits up to a second between attempts on one server.
	if n := accepted.Load(); n < 3 {
		t.Fatalf("%d connections in %v; want at least 3 (a handshake given up after %v)",
			n, time.Since(start).Round(time.Millisecond), handshakeTimeout(3*time.Second))
	}
}

func TestConnectResponseTapCapsDeadlinesUntilTheAnswer(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	tap := &connectResponseTap{Conn: client, handshake: time.Second}
	far := time.Now().Add(time.Hour)
	if got := tap.capDeadline(far); got.After(time.Now().Add(2 * time.Second)) {
		t.Fatalf("deadline during the handshake: %v from now", time.Until(got))
	}
	if got := tap.capDeadline(time.Time{}); !got.IsZero() {
		t.Fatal("clearing a deadline was turned into one")
	}
	tap.done = true
	if got := tap.capDeadline(far); !got.Equal(far) {
		t.Fatalf("deadline after the handshake changed to %v", got)
	}
}
