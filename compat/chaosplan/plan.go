// Package chaosplan draws the fault schedule of a chaos run from a seed.
//
// A schedule is a pure function of (seed, number of faults, number of
// brokers): the same seed always gives the same faults, in the same order,
// on the same targets, with the same timings, so a failing seed replays the
// run that failed. What a target means at run time ("the leader of
// partition 0", "the controller") is resolved by the driver when the fault
// starts, since that depends on what the earlier faults did.
package chaosplan

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Kind is one kind of fault.
type Kind string

const (
	// Process faults.
	KillRestart Kind = "kill"  // SIGKILL, restarted after the hold
	PauseResume Kind = "pause" // SIGSTOP, SIGCONT after the hold
	TermRestart Kind = "term"  // SIGTERM (controlled shutdown), restarted after the hold
	// ZooKeeper faults.
	ZKPause   Kind = "zk-pause"   // SIGSTOP the ZooKeeper server
	ZKRestart Kind = "zk-restart" // SIGKILL ZooKeeper, started again after the hold
	// Network faults (silent drops in the cluster's switch).
	NetIsolate   Kind = "net-isolate"    // the broker cut from everyone
	NetCutZK     Kind = "net-cut-zk"     // the broker cut from ZooKeeper only
	NetCutPeers  Kind = "net-cut-peers"  // the broker cut from the other brokers only
	NetCutClient Kind = "net-cut-client" // the clients cut from the broker
	NetLossy     Kind = "net-lossy"      // packet loss between the broker and its peers
)

// Target says which broker a fault hits.
type Target string

const (
	AnyBroker  Target = "broker"     // Broker names it
	Controller Target = "controller" // the controller when the fault starts
	Leader     Target = "leader"     // the leader of partition 0 when the fault starts
	ZooKeeper  Target = "zookeeper"
)

// Fault is one scheduled fault.
type Fault struct {
	Index  int
	Kind   Kind
	Target Target
	// Broker is the broker hit when Target is AnyBroker (1-based).
	Broker int32
	// Gap is the quiet time before the fault starts, counted from the heal
	// of the fault before it (or from the start, for the first).
	Gap time.Duration
	// Hold is how long the fault lasts before it is healed.
	Hold time.Duration
	// Overlaps: the fault starts while the one before it still holds, on
	// another broker, Gap after that one started; both are healed
	// before the next fault.
	Overlaps bool
}

// Broker-level fault kinds with their weights: process deaths most often,
// then pauses and network faults.
var brokerKinds = []struct {
	kind   Kind
	weight int
}{
	{KillRestart, 5},
	{PauseResume, 3},
	{TermRestart, 2},
	{NetIsolate, 2},
	{NetCutZK, 2},
	{NetCutPeers, 2},
	{NetCutClient, 1},
	{NetLossy, 1},
}

// Quiet bounds the quiet gap before each fault that does not overlap
// another: how densely faults follow each other, and so what share of a
// run a fault holds.
type Quiet struct{ Min, Max time.Duration }

// DefaultQuiet: one to three seconds, a fault holding about two thirds of
// the run.
var DefaultQuiet = Quiet{Min: time.Second, Max: 3 * time.Second}

// ParseQuiet reads "5s-15s" (or "" for DefaultQuiet).
func ParseQuiet(s string) (Quiet, error) {
	if s == "" {
		return DefaultQuiet, nil
	}
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return Quiet{}, fmt.Errorf("quiet gap %q: want min-max, like 5s-15s", s)
	}
	var q Quiet
	var err error
	if q.Min, err = time.ParseDuration(lo); err != nil {
		return Quiet{}, err
	}
	if q.Max, err = time.ParseDuration(hi); err != nil {
		return Quiet{}, err
	}
	if q.Min < 0 || q.Max < q.Min+time.Millisecond {
		return Quiet{}, fmt.Errorf("quiet gap %q: want 0 <= min < max", s)
	}
	return q, nil
}

func (q Quiet) String() string { return fmt.Sprintf("%v-%v", q.Min, q.Max) }

// Plan draws n faults for a cluster of brokers brokers, with the default
// quiet gaps.
func Plan(seed uint64, n, brokers int) []Fault {
	return PlanQuiet(seed, n, brokers, DefaultQuiet)
}

// PlanQuiet is Plan with quiet gaps drawn from q. The seed and q together
// name the schedule.
func PlanQuiet(seed uint64, n, brokers int, q Quiet) []Fault {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	total := 0
	for _, k := range brokerKinds {
		total += k.weight
	}
	var out []Fault
	for i := range n {
		f := Fault{Index: i + 1}
		switch x := r.IntN(100); {
		case x < 6:
			f.Kind, f.Target = ZKPause, ZooKeeper
		case x < 10:
			f.Kind, f.Target = ZKRestart, ZooKeeper
		default:
			w := r.IntN(total)
			for _, k := range brokerKinds {
				if w < k.weight {
					f.Kind = k.kind
					break
				}
				w -= k.weight
			}
			switch y := r.IntN(10); {
			case y < 2:
				f.Target = Controller
			case y < 5:
				f.Target = Leader
			default:
				f.Target, f.Broker = AnyBroker, int32(r.IntN(brokers)+1)
			}
		}
		f.Gap = q.Min + time.Duration(r.IntN(int((q.Max-q.Min)/time.Millisecond)))*time.Millisecond
		f.Hold = holdFor(r, f.Kind)
		// Some broker faults overlap the broker fault before them.
		if prev := len(out) - 1; prev >= 0 && f.Target != ZooKeeper && out[prev].Target != ZooKeeper &&
			!out[prev].Overlaps && r.IntN(100) < 15 {
			f.Overlaps = true
			f.Gap = time.Duration(500+r.IntN(1500)) * time.Millisecond
		}
		out = append(out, f)
	}
	return out
}

// holdFor draws how long a fault of kind k lasts: long enough to matter
// (a pause past replica.lag.time.max.ms or the session timeout, a
// partition past the session timeout), short enough for a run of many.
func holdFor(r *rand.Rand, k Kind) time.Duration {
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo)) * time.Millisecond }
	switch k {
	case KillRestart, TermRestart:
		return ms(500, 4000)
	case PauseResume:
		return ms(2000, 9000)
	case ZKPause:
		return ms(2000, 9000)
	case ZKRestart:
		return ms(1000, 4000)
	case NetLossy:
		return ms(3000, 8000)
	default:
		return ms(2000, 9000)
	}
}

func (f Fault) String() string {
	target := string(f.Target)
	if f.Target == AnyBroker {
		target = fmt.Sprintf("broker %d", f.Broker)
	}
	s := fmt.Sprintf("#%d %s %s after %v for %v", f.Index, f.Kind, target, f.Gap, f.Hold)
	if f.Overlaps {
		s += " (overlapping the previous fault)"
	}
	return s
}

// Describe is the schedule, one fault a line.
func Describe(faults []Fault) string {
	var b strings.Builder
	for _, f := range faults {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}
