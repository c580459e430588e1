package brokerprobe

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"io"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeBroker answers every request frame with a frame carrying the
// request's correlation id, as a Kafka broker does. Paused, it stops
// reading its connections (the kernel still accepts new ones and buffers
// what is sent), and on Resume answers everything it was sent meanwhile.
type fakeBroker struct {
	ln      net.Listener
	accepts atomic.Int32
	open    atomic.Int32 // connections not closed yet
	conns   chan net.Conn

	mu       sync.Mutex
	paused   bool
	resumed  *sync.Cond
	oldMute  bool // connections accepted before mark stay silent
	mark     int32
	requests atomic.Int32
}

func newFakeBroker(t *testing.T) *fakeBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveFake(t, ln)
}

// newFakeTLSBroker is a fakeBroker behind TLS, with a throwaway
// self-signed certificate.
func newFakeTLSBroker(t *testing.T) *fakeBroker {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "broker"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return serveFake(t, tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}))
}

func serveFake(t *testing.T, ln net.Listener) *fakeBroker {
	b := &fakeBroker{ln: ln, conns: make(chan net.Conn, 64)}
	b.resumed = sync.NewCond(&b.mu)
	t.Cleanup(func() { ln.Close(); b.Resume() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := b.accepts.Add(1)
			b.conns <- c
			go b.serve(c, n)
		}
	}()
	return b
}

func (b *fakeBroker) Addr() string { return b.ln.Addr().String() }

// Kill closes the listener and every connection, as the kernel does for a
// process that dies.
func (b *fakeBroker) Kill() {
	b.ln.Close()
	b.CloseConnections()
}

// CloseConnections closes the connections accepted so far, as a broker
// that restarts on the same port does.
func (b *fakeBroker) CloseConnections() {
	for {
		select {
		case c := <-b.conns:
			c.Close()
		default:
			return
		}
	}
}

func (b *fakeBroker) Pause() {
	b.mu.Lock()
	b.paused = true
	b.mu.Unlock()
}

func (b *fakeBroker) Resume() {
	b.mu.Lock()
	b.paused = false
	b.oldMute = false
	b.resumed.Broadcast()
	b.mu.Unlock()
}

// MuteOldConnections leaves the connections accepted so far silent while
// new ones are answered: a cut that healed for new connections before the
// old ones' retransmissions get through.
func (b *fakeBroker) MuteOldConnections() {
	b.mu.Lock()
	b.oldMute = true
	b.mark = b.accepts.Load()
	b.mu.Unlock()
}

func (b *fakeBroker) serve(c net.Conn, n int32) {
	b.open.Add(1)
	defer b.open.Add(-1)
	defer c.Close()
	for {
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		req := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c, req); err != nil || len(req) < 8 {
			return
		}
		b.mu.Lock()
		for b.paused || (b.oldMute && n <= b.mark) {
			b.resumed.Wait()
		}
		b.mu.Unlock()
		b.requests.Add(1)
		// Header: api key, api version, correlation id.
		answer := binary.BigEndian.AppendUint32(nil, 4+3)
		answer = append(answer, req[4:8]...)
		answer = append(answer, 0, 0, 0)
		if _, err := c.Write(answer); err != nil {
			return
		}
	}
}

const testExchange = 200 * time.Millisecond

// proberOf is a Prober with the test's exchange timeout, closed when the
// test ends, and b's endpoint under the security protocol.
func proberOf(t *testing.T, b *fakeBroker, protocol string) (*Prober, Endpoint) {
	p := NewProber(testExchange)
	t.Cleanup(p.Close)
	return p, EndpointOf(b.Addr(), protocol)
}

// probeN probes ep n times and wants every outcome to be want.
func probeN(t *testing.T, p *Prober, ep Endpoint, n int, want Outcome, when string) {
	t.Helper()
	for i := range n {
		if o := p.Probe(context.Background(), ep); o != want {
			t.Fatalf("%s, probe %d: %v, want %v", when, i, o, want)
		}
	}
}

func TestProberKeepsConnections(t *testing.T) {
	b := newFakeBroker(t)
	p, ep := proberOf(t, b, "PLAINTEXT")
	probeN(t, p, ep, 20, Reachable, "live")
	if n := b.accepts.Load(); n != Slots {
		t.Fatalf("20 probes opened %d connections, want %d", n, Slots)
	}
}

// On a TLS listener the kept connections carry ApiVersions after their
// handshake, and a paused broker fails a probe after the exchange timeout.
func TestProberKeepsTLSConnections(t *testing.T) {
	b := newFakeTLSBroker(t)
	p, ep := proberOf(t, b, "SSL")
	probeN(t, p, ep, 3*Slots, Reachable, "live")
	if n, r := b.accepts.Load(), b.requests.Load(); n != Slots || r != 3*Slots {
		t.Fatalf("%d connections answered %d requests, want %d and %d", n, r, Slots, 3*Slots)
	}
	b.Pause()
	probeN(t, p, ep, 1, Unanswered, "paused")
	b.Resume()
	probeN(t, p, ep, 2*Slots, Reachable, "resumed")
}

