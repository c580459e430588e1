// Package brokerprobe decides, from connection attempts, that a broker whose
// ZooKeeper registration still exists has died.
//
// ZooKeeper only tells the cluster a broker is gone when its session
// expires (zookeeper.session.timeout.ms, 18 s by default), and until then
// the partitions a SIGKILLed broker led take no writes. A refused TCP
// connection is much quicker and much stronger evidence than a timeout: the
// host answered, and nothing listens on the broker's port. A broker that is
// only slow (paused, overloaded, cut off by the network) never refuses, so it
// is never judged here; its session decides, as in Kafka. Acting early is
// safe for the same reason acting on a session expiry is: a new leader comes
// with a higher leader epoch and a new state-znode version, which fence a
// broker that was in fact still running.
//
// Tracker is the pure rule (observations and their times in, verdicts
// out); Probe is the IO that makes an observation.
package brokerprobe

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// Outcome is what one connection attempt showed.
type Outcome int

const (
	// Unknown: a timeout or any other failure, which a slow or cut-off
	// broker also shows. Not evidence either way.
	Unknown Outcome = iota
	// Refused: the host answered that nothing listens on the port.
	Refused
	// Reachable: the connection was accepted.
	Reachable
)

// Probe opens and closes one TCP connection to addr.
func Probe(ctx context.Context, addr string, timeout time.Duration) Outcome {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		conn.Close()
		return Reachable
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return Refused
	}
	return Unknown
}

// Policy is how much evidence makes a verdict.
type Policy struct {
	// Refusals in a row, with no accepted connection between them.
	Refusals int
	// MinSpan between the first and the last of them, so that a broker
	// that is restarting its listener is not judged on one instant.
	MinSpan time.Duration
}

// DefaultPolicy: three refusals over at least 600 ms. Probed every 250 ms
// that is a verdict within about a second of the death.
var DefaultPolicy = Policy{Refusals: 3, MinSpan: 600 * time.Millisecond}

// DefaultInterval is how often the callers probe each broker.
const DefaultInterval = 250 * time.Millisecond

// DefaultTimeout bounds one probe.
const DefaultTimeout = time.Second

// Target names one incarnation of a broker: its id and its broker epoch
// (the czxid of its registration). Evidence about one incarnation says
// nothing about the next.
type Target struct {
	ID    int32
	Epoch int64
}

type streak struct {
	count int
	first time.Time
}

// Tracker counts refusals per target. The zero value is not ready; use
// NewTracker. It does no IO and reads no clock.
type Tracker struct {
	policy  Policy
	streaks map[Target]streak
}

// NewTracker returns a Tracker applying p.
func NewTracker(p Policy) *Tracker {
	return &Tracker{policy: p, streaks: map[Target]streak{}}
}

// Observe records an outcome seen at `at` and reports whether the target
// is now judged dead. A verdict is given once: the streak is cleared with
// it, so the caller acts once per death.
func (t *Tracker) Observe(target Target, o Outcome, at time.Time) (dead bool) {
	switch o {
	case Reachable:
		delete(t.streaks, target)
		return false
	case Unknown:
		// Neither proof of life nor of death: the streak stands, and a
		// slow broker whose probes time out is not judged.
		return false
	}
	s, ok := t.streaks[target]
	if !ok {
		s.first = at
	}
	s.count++
	if s.count >= t.policy.Refusals && at.Sub(s.first) >= t.policy.MinSpan {
		delete(t.streaks, target)
		return true
	}
	t.streaks[target] = s
	return false
}

// Forget drops what is known of every incarnation of the broker id.
func (t *Tracker) Forget(id int32) {
	for k := range t.streaks {
		if k.ID == id {
			delete(t.streaks, k)
		}
	}
}
