package controller

import (
	"context"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/kbroker/kbroker/internal/brokerprobe"
	"github.com/kbroker/kbroker/internal/clock"
)

// The controller probes every registered broker's inter-broker endpoint
// (internal/brokerprobe says why acting on probes is safe) and handles a
// broker as failed, without waiting for its ZooKeeper session to expire,
// when
//   - its port refuses connections (the process is gone), or
//   - it has not answered for a couple of seconds (paused, hung, or cut off
//     from this controller), and more brokers answer this controller than
//     fail it, counting itself: a controller that is itself cut off sees
//     every other broker fail, and then judges none.
//
// Such a broker is "fenced": left out of the live brokers while its
// registration, unchanged, still exists. It returns when its registration
// goes or changes (a restart: the broker-change path), or when it answers
// again with the same registration (it was alive after all): then it is
// started up as a broker that came back, and catches up into the ISRs as
// any returning follower does.

// probeState is the controller's side of the probes; only the event loop
// touches it.
type probeState struct {
	tracker *brokerprobe.Tracker
	// inFlight counts the probes of each broker that have not reported
	// yet; they overlap, up to brokerprobe.MaxInFlight.
	inFlight map[int32]int
	// fenced are registered brokers judged dead, by the registration
	// judged.
	fenced map[int32]liveBroker
}

func newProbeState() probeState {
	return probeState{
		tracker:  brokerprobe.NewTracker(brokerprobe.DefaultPolicy),
		inFlight: map[int32]int{},
		fenced:   map[int32]liveBroker{},
	}
}

// CutOff reports whether, by its latest probes, this controller reaches
// fewer brokers than fail it: it is then the likelier one to be cut off,
// and should not stand for election again at once when it loses its
// tenure (zkbroker holds its candidacy back). Safe from any goroutine.
func (c *Controller) CutOff() bool { return c.cutOff.Load() }

// FencedBrokers are the registered brokers this controller handles as
// dead. Safe to call from any goroutine.
func (c *Controller) FencedBrokers() []int32 {
	if ids := c.fencedView.Load(); ids != nil {
		return *ids
	}
	return nil
}

