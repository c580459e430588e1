package zkbroker

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/kbroker/kbroker/internal/brokerprobe"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// probeController watches the controller from outside: every broker that
// is not the controller probes the controller's inter-broker endpoint, and
// when the controller's process is gone (its port refuses connections; see
// internal/brokerprobe) deletes /controller, which the dead broker's
// session would otherwise hold until it expires. The election that follows
// is the ordinary one, and the new controller fences the dead broker's
// registration by the same evidence (controller/ctl_broker_probe.go). A
// controller that was in fact alive loses nothing it cannot get back: it
// sees /controller go, resigns, and the new controller epoch fences its
// writes, as after any re-election.
func (n *Node) probeController(ctx context.Context, zk zkstore.Client, interval time.Duration) {
	tracker := brokerprobe.NewTracker(brokerprobe.DefaultPolicy)
	type incarnation struct {
		id int32
		controllerRegistration
	}
	var known incarnation
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n.mu.Lock()
		st := n.status
		n.mu.Unlock()
		if st.IsController || st.ControllerID < 0 || st.ControllerID == n.cfg.BrokerID {
			continue
		}
		if known.id != st.ControllerID || known.addr == "" {
			inc, err := n.controllerIncarnation(zk, st.ControllerID)
			if err != nil {
				// No registration (its session is gone: the ordinary
				// path handles it) or no inter-broker endpoint.
				known = incarnation{}
				continue
			}
			known = incarnation{st.ControllerID, inc}
		}
		o := brokerprobe.Probe(ctx, known.addr, known.tls, brokerprobe.DefaultTimeout)
		if tracker.Observe(brokerprobe.Target{ID: known.id, Epoch: known.epoch}, o, time.Now()) != brokerprobe.Dead {
			continue
		}
		// A deposition that fails is tried again on fresh evidence.
		tracker.Forget(known.id)
		n.mu.Lock()
		n.deadController = deadController{brokerprobe.Target{ID: known.id, Epoch: known.epoch}, time.Now()}
		n.mu.Unlock()
		deposed, err := kafkazk.DeposeController(zk, known.id, known.session)
		switch {
		case err != nil:
			n.log.Warn("controller refuses connections but /controller could not be deleted", "controller", known.id, "err", err)
		case deposed:
			n.log.Warn("controller refuses connections on its inter-broker endpoint; deleted /controller so that a live broker takes over before its ZooKeeper session expires",
				"controller", known.id, "brokerEpoch", known.epoch)
		}
		known = incarnation{}
	}
}

type controllerRegistration struct {
	epoch   int64
	session int64
	addr    string
	tls     bool
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
		epoch:   st.Czxid,
		session: st.EphemeralOwner,
		addr:    net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))),
		tls:     ep.SecurityProtocol == "SSL" || ep.SecurityProtocol == "SASL_SSL",
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

// knownDead is the finding to hand to a controller starting now.
func (n *Node) knownDead(now time.Time) []brokerprobe.Target {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.deadController.at.IsZero() || now.Sub(n.deadController.at) > knownDeadMaxAge {
		return nil
	}
	return []brokerprobe.Target{n.deadController.target}
}
