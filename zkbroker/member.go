package zkbroker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// zkMember is a broker's life in ZooKeeper: top-level paths and cluster id
// once, then for every ZooKeeper session its registration and the
// controller election, re-run whenever /controller goes away. Kafka's
// KafkaServer.startup + KafkaController's Startup/Reelect/session-expiry
// events, without the controller's work itself.
//
// It reports through callbacks, called on run's goroutine only, so the
// receiver sees a serial history.
type zkMember struct {
	zk           zkstore.Client
	brokerID     int32
	registration kafkazk.BrokerZNode
	// nowMs stamps the timestamps Kafka writes into /brokers/ids/<id> and
	// /controller. It feeds no decision.
	nowMs        func() int64
	newClusterID func() string
	retryBackoff time.Duration
	// takenRetries bounds the wait for a registration held by another
	// session, in retryBackoffs: enough for a previous run's session to
	// expire. A registration that outlives it belongs to another broker
	// with the same id, and this one must not start.
	takenRetries int
	log          *slog.Logger

	// onRegistered: this broker is registered in a (new) session with this
	// broker epoch.
	onRegistered func(clusterID string, brokerEpoch int64)
	// onController: the known controller changed, or this broker became or
	// stopped being controller.
	onController func(kafkazk.ControllerStatus)
	// holdCandidacy, when set and positive, keeps this broker out of
	// elections for that long: it follows /controller without creating
	// it.
	holdCandidacy func() time.Duration
}