// publishFenced refreshes what FencedBrokers returns; the event loop calls
// it after every change of probes.fenced.
func (c *Controller) publishFenced() {
	ids := make([]int32, 0, len(c.probes.fenced))
	for id := range c.probes.fenced {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	c.fencedView.Store(&ids)
}

// runProbes enqueues a probe round every interval until ctx ends. A round
// is not queued while the previous one waits in the queue.
func (c *Controller) runProbes(ctx context.Context, interval time.Duration) {
	prober := brokerprobe.NewProber(brokerprobe.DefaultTimeout)
	defer prober.Close()
	clock.Every(ctx, interval, func() {
		if c.probeQueued.CompareAndSwap(false, true) {
			c.enqueue(ctlEvent{"BrokerProbe", func() error { return c.probeBrokers(ctx, prober) }})
		}
	})
}

// probeBrokers starts one probe per registered broker other than this
// one, fenced brokers included, unless MaxInFlight of its probes are still
// under way.
func (c *Controller) probeBrokers(ctx context.Context, prober *brokerprobe.Prober) error {
	c.probeQueued.Store(false)
	targets := make([]liveBroker, 0, len(c.ctx.brokers)+len(c.probes.fenced))
	for _, b := range c.ctx.brokers {
		targets = append(targets, b)
	}
	for _, b := range c.probes.fenced {
		targets = append(targets, b)
	}
	for _, b := range targets {
		if b.ID == c.cfg.BrokerID || c.probes.inFlight[b.ID] >= brokerprobe.MaxInFlight {
			continue
		}
		ep, ok := listenerEndpoint(b.Reg, c.cfg.InterBrokerListener)
		if !ok {
			continue
		}
		addr := net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
		pe := brokerprobe.EndpointOf(addr, ep.SecurityProtocol)
		c.probes.inFlight[b.ID]++
		target := brokerprobe.Target{ID: b.ID, Epoch: b.Epoch}
		go func() {
			o := prober.Probe(ctx, pe)
			at := time.Now()
			c.enqueue(ctlEvent{"BrokerProbeResult", func() error { return c.handleProbe(target, o, at) }})
		}()
	}
	return nil
}

// handleProbe applies one probe's outcome, taken at `at`, to the broker
// incarnation it was aimed at.
func (c *Controller) handleProbe(target brokerprobe.Target, o brokerprobe.Outcome, at time.Time) error {
	if c.probes.inFlight[target.ID]--; c.probes.inFlight[target.ID] <= 0 {
		delete(c.probes.inFlight, target.ID)
	}
	verdict := c.probes.tracker.Observe(target, o, at)
	answering, failing := c.probes.views(c.ctx.brokers, c.cfg.BrokerID)
	c.cutOff.Store(failing > 0 && answering+1 <= failing)
	if fb, ok := c.probes.fenced[target.ID]; ok {
		if fb.Epoch != target.Epoch || o != brokerprobe.Reachable {
			return nil
		}
		delete(c.probes.fenced, target.ID)
		c.publishFenced()
		c.log.Info("fenced broker answers again with the same registration; handling it as started",
			"broker", target.ID, "brokerEpoch", target.Epoch)
		c.ctx.brokers[target.ID] = fb
		c.chans.addBroker(fb, c.cfg.InterBrokerListener)
		if err := c.onBrokerStartup([]int32{target.ID}); err != nil {
			return err
		}
		if err := c.resumeReassignments(); err != nil {
			return err
		}
		return c.resumeDeletions()
	}
	b, ok := c.ctx.brokers[target.ID]
	if !ok || b.Epoch != target.Epoch {
		// A probe of an incarnation that has since gone or been
		// replaced: its evidence is stale.
		return nil
	}
	switch verdict {
	case brokerprobe.Dead:
		c.log.Warn("broker refuses connections on its inter-broker endpoint; handling it as failed before its ZooKeeper session expires",
			"broker", target.ID, "brokerEpoch", target.Epoch, "refusals", brokerprobe.DefaultPolicy.Refusals)
	case brokerprobe.Unresponsive:
		if c.cutOff.Load() {
			c.log.Warn("broker does not answer, but neither do most others: this controller may be the one cut off, and fences nobody",
				"broker", target.ID, "answering", answering, "failing", failing)
			c.probes.tracker.Rearm(target)
			return nil
		}
		c.log.Warn("broker has not answered on its inter-broker endpoint; handling it as failed before its ZooKeeper session expires",
			"broker", target.ID, "brokerEpoch", target.Epoch, "silentFor", brokerprobe.DefaultPolicy.SilentSpan)
	default:
		return nil
	}
	c.probes.fenced[target.ID] = b
	c.publishFenced()
	delete(c.ctx.brokers, target.ID)
	delete(c.ctx.shuttingDown, target.ID)
	c.chans.removeBroker(target.ID)
	if err := c.onBrokerFailure([]int32{target.ID}); err != nil {
		return err
	}
	return c.resumeDeletions()
}

// views counts the other brokers (registered or fenced, all but self)
// whose latest probes answered and those that failed or are fenced.
func (ps *probeState) views(live map[int32]liveBroker, self int32) (answering, failing int) {
	for id, b := range live {
		if id == self {
			continue
		}
		if ps.tracker.Failing(brokerprobe.Target{ID: id, Epoch: b.Epoch}) {
			failing++
		} else {
			answering++
		}
	}
	return answering, failing + len(ps.fenced)
}

// unfenceByRegistration drops the fence of brokers whose registration is
// gone or was replaced, and removes from current the ones still fenced, so
// that the broker-change decision treats them as the failures they were
// judged to be.
func (ps *probeState) unfenceByRegistration(current map[int32]liveBroker) {
	for id, fb := range ps.fenced {
		cur, ok := current[id]
		switch {
		case !ok || cur.Epoch != fb.Epoch:
			delete(ps.fenced, id)
			ps.tracker.Forget(id)
		default:
			delete(current, id)
		}
	}
}

// fenceKnownDead fences, before failover decides anything, the registered
// brokers Config.KnownDead names by their current registration; the
// failover then handles them as the dead brokers they are.
func (c *Controller) fenceKnownDead() {
	for _, d := range c.cfg.KnownDead {
		b, ok := c.ctx.brokers[d.ID]
		if !ok || b.Epoch != d.Epoch || d.ID == c.cfg.BrokerID {
			continue
		}
		c.log.Warn("broker found dead before this controller's election; handling it as failed",
			"broker", d.ID, "brokerEpoch", d.Epoch)
		c.probes.fenced[d.ID] = b
		delete(c.ctx.brokers, d.ID)
	}
	c.publishFenced()
}