// A broker that stops answering fails a probe after the exchange timeout
// on the kept connection, with no connect to wait for; once it answers
// again, the late answers to the failed probes are read past and the next
// probe is answered on the same connections.
func TestProberPausedBroker(t *testing.T) {
	b := newFakeBroker(t)
	p, ep := proberOf(t, b, "PLAINTEXT")
	probeN(t, p, ep, Slots, Reachable, "before the pause")
	b.Pause()
	start := time.Now()
	probeN(t, p, ep, Slots, Unanswered, "paused")
	if took := time.Since(start); took > Slots*(testExchange+100*time.Millisecond) {
		t.Fatalf("%d probes of a paused broker took %v with a %v exchange timeout", Slots, took, testExchange)
	}
	b.Resume()
	probeN(t, p, ep, 2*Slots, Reachable, "resumed")
	if n := b.accepts.Load(); n != Slots {
		t.Fatalf("%d connections, want the %d kept ones throughout", n, Slots)
	}
	if n := b.requests.Load(); n != 4*Slots {
		t.Fatalf("broker answered %d requests, want %d", n, 4*Slots)
	}
}

// A connection whose requests have gone unanswered past staleAfter is
// replaced, so that a broker reachable again on new connections is found
// reachable without waiting for TCP's backed-off retransmissions.
func TestProberReplacesStaleConnections(t *testing.T) {
	b := newFakeBroker(t)
	p, ep := proberOf(t, b, "PLAINTEXT")
	for range Slots {
		p.Probe(context.Background(), ep)
	}
	b.MuteOldConnections()
	deadline := time.Now().Add(staleAfter + 3*time.Second)
	reachable := 0
	for reachable < Slots && time.Now().Before(deadline) {
		switch o := p.Probe(context.Background(), ep); o {
		case Reachable:
			reachable++
		case Unanswered:
			reachable = 0
		default:
			t.Fatalf("muted old connection: %v", o)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if reachable < Slots {
		t.Fatal("probes still unanswered well after the kept connections went stale")
	}
	if n := b.accepts.Load(); n != 2*Slots {
		t.Fatalf("%d connections, want each of the %d replaced once", n, Slots)
	}
}

// A broker that dies closes the kept connections, and the very probe that
// finds one closed connects again and is refused: a dead broker's
// refusals come every interval, not once a slot's turn comes round again.
func TestProberDeadBroker(t *testing.T) {
	b := newFakeBroker(t)
	p, ep := proberOf(t, b, "PLAINTEXT")
	probeN(t, p, ep, Slots, Reachable, "live")
	b.Kill()
	probeN(t, p, ep, 2*Slots, Refused, "after the broker died")
}

// A broker that restarts closes the kept connections, and the probe that
// finds one closed is answered on a new one.
func TestProberRestartedBroker(t *testing.T) {
	b := newFakeBroker(t)
	p, ep := proberOf(t, b, "PLAINTEXT")
	probeN(t, p, ep, Slots, Reachable, "live")
	b.CloseConnections()
	probeN(t, p, ep, 2*Slots, Reachable, "after the broker closed its connections")
	if n := b.accepts.Load(); n != 2*Slots {
		t.Fatalf("%d connections, want each of the %d replaced once", n, Slots)
	}
}

// The connections to an address no longer probed are closed.
func TestProberClosesIdleConnections(t *testing.T) {
	gone, kept := newFakeBroker(t), newFakeBroker(t)
	p, goneEP := proberOf(t, gone, "PLAINTEXT")
	probeN(t, p, goneEP, Slots, Reachable, "live")
	p.mu.Lock()
	p.peers[goneEP.Addr].lastUsed = time.Now().Add(-idleAfter)
	p.lastSweep = time.Time{}
	p.mu.Unlock()
	probeN(t, p, EndpointOf(kept.Addr(), "PLAINTEXT"), Slots, Reachable, "another broker")
	for deadline := time.Now().Add(5 * time.Second); gone.open.Load() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections to the address no longer probed are still open", gone.open.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := kept.open.Load(); n != Slots {
		t.Fatalf("%d connections to the broker still probed, want %d", n, Slots)
	}
}

// A SASL listener takes one ApiVersions before its SASL exchange: each
// probe gets a connection of its own.
func TestProberSASLConnectsEachTime(t *testing.T) {
	b := newFakeBroker(t)
	p, ep := proberOf(t, b, "SASL_PLAINTEXT")
	if !ep.SASL || ep.TLS {
		t.Fatalf("endpoint %+v", ep)
	}
	probeN(t, p, ep, 3, Reachable, "live")
	if n := b.accepts.Load(); n != 3 {
		t.Fatalf("3 probes opened %d connections", n)
	}
}

// Closing the Prober ends a probe waiting on a silent broker and every
// probe after it.
func TestProberClose(t *testing.T) {
	b := newFakeBroker(t)
	p := NewProber(10 * time.Second)
	ep := EndpointOf(b.Addr(), "PLAINTEXT")
	probeN(t, p, ep, 1, Reachable, "live")
	b.Pause()
	done := make(chan Outcome, Slots)
	for range Slots {
		go func() { done <- p.Probe(context.Background(), ep) }()
	}
	time.Sleep(100 * time.Millisecond)
	p.Close()
	for range Slots {
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Fatal("a probe under way did not end when the prober closed")
		}
	}
	probeN(t, p, ep, 1, Unknown, "after Close")
}
