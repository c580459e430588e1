package zkbroker

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kbroker/kbroker/internal/brokerprobe"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// probeController watches the controller from outside: every broker that
// is not the controller probes the controller's inter-broker endpoint
// (internal/brokerprobe), and deletes /controller, which the controller's
// session would otherwise hold until it expires, when
//   - the controller's port refuses connections (its process is gone), or
//   - the controller has stopped answering (paused, hung, cut off from the
//     brokers) and a majority of the other registered brokers agree: each
//     records its finding under kafkazk.ControllerSuspicionsPath, since one
//     broker's finding alone may only mean that it is the one cut off.
//
// The election that follows is the ordinary one, and the new controller
// fences the deposed broker's registration (controller/ctl_broker_probe.go,
// and Config.KnownDead from here). A controller that was in fact alive
// loses nothing it cannot get back: it sees /controller go, resigns, and
// the new controller epoch fences its writes, as after any re-election.
func (n *Node) probeController(ctx context.Context, zk zkstore.Client, interval time.Duration) {
	tracker := brokerprobe.NewTracker(brokerprobe.DefaultPolicy)
	prober := brokerprobe.NewProber(brokerprobe.DefaultTimeout)
	defer prober.Close()
	type incarnation struct {
		id int32
		controllerRegistration
	}
	var (
		known     incarnation
		lastVotes int
		// vote is this broker's suspicion record, if any. It outlives the
		// controller it names by knownDeadMaxAge (expires set): the
		// controller elected next reads it to fence the deposed broker
		// at once, whichever broker wins.
		vote struct {
			held    bool
			id      int32
			epoch   int64
			expires time.Time
		}
	)
	withdraw := func() {
		if vote.held {
			if err := kafkazk.WithdrawSuspicion(zk, vote.id, vote.epoch, n.cfg.BrokerID); err != nil {
				n.log.Debug("withdrawing controller suspicion", "err", err)
			}
		}
		vote.held, lastVotes = false, 0
	}
	// letExpire keeps the record for a while after its controller is gone.
	letExpire := func() {
		if vote.held && vote.expires.IsZero() {
			vote.expires = time.Now().Add(knownDeadMaxAge)
		}
		lastVotes = 0
	}
	defer withdraw()
	// Probes overlap (brokerprobe.MaxInFlight): each reports on results,
	// and the loop judges them in the order they come back.
	type result struct {
		target brokerprobe.Target
		o      brokerprobe.Outcome
		at     time.Time
	}
	results := make(chan result, brokerprobe.MaxInFlight)
	inFlight := 0
	var probes sync.WaitGroup
	// Runs before prober.Close: the probes under way end on ctx.
	defer probes.Wait()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		var r result
		select {
		case <-ctx.Done():
			return
		case r = <-results:
			inFlight--
		case <-t.C:
			if vote.held && !vote.expires.IsZero() && time.Now().After(vote.expires) {
				withdraw()
			}
			n.mu.Lock()
			st := n.status
			n.mu.Unlock()
			if st.IsController || st.ControllerID < 0 || st.ControllerID == n.cfg.BrokerID {
				letExpire()
				known = incarnation{}
				continue
			}
			if known.id != st.ControllerID || known.endpoint.Addr == "" {
				letExpire()
				inc, err := n.controllerIncarnation(zk, st.ControllerID)
				if err != nil {
					// No registration (its session is gone: the ordinary
					// path handles it) or no inter-broker endpoint.
					known = incarnation{}
					continue
				}
				known = incarnation{st.ControllerID, inc}
			}
			if inFlight >= brokerprobe.MaxInFlight {
				continue
			}
			inFlight++
			probes.Add(1)
			go func(target brokerprobe.Target, ep brokerprobe.Endpoint) {
				defer probes.Done()
				o := prober.Probe(ctx, ep)
				select {
				case results <- result{target, o, time.Now()}:
				case <-ctx.Done():
				}
			}(brokerprobe.Target{ID: known.id, Epoch: known.epoch}, known.endpoint)
			continue
		}
		target := brokerprobe.Target{ID: known.id, Epoch: known.epoch}
		if r.target != target {
			// A probe of a controller that has since changed.
			continue
		}
		o := r.o
		verdict := tracker.Observe(target, o, r.at)
		if o == brokerprobe.Reachable && vote.held && vote.id == known.id && vote.epoch == known.epoch {
			withdraw()
		}
		switch verdict {
		case brokerprobe.Dead:
		case brokerprobe.Unresponsive:
			// Asked again on every failed probe until a majority agrees.
			tracker.Rearm(target)
			if vote.held && (vote.id != known.id || vote.epoch != known.epoch) {
				withdraw()
			}
			votes, need, err := n.suspectController(zk, known.id, known.epoch)
			if err != nil {
				n.log.Warn("controller does not answer, and recording that failed", "controller", known.id, "err", err)
				continue
			}
			vote.held, vote.id, vote.epoch, vote.expires = true, known.id, known.epoch, time.Time{}
			if votes < need {
				if votes != lastVotes {
					n.log.Info("controller does not answer this broker; waiting for a majority of the other brokers to agree",
						"controller", known.id, "agreeing", votes, "needed", need)
				}
				lastVotes = votes
				continue
			}
		default:
			continue
		}
		n.mu.Lock()
		n.deadController = deadController{target, time.Now()}
		n.mu.Unlock()
		deposed, err := kafkazk.DeposeController(zk, known.id, known.session)
		switch {
		case err != nil:
			n.log.Warn("controller found failed but /controller could not be deleted", "controller", known.id, "err", err)
		case deposed && verdict == brokerprobe.Dead:
			n.log.Warn("controller refuses connections on its inter-broker endpoint; deleted /controller so that a live broker takes over before its ZooKeeper session expires",
				"controller", known.id, "brokerEpoch", known.epoch)
		case deposed:
			n.log.Warn("controller answers none of a majority of the brokers; deleted /controller so that another broker takes over before its ZooKeeper session expires",
				"controller", known.id, "brokerEpoch", known.epoch)
		}
		// A deposition that fails is tried again on fresh evidence.
		tracker.Forget(known.id)
		letExpire()
		known = incarnation{}
	}
}