// run returns nil when ctx ends, *BrokerRegisteredError if the broker id
// stays taken by another session for longer than a session can outlive
// its broker (the broker must exit), or an error when the client is
// closed.
func (m *zkMember) run(ctx context.Context) error {
	log := m.log
	if log == nil {
		log = slog.Default()
	}
	var (
		clusterID  string
		registered int64 = -1 // session id of our registration
		status           = kafkazk.NoController
		watch      <-chan zkstore.Event
		retry      <-chan time.Time
		// A registration held by another session: watched until it goes.
		takenWatch <-chan zkstore.Event
		takenWaits int
		// holding: retry is the end of a candidacy hold, not a backoff.
		holding bool
	)
	setStatus := func(s kafkazk.ControllerStatus) {
		if s == status {
			return
		}
		if status.IsController && !s.IsController {
			log.Info("resigned as controller", "broker", m.brokerID, "epoch", status.Epoch)
		}
		if s.IsController && !status.IsController {
			log.Info("elected controller", "broker", m.brokerID, "epoch", s.Epoch)
		}
		status = s
		if m.onController != nil {
			m.onController(s)
		}
	}
	fail := func(what string, err error) {
		log.Warn("zookeeper "+what+" failed, will retry", "broker", m.brokerID, "err", err)
		retry = time.After(m.retryBackoff)
	}
	for {
		s := m.zk.Session()
		switch {
		case s.State == zkstore.SessionClosed:
			setStatus(kafkazk.NoController)
			return fmt.Errorf("zookeeper client closed: %w", zkstore.ErrConnectionClosed)
		case s.State == zkstore.SessionExpired:
			// The session and its ephemeral nodes are gone: a controller
			// must stop acting (Kafka resigns on expiry). Registration and
			// election run again once the client has a new session.
			setStatus(kafkazk.NoController)
			watch = nil
		case s.State != zkstore.SessionConnected:
			// Disconnected but the session may survive: like Kafka, keep
			// the role and the watches, which the client re-arms when it
			// reconnects in time.
		case retry != nil:
			// Wait for the backoff.
		case s.ID != registered:
			setStatus(kafkazk.NoController)
			watch = nil
			if clusterID == "" {
				var err error
				if err = kafkazk.CreateTopLevelPaths(m.zk); err == nil {
					clusterID, err = kafkazk.EnsureClusterID(m.zk, m.newClusterID)
				}
				if err != nil {
					fail("start-up", err)
					break
				}
			}
			reg := m.registration
			reg.Timestamp = m.nowMs()
			epoch, err := kafkazk.RegisterBroker(m.zk, m.brokerID, reg)
			var taken *kafkazk.BrokerRegisteredError
			if errors.As(err, &taken) {
				if takenWaits >= m.takenRetries {
					return err
				}
				if takenWaits == 0 {
					// Kafka exits here; an operator's service manager would
					// then restart it until the old session is gone.
					log.Warn("broker id registered by another ZooKeeper session, probably this broker's previous run; waiting for that session to expire",
						"broker", m.brokerID, "owner", fmt.Sprintf("0x%x", taken.Owner),
						"maxWait", time.Duration(m.takenRetries)*m.retryBackoff)
				}
				takenWaits++
				retry = time.After(m.retryBackoff)
				if ok, _, w, err := m.zk.ExistsW(kafkazk.BrokerIDPath(m.brokerID)); err == nil && ok {
					takenWatch = w
				}
				break
			}
			if err != nil {
				fail("registration", err)
				break
			}
			registered, takenWaits, takenWatch = s.ID, 0, nil
			log.Info("registered broker", "broker", m.brokerID, "brokerEpoch", epoch, "session", s.ID)
			if m.onRegistered != nil {
				m.onRegistered(clusterID, epoch)
			}
		}
		if s.State == zkstore.SessionConnected && s.ID == registered && watch == nil && retry == nil {
			if hold := m.candidacyHold(); hold > 0 {
				st, w, err := m.followController()
				switch {
				case err != nil:
					fail("reading the controller", err)
				case st.ControllerID < 0:
					// No controller yet: follow the one another broker
					// elects (the watch fires on creation), or stand once
					// the hold is over.
					setStatus(st)
					watch, retry, holding = w, time.After(hold), true
				default:
					setStatus(st)
					watch = w
				}
			} else {
				st, w, err := m.electAndWatch()
				if err != nil {
					fail("controller election", err)
				} else {
					setStatus(st)
					watch = w
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-m.zk.SessionChanged():
		case <-watch:
			watch = nil
			if holding {
				// Look again now rather than at the end of the hold.
				retry, holding = nil, false
			}
		case <-retry:
			retry, holding = nil, false
		case <-takenWatch:
			// The other session's registration changed or went: try now.
			takenWatch, retry = nil, nil
		}
	}
}

func (m *zkMember) candidacyHold() time.Duration {
	if m.holdCandidacy == nil {
		return 0
	}
	return m.holdCandidacy()
}

// followController reads and watches /controller without standing for
// election; no watch when there is no controller.
func (m *zkMember) followController() (kafkazk.ControllerStatus, <-chan zkstore.Event, error) {
	ok, _, w, err := m.zk.ExistsW(kafkazk.ControllerPath)
	if err != nil {
		return kafkazk.NoController, nil, err
	}
	if !ok {
		// The watch fires when a controller is elected.
		return kafkazk.NoController, w, nil
	}
	id, ours, err := kafkazk.ReadController(m.zk)
	if err != nil {
		return kafkazk.NoController, nil, err
	}
	if id < 0 || ours {
		// Gone since (the watch has fired), or ours from before the
		// hold: elect normally after the hold.
		return kafkazk.NoController, w, nil
	}
	return kafkazk.ControllerStatus{ControllerID: id}, w, nil
}

// electAndWatch elects, then watches /controller. If the node vanished
// between the two, it elects again, so the returned watch always covers the
// returned status.
func (m *zkMember) electAndWatch() (kafkazk.ControllerStatus, <-chan zkstore.Event, error) {
	for attempt := 0; attempt < 5; attempt++ {
		st, err := kafkazk.ElectController(m.zk, m.brokerID, m.nowMs())
		if err != nil {
			return kafkazk.NoController, nil, err
		}
		ok, _, w, err := m.zk.ExistsW(kafkazk.ControllerPath)
		if err != nil {
			return kafkazk.NoController, nil, err
		}
		if !ok {
			continue
		}
		id, ours, err := kafkazk.ReadController(m.zk)
		if err != nil {
			return kafkazk.NoController, nil, err
		}
		if id == st.ControllerID && (ours == st.IsController) {
			return st, w, nil
		}
		// Changed between election and watch: the watch has fired or will;
		// elect again for a consistent answer.
	}
	return kafkazk.NoController, nil, errors.New("controller keeps changing during election")
}
