// Package brokerprobe decides, from probes of its port, that a broker whose
// ZooKeeper registration still exists has died or stopped serving.
//
// ZooKeeper only tells the cluster a broker is gone when its session
// expires (zookeeper.session.timeout.ms, 18 s by default), and until then
// the partitions a dead, paused or cut-off broker led take no writes. A
// probe is much quicker:
//   - A refused TCP connection is strong evidence: the host answered, and
//     nothing listens on the broker's port. A few of them make the broker
//     dead.
//   - A probe nobody answers (the dial times out, or the broker says
//     nothing back on a connection) is weaker: a paused process, a
//     network that drops packets, or a prober that is itself cut off all
//     look the same. A second or so of it makes the broker unresponsive;
//     the caller decides whether its own view is trustworthy enough to act
//     on (controller/ctl_broker_probe.go acts only when more brokers answer
//     it than fail).
//
// Acting early is safe for the same reason acting on a session expiry is: a
// new leader comes with a higher leader epoch and a new state-znode
// version, which fence a broker that was in fact still running.
//
// Tracker is the pure rule (observations and their times in, verdicts
// out); Prober (prober.go) and Probe are the IO that makes an observation.
package brokerprobe

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// Outcome is what one probe showed.
type Outcome int

const (
	// Unknown: a failure a live broker can also cause (a reset, an
	// unreachable route). Not evidence either way.
	Unknown Outcome = iota
	// Refused: the host answered that nothing listens on the port.
	Refused
	// Reachable: the broker answered.
	Reachable
	// Unanswered: nothing came back within the timeout, neither to the
	// dial nor to a request on the accepted connection.
	Unanswered
)

func (o Outcome) String() string {
	switch o {
	case Refused:
		return "refused"
	case Reachable:
		return "reachable"
	case Unanswered:
		return "unanswered"
	}
	return "unknown"
}

// Probe connects to addr and asks the broker to say something: an
// ApiVersions request (which Kafka answers before any SASL exchange),
// after the TLS handshake on an SSL listener. Any reply, even an error or
// a failed handshake, shows a process that serves; the probe's own
// credentials never matter. It is a Prober's probe on a connection of its
// own, closed after it.
//
// The connection gets DialTimeout, the exchange timeout: a lost SYN or
// SYN-ACK is sent again only after a second, so on a lossy link a probe
// whose dial was bounded by a second failed about one time in three, two
// in a row often enough to fence a healthy broker.
func Probe(ctx context.Context, addr string, useTLS bool, timeout time.Duration) Outcome {
	return NewProber(timeout).probeOnce(ctx, Endpoint{Addr: addr, TLS: useTLS})
}

// maxAnswer bounds the answer a probe reads; ApiVersions is a few hundred
// bytes.
const maxAnswer = 64 << 10

// answered classifies the end of a probe's exchange: a timeout is no
// answer; anything else, an error included, came from the broker.
func answered(err error) Outcome {
	var ne net.Error
	switch {
	case err == nil:
		return Reachable
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return Unanswered
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		// Closed on us: a broker shutting down, or one that does not
		// take the probe. It is not silent, and not proof of life.
		return Unknown
	}
	return Reachable
}

// Policy is how much evidence makes a verdict.
type Policy struct {
	// Refusals in a row, with no answer between them.
	Refusals int
	// MinSpan between the first and the last of them, so that a broker
	// that is restarting its listener is not judged on one instant.
	MinSpan time.Duration
	// Silences: failed probes in a row (refused or unanswered, at least
	// one unanswered) over at least SilentSpan make a broker unresponsive.
	Silences   int
	SilentSpan time.Duration
}

// DefaultPolicy: three refusals over at least 600 ms, or four failed probes
// in a row over at least 750 ms. Probes start every 250 ms whether or not
// the earlier ones have finished (MaxInFlight), each waiting DefaultTimeout
// for its answer on a kept connection (Prober), so failures come in every
// 250 ms once the first has timed out: a verdict about a second after a
// death, and about one and a half after a broker stops answering, paused
// or cut off by the network alike. Four failures in a row, any answer
// between them starting over, keep a lossy link (where a probe fails when
// a packet is lost twice) from making a verdict.
var DefaultPolicy = Policy{Refusals: 3, MinSpan: 600 * time.Millisecond, Silences: 4, SilentSpan: 750 * time.Millisecond}