// suspectController records this broker's finding against the controller
// incarnation and returns how many brokers share it and how many must: a
// majority of the registered brokers other than the controller.
func (n *Node) suspectController(zk zkstore.Client, id int32, epoch int64) (votes, need int, err error) {
	votes, err = kafkazk.SuspectController(zk, id, epoch, n.cfg.BrokerID)
	if err != nil {
		return 0, 0, err
	}
	ids, _, err := zk.Children(kafkazk.BrokerIDsPath)
	if err != nil {
		return 0, 0, err
	}
	others := 0
	for _, s := range ids {
		if s != strconv.Itoa(int(id)) {
			others++
		}
	}
	return votes, others/2 + 1, nil
}

type controllerRegistration struct {
	epoch    int64
	session  int64
	endpoint brokerprobe.Endpoint
}

// controllerIncarnation reads broker id's registration: its epoch, the
// session that owns it and its inter-broker address.
func (n *Node) controllerIncarnation(zk zkstore.Client, id int32) (controllerRegistration, error) {
	data, st, err := zk.Get(kafkazk.BrokerIDPath(id))
	if err != nil {
		return controllerRegistration{}, err
	}
	reg, err := kafkazk.DecodeBrokerZNode(data)
	if err != nil {
		return controllerRegistration{}, err
	}
	ep, ok := reg.ListenerEndpoint(n.cfg.InterBrokerListener)
	if !ok {
		return controllerRegistration{}, errors.New("no inter-broker endpoint")
	}
	return controllerRegistration{
		epoch:    st.Czxid,
		session:  st.EphemeralOwner,
		endpoint: brokerprobe.EndpointOf(net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), ep.SecurityProtocol),
	}, nil
}

// deadController is the last controller this broker found dead, and when.
type deadController struct {
	target brokerprobe.Target
	at     time.Time
}

// knownDeadMaxAge bounds how old a finding may be and still be handed to
// this broker's own controller: the election it caused is over within
// moments, and a stale finding could only name a broker that has since
// registered again (which the epoch check catches anyway).
const knownDeadMaxAge = 10 * time.Second

// knownDead is the finding to hand to a controller starting now: the
// controller this broker deposed, and any broker a majority of the others
// found unresponsive as controller (the broker that deposed it need not be
// the one that wins the election).
func (n *Node) knownDead(zk zkstore.Client, now time.Time) []brokerprobe.Target {
	var out []brokerprobe.Target
	n.mu.Lock()
	if !n.deadController.at.IsZero() && now.Sub(n.deadController.at) <= knownDeadMaxAge {
		out = append(out, n.deadController.target)
	}
	n.mu.Unlock()
	suspected, err := kafkazk.SuspectedControllers(zk)
	if err != nil || len(suspected) == 0 {
		return out
	}
	ids, _, err := zk.Children(kafkazk.BrokerIDsPath)
	if err != nil {
		return out
	}
	for inc, votes := range suspected {
		if votes < (len(ids)-1)/2+1 {
			continue
		}
		t := brokerprobe.Target{ID: int32(inc[0]), Epoch: inc[1]}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
