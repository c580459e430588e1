package brokerprobe

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
)

// Endpoint is a broker's listener as a probe sees it.
type Endpoint struct {
	Addr string
	// TLS: an SSL or SASL_SSL listener.
	TLS bool
	// SASL: a SASL_PLAINTEXT or SASL_SSL listener. Kafka takes one
	// ApiVersions request on such a connection before the SASL exchange
	// and closes it on a second, so these are probed on a connection per
	// probe (Prober.probeOnce).
	SASL bool
}

// EndpointOf is the Endpoint of a listener with the given security
// protocol (a name from listener.security.protocol.map).
func EndpointOf(addr, securityProtocol string) Endpoint {
	return Endpoint{Addr: addr, TLS: config.UsesTLS(securityProtocol), SASL: config.UsesSASL(securityProtocol)}
}

// Slots is how many connections a Prober keeps to each broker, used in
// turn. One connection would put every probe behind a lost packet: TCP
// delivers in order, so a packet lost three times (1.4 s of
// retransmissions at the 200 ms minimum timeout) would fail every probe
// sent in that time, four in a row on a lossy link that is in fact up.
// Probes spread over Slots connections fail independently, and each
// connection carries a probe only every Slots intervals.
const Slots = 4

// staleAfter is how long a kept connection may leave a request unanswered
// before a probe gives up on it and connects afresh: after a network cut
// heals, TCP sends what it holds again only on its backed-off schedule
// (seconds apart by then), so an old connection would report the broker
// silent for seconds after a new one could reach it.
const staleAfter = 2 * time.Second

// Prober probes brokers over connections it keeps open, so that a probe
// costs a request and its answer, not a TCP handshake as well. That
// matters for how fast a broker the network cuts off is found out: a new
// connection to it fails only when its dial times out, which must allow
// for a lost SYN (sent again after a second; DialTimeout), while a request
// on a kept connection fails after the exchange timeout (DefaultTimeout). A paused broker's kernel
// completes new connections, so for it the two are alike.
//
// A Prober is safe for concurrent use; Close ends it.
type Prober struct {
	exchange time.Duration

	mu        sync.Mutex
	closed    bool
	peers     map[string]*peer
	lastSweep time.Time
}

type peer struct {
	next     int
	slots    [Slots]slot
	lastUsed time.Time
}

// idleAfter is how long an address may go unprobed before its connections
// are closed: the broker left the cluster or registered another address.
const idleAfter = time.Minute

// slot is one kept connection. A probe holds it (busy) from its request to
// its answer or timeout; while it does, the slot's fields are the probe's.
type slot struct {
	busy bool
	conn net.Conn
	corr int32
	// pending are the requests on conn not answered yet, oldest first.
	// Answers come in request order, so a late answer to an earlier probe
	// is read past on the way to the current probe's.
	pending []pendingRequest
}

type pendingRequest struct {
	corr int32
	sent time.Time
}

// NewProber returns a Prober whose probes wait exchange for an answer on
// a kept connection.
func NewProber(exchange time.Duration) *Prober {
	return &Prober{exchange: exchange, peers: map[string]*peer{}}
}

// Close closes the kept connections; probes under way end, and later ones
// report Unknown.
func (p *Prober) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, pe := range p.peers {
		for i := range pe.slots {
			if c := pe.slots[i].conn; c != nil {
				c.Close()
			}
		}
	}
}

// Probe asks the broker at ep to answer: an ApiVersions request on the
// next of its kept connections, connecting first if that one is gone or
// stale. A SASL listener, or a connection still held by an earlier probe,
// gets a connection of its own (probeOnce).
func (p *Prober) Probe(ctx context.Context, ep Endpoint) Outcome {
	if ep.SASL {
		return p.probeOnce(ctx, ep)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return Unknown
	}
	now := time.Now()
	p.sweep(now)
	pe := p.peers[ep.Addr]
	if pe == nil {
		pe = &peer{}
		p.peers[ep.Addr] = pe
	}
	pe.lastUsed = now
	s := &pe.slots[pe.next]
	pe.next = (pe.next + 1) % Slots
	if s.busy {
		p.mu.Unlock()
		return p.probeOnce(ctx, ep)
	}
	s.busy = true
	p.mu.Unlock()

	o := p.exchangeOn(ctx, s, ep)

	p.mu.Lock()
	s.busy = false
	if p.closed && s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	p.mu.Unlock()
	return o
}

// probeOnce probes ep on a connection of its own, closed after it.
func (p *Prober) probeOnce(ctx context.Context, ep Endpoint) Outcome {
	var s slot
	o := p.exchange1(ctx, &s, ep)
	p.drop(&s)
	return o
}

// sweep closes the connections of addresses not probed for idleAfter, at
// most once per idleAfter. The caller holds p.mu.
func (p *Prober) sweep(now time.Time) {
	if now.Sub(p.lastSweep) < idleAfter {
		return
	}
	p.lastSweep = now
	for addr, pe := range p.peers {
		if now.Sub(pe.lastUsed) < idleAfter {
			continue
		}
		busy := false
		for i := range pe.slots {
			busy = busy || pe.slots[i].busy
		}
		if busy {
			continue
		}
		for i := range pe.slots {
			if c := pe.slots[i].conn; c != nil {
				c.Close()
			}
		}
		delete(p.peers, addr)
	}
}