// DefaultInterval is how often the callers probe each broker.
const DefaultInterval = 250 * time.Millisecond

// MaxInFlight bounds the probes of one broker that may be under way at
// once: a probe of a broker that stopped answering takes DefaultTimeout,
// one that has to connect first up to DialTimeout more, and waiting for
// each before starting the next would space the failures that far apart,
// delaying a verdict by seconds.
const MaxInFlight = 8

// DefaultTimeout bounds a probe's exchange: its request and the answer
// on a connection, or a TLS handshake. A live broker answers ApiVersions
// in well under a millisecond; half a second leaves room for a loaded
// machine and for TCP to send a lost packet once more (200 ms minimum
// retransmission timeout), so that on a lossy link a probe fails only
// when a packet is lost twice.
const DefaultTimeout = 500 * time.Millisecond

// DialTimeout bounds a probe's TCP connect, long enough for one lost SYN
// or SYN-ACK to be sent again (after a second).
const DialTimeout = 2 * time.Second

// Target names one incarnation of a broker: its id and its broker epoch
// (the czxid of its registration). Evidence about one incarnation says
// nothing about the next.
type Target struct {
	ID    int32
	Epoch int64
}

// Verdict is what a Tracker concluded from an observation.
type Verdict int

const (
	// NoVerdict: not enough evidence, or the verdict was already given.
	NoVerdict Verdict = iota
	// Dead: the broker's port refuses connections.
	Dead
	// Unresponsive: the broker has not answered for SilentSpan.
	Unresponsive
)

type streak struct {
	refusals, failures int
	firstRefusal       time.Time
	firstFailure       time.Time
	silent             bool // some failure was Unanswered
	judged             bool // a verdict was given for this streak
}

// Tracker keeps, per target, the failed probes since its last answer. The
// zero value is not ready; use NewTracker. It does no IO and reads no
// clock.
type Tracker struct {
	policy  Policy
	streaks map[Target]*streak
}

// NewTracker returns a Tracker applying p.
func NewTracker(p Policy) *Tracker {
	return &Tracker{policy: p, streaks: map[Target]*streak{}}
}

// Observe records an outcome seen at `at` and returns the verdict it
// completes. A verdict is given once per streak, so the caller acts once;
// the streak itself lasts until the target answers (Failing).
func (t *Tracker) Observe(target Target, o Outcome, at time.Time) Verdict {
	switch o {
	case Reachable:
		delete(t.streaks, target)
		return NoVerdict
	case Unknown:
		// Neither proof of life nor of death: the streak stands.
		return NoVerdict
	}
	s, ok := t.streaks[target]
	if !ok {
		s = &streak{firstFailure: at}
		t.streaks[target] = s
	}
	s.failures++
	if o == Refused {
		if s.refusals == 0 {
			s.firstRefusal = at
		}
		s.refusals++
	} else {
		s.silent = true
		// A refusal streak is a run of refusals in a row.
		s.refusals = 0
	}
	if s.judged {
		return NoVerdict
	}
	p := t.policy
	switch {
	case o == Refused && s.refusals >= p.Refusals && at.Sub(s.firstRefusal) >= p.MinSpan:
		s.judged = true
		return Dead
	case s.silent && p.Silences > 0 && s.failures >= p.Silences && at.Sub(s.firstFailure) >= p.SilentSpan:
		s.judged = true
		return Unresponsive
	}
	return NoVerdict
}

// Failing reports whether target's last probes failed with no answer
// since.
func (t *Tracker) Failing(target Target) bool {
	_, ok := t.streaks[target]
	return ok
}

// Rearm takes back a verdict the caller did not act on: the target's next
// failed probe can give it again.
func (t *Tracker) Rearm(target Target) {
	if s, ok := t.streaks[target]; ok {
		s.judged = false
	}
}

// Forget drops what is known of every incarnation of the broker id.
func (t *Tracker) Forget(id int32) {
	for k := range t.streaks {
		if k.ID == id {
			delete(t.streaks, k)
		}
	}
}