// exchangeOn runs one probe on slot s, which the caller holds. A kept
// connection found gone (the broker closed it: a process that died or
// restarted) is replaced at once, within the same probe, so that a dead
// broker's refused connection shows now and not at this slot's next turn,
// Slots probes later.
func (p *Prober) exchangeOn(ctx context.Context, s *slot, ep Endpoint) Outcome {
	if s.conn != nil && len(s.pending) > 0 && time.Since(s.pending[0].sent) > staleAfter {
		p.drop(s)
	}
	kept := s.conn != nil
	if o := p.exchange1(ctx, s, ep); o != Unknown || !kept || s.conn != nil {
		return o
	}
	return p.exchange1(ctx, s, ep)
}

// exchange1 sends one ApiVersions on s's connection, connecting first if
// it has none, and reads up to its answer. A connection that fails other
// than by a timeout is dropped.
func (p *Prober) exchange1(ctx context.Context, s *slot, ep Endpoint) Outcome {
	if s.conn == nil {
		conn, o := connect(ctx, ep.Addr, ep.TLS, p.exchange)
		if conn == nil {
			return o
		}
		p.mu.Lock()
		closed := p.closed
		if !closed {
			s.conn = conn
		}
		p.mu.Unlock()
		if closed {
			conn.Close()
			return Unknown
		}
	}
	conn := s.conn
	ctx, cancel := context.WithTimeout(ctx, p.exchange)
	defer cancel()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	// A read ends at the deadline, or when the caller's context ends
	// first (the prober's owner stopping).
	stop := context.AfterFunc(ctx, func() {
		if ctx.Err() == context.Canceled {
			_ = conn.SetDeadline(time.Now())
		}
	})
	defer stop()

	s.corr++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kbroker-probe")).
		AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), s.corr)
	if _, err := conn.Write(frame); err != nil {
		// A partial write leaves the stream unusable, and a failed
		// one says the connection is gone.
		p.drop(s)
		return onKept(err)
	}
	s.pending = append(s.pending, pendingRequest{s.corr, time.Now()})
	for {
		corr, err := readAnswer(conn)
		if err != nil {
			var midFrame *midFrameError
			if errors.As(err, &midFrame) || !isTimeout(err) {
				p.drop(s)
			}
			return onKept(err)
		}
		for len(s.pending) > 0 && s.pending[0].corr <= corr {
			s.pending = s.pending[1:]
		}
		if corr == s.corr {
			return Reachable
		}
		// The late answer to an earlier probe: proof of life only back
		// then, so read on for this probe's.
	}
}

// onKept classifies a failed exchange on a connection: a timeout is no
// answer; bytes that are not an answer we follow came from the broker; any
// other error is the connection gone (a broker that died closes it), which
// is no evidence either way: connecting again tells (exchangeOn).
func onKept(err error) Outcome {
	var bad *badAnswerError
	switch {
	case isTimeout(err):
		return Unanswered
	case errors.As(err, &bad):
		return Reachable
	}
	return Unknown
}

// drop closes s's connection and forgets its requests.
func (p *Prober) drop(s *slot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	s.pending = nil
}

// badAnswerError is a frame no broker's answer to ApiVersions would be.
type badAnswerError struct{ size int64 }

func (e *badAnswerError) Error() string {
	return "brokerprobe: answer of unexpected size " + strconv.FormatInt(e.size, 10)
}

// midFrameError is a read that ended inside an answer: the stream can no
// longer be followed.
type midFrameError struct{ err error }

func (e *midFrameError) Error() string { return e.err.Error() }
func (e *midFrameError) Unwrap() error { return e.err }

// readAnswer reads one response frame and returns its correlation id.
func readAnswer(conn net.Conn) (int32, error) {
	var size [4]byte
	if n, err := io.ReadFull(conn, size[:]); err != nil {
		if n > 0 {
			return 0, &midFrameError{err}
		}
		return 0, err
	}
	n := int64(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > maxAnswer {
		return 0, &midFrameError{&badAnswerError{n}}
	}
	var corr [4]byte
	if _, err := io.ReadFull(conn, corr[:]); err != nil {
		return 0, &midFrameError{err}
	}
	if _, err := io.CopyN(io.Discard, conn, n-4); err != nil {
		return 0, &midFrameError{err}
	}
	return int32(binary.BigEndian.Uint32(corr[:])), nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
}

// connect dials addr, bounded by DialTimeout, and on a TLS listener
// completes the handshake, bounded by exchange. A nil connection comes
// with the outcome the attempt showed.
func connect(ctx context.Context, addr string, useTLS bool, exchange time.Duration) (net.Conn, Outcome) {
	dctx, dcancel := context.WithTimeout(ctx, DialTimeout)
	defer dcancel()
	d := net.Dialer{}
	conn, err := d.DialContext(dctx, "tcp", addr)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return nil, Refused
	case err != nil && dctx.Err() != nil:
		return nil, Unanswered
	case err != nil:
		return nil, Unknown
	}
	if !useTLS {
		return conn, Reachable
	}
	hctx, hcancel := context.WithTimeout(ctx, exchange)
	defer hcancel()
	// Verification would need the cluster's trust store, and it is beside
	// the point: a server that sends its certificate serves.
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // liveness only
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		return nil, answered(err)
	}
	return tc, Reachable
}
