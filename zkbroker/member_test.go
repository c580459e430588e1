package zkbroker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/metadataversion"

	"github.com/kbroker/kbroker/zkstore"
	"github.com/kbroker/kbroker/zkstore/zktest"
)

// memberProbe runs a zkMember and records what it reports.
type memberProbe struct {
	t       *testing.T
	mu      sync.Mutex
	status  kafkazk.ControllerStatus
	changes int
	epochs  []int64
	done    chan error
	cancel  context.CancelFunc
}

func startMember(t *testing.T, c zkstore.Client, id int32) *memberProbe {
	return startMemberWith(t, c, id, nil)
}

// startMemberWith is startMember with adjust applied to the member first.
func startMemberWith(t *testing.T, c zkstore.Client, id int32, adjust func(*zkMember)) *memberProbe {
	p := &memberProbe{t: t, status: kafkazk.NoController, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	m := &zkMember{
		zk:           c,
		brokerID:     id,
		registration: testRegistration("kb"),
		nowMs:        func() int64 { return 1732000000000 },
		newClusterID: func() string { return "gL9yRMv7SXKk6n0TQ4a8Pw" },
		retryBackoff: 50 * time.Millisecond,
		log:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		onRegistered: func(clusterID string, epoch int64) {
			if clusterID != "gL9yRMv7SXKk6n0TQ4a8Pw" {
				t.Errorf("cluster id %q", clusterID)
			}
			p.mu.Lock()
			p.epochs = append(p.epochs, epoch)
			p.mu.Unlock()
		},
		onController: func(s kafkazk.ControllerStatus) {
			p.mu.Lock()
			p.status = s
			p.changes++
			p.mu.Unlock()
		},
	}
	if adjust != nil {
		adjust(m)
	}
	go func() { p.done <- m.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			t.Error("member did not stop")
		}
	})
	return p
}

// waitFor polls cond (bounded) over the probe's reported state.
func (p *memberProbe) waitFor(what string, cond func(s kafkazk.ControllerStatus, epochs []int64) bool) kafkazk.ControllerStatus {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		s, e := p.status, append([]int64(nil), p.epochs...)
		p.mu.Unlock()
		if cond(s, e) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; status %+v, epochs %v", what, s, e)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func isController(epoch int32) func(kafkazk.ControllerStatus, []int64) bool {
	return func(s kafkazk.ControllerStatus, _ []int64) bool { return s.IsController && s.Epoch == epoch }
}

func follows(id int32) func(kafkazk.ControllerStatus, []int64) bool {
	return func(s kafkazk.ControllerStatus, _ []int64) bool { return !s.IsController && s.ControllerID == id }
}

func TestMembersElectAndFailOver(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		c1 := h.Connect(t)
		m1 := startMember(t, c1, 1)
		m1.waitFor("broker 1 controller", isController(1))
		m2 := startMember(t, h.Connect(t), 2)
		m2.waitFor("broker 2 follows 1", follows(1))
		m3 := startMember(t, h.Connect(t), 3)
		m3.waitFor("broker 3 follows 1", follows(1))

		watcher := h.Connect(t)
		ids, _, err := watcher.Children(kafkazk.BrokerIDsPath)
		if err != nil || len(ids) != 3 {
			t.Fatalf("registered brokers %v %v", ids, err)
		}

		// The controller's session ends (SIGKILL + session timeout): one
		// of the others takes over with epoch 2, the third follows it.
		c1.Close()
		var winner, loser *memberProbe
		deadline := time.Now().Add(10 * time.Second)
		for winner == nil {
			for _, p := range []*memberProbe{m2, m3} {
				p.mu.Lock()
				s := p.status
				p.mu.Unlock()
				if s.IsController && s.Epoch == 2 {
					winner = p
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("no new controller")
			}
			time.Sleep(5 * time.Millisecond)
		}
		loser = m2
		winnerID := int32(3)
		if winner == m2 {
			loser, winnerID = m3, 2
		}
		loser.waitFor("loser follows the winner", follows(winnerID))
		if e, _ := readEpoch(t, watcher); e != 2 {
			t.Fatalf("/controller_epoch %d", e)
		}
		if ok, _, _ := watcher.Exists(kafkazk.BrokerIDPath(1)); ok {
			t.Fatal("dead broker still registered")
		}
	})
}

func TestMemberDuplicateBrokerIDExits(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		m1 := startMember(t, h.Connect(t), 1)
		m1.waitFor("registered", func(_ kafkazk.ControllerStatus, e []int64) bool { return len(e) == 1 })
		dup := startMember(t, h.Connect(t), 1)
		select {
		case err := <-dup.done:
			var taken *kafkazk.BrokerRegisteredError
			if !errors.As(err, &taken) || taken.ID != 1 {
				t.Fatalf("duplicate broker ended with %v", err)
			}
			dup.done <- err // for the cleanup
		case <-time.After(10 * time.Second):
			t.Fatal("duplicate broker id did not stop the member")
		}
	})
}

// A registration held by another session that goes away within the wait
// (a previous run's session expiring) is replaced; one that outlives it
// (another broker with the same id) stops the member.
func TestMemberWaitsForPreviousRegistration(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		old := h.Connect(t)
		m1 := startMember(t, old, 1)
		m1.waitFor("registered", func(_ kafkazk.ControllerStatus, e []int64) bool { return len(e) == 1 })
		m1.cancel()
		<-m1.done
		m1.done <- nil // for the cleanup

		next := startMemberWith(t, h.Connect(t), 1, func(m *zkMember) { m.takenRetries = 100 })
		time.Sleep(300 * time.Millisecond)
		next.mu.Lock()
		early := len(next.epochs)
		next.mu.Unlock()
		if early != 0 {
			t.Fatalf("registered while the old session still held the id")
		}
		select {
		case err := <-next.done:
			t.Fatalf("member gave up while waiting: %v", err)
		default:
		}
		old.Close() // the old session ends, its registration with it
		next.waitFor("registered after the old session ended", func(_ kafkazk.ControllerStatus, e []int64) bool { return len(e) == 1 })

		dup := startMemberWith(t, h.Connect(t), 1, func(m *zkMember) { m.takenRetries = 3 })
		select {
		case err := <-dup.done:
			var taken *kafkazk.BrokerRegisteredError
			if !errors.As(err, &taken) || taken.ID != 1 || taken.Owner == 0 {
				t.Fatalf("duplicate broker ended with %v", err)
			}
			dup.done <- err
		case <-time.After(10 * time.Second):
			t.Fatal("a live duplicate broker id did not stop the member after its wait")
		}
	})
}

// Session expiry can be forced only on the fake: the broker resigns,
// re-registers with a new broker epoch and runs the election again.
func TestMemberSessionExpiry(t *testing.T) {
	z := zkstore.NewMem()
	c1, c2 := z.Connect(), z.Connect()
	defer c1.Close()
	defer c2.Close()
	m1 := startMember(t, c1, 1)
	m1.waitFor("broker 1 controller", isController(1))
	m2 := startMember(t, c2, 2)
	m2.waitFor("broker 2 follows", follows(1))

	m1.waitFor("one registration", func(_ kafkazk.ControllerStatus, e []int64) bool { return len(e) == 1 })
	z.Expire(c1)
	// Broker 1 resigns and comes back with a new registration (a bounce,
	// seen by the controller as a higher czxid). Both race for the free
	// controller seat at epoch 2; exactly one wins and the other follows.
	m1.waitFor("broker 1 re-registered", func(_ kafkazk.ControllerStatus, e []int64) bool {
		return len(e) == 2 && e[1] > e[0]
	})
	var s1, s2 kafkazk.ControllerStatus
	deadline := time.Now().Add(10 * time.Second)
	for {
		m1.mu.Lock()
		s1 = m1.status
		m1.mu.Unlock()
		m2.mu.Lock()
		s2 = m2.status
		m2.mu.Unlock()
		oneWon := (s1.IsController && s1.Epoch == 2 && s2 == kafkazk.ControllerStatus{ControllerID: 1}) ||
			(s2.IsController && s2.Epoch == 2 && s1 == kafkazk.ControllerStatus{ControllerID: 2})
		if oneWon {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after expiry: broker 1 %+v, broker 2 %+v", s1, s2)
		}
		time.Sleep(5 * time.Millisecond)
	}

	// Broker 1 goes away for good. If broker 2 is controller, its own
	// session expires: it resigns, re-registers and wins again. Either way
	// broker 2 ends as controller at epoch 3.
	m1.cancel()
	c1.Close()
	if s2.IsController {
		z.Expire(c2)
	}
	m2.waitFor("broker 2 controller at epoch 3", isController(3))
}

// A connection loss that the session survives changes nothing: the
// controller keeps its role and epoch (Kafka resigns only on expiry).
func TestMemberSurvivesDisconnect(t *testing.T) {
	z := zkstore.NewMem()
	c1 := z.Connect()
	defer c1.Close()
	m1 := startMember(t, c1, 1)
	m1.waitFor("broker 1 controller", isController(1))
	m1.mu.Lock()
	before := m1.changes
	m1.mu.Unlock()
	z.Disconnect(c1)
	time.Sleep(100 * time.Millisecond)
	z.Reconnect(c1)
	time.Sleep(100 * time.Millisecond)
	m1.mu.Lock()
	s, after, regs := m1.status, m1.changes, len(m1.epochs)
	m1.mu.Unlock()
	if !s.IsController || s.Epoch != 1 || after != before || regs != 1 {
		t.Fatalf("after reconnect: %+v, %d status changes (was %d), %d registrations", s, after, before, regs)
	}
	other := z.Connect()
	defer other.Close()
	if e, _ := readEpoch(t, other); e != 1 {
		t.Fatalf("/controller_epoch %d", e)
	}
}

// testRegistration is a 3.9 broker's registration on host:9092.
func testRegistration(host string) kafkazk.BrokerZNode {
	return kafkazk.BrokerZNode{
		Version:   5,
		Endpoints: []kafkazk.Endpoint{{Listener: "PLAINTEXT", Host: host, Port: 9092, SecurityProtocol: "PLAINTEXT"}},
		JmxPort:   -1,
		Timestamp: 1732000000000,
		Features:  map[string]kafkazk.FeatureRange{"metadata.version": {Min: 1, Max: 21}},
	}
}

// readEpoch reads /controller_epoch: the epoch and the znode's version.
func readEpoch(t *testing.T, c zkstore.Client) (int32, int32) {
	t.Helper()
	d, st, err := c.Get(kafkazk.ControllerEpochPath)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kafkazk.DecodeControllerEpoch(d)
	if err != nil {
		t.Fatal(err)
	}
	return e, st.Version
}

// A member holding its candidacy back follows the controller but never
// takes /controller: when the controller goes, the other member wins, and
// the held one only stands once its hold is over.
func TestMemberHoldsCandidacy(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		var mu sync.Mutex
		holdUntil := time.Now().Add(time.Hour)
		c1 := h.Connect(t)
		m1 := startMember(t, c1, 1)
		m1.waitFor("broker 1 controller", isController(1))
		m2 := startMemberWith(t, h.Connect(t), 2, func(m *zkMember) {
			m.holdCandidacy = func() time.Duration {
				mu.Lock()
				defer mu.Unlock()
				return time.Until(holdUntil)
			}
		})
		m2.waitFor("broker 2 follows 1 while held", follows(1))
		c3 := h.Connect(t)
		m3 := startMember(t, c3, 3)
		m3.waitFor("broker 3 follows 1", follows(1))

		c1.Close()
		m3.waitFor("broker 3, not the held broker 2, takes over", isController(2))
		m2.waitFor("broker 2 follows 3", follows(3))

		// The hold over: when broker 3 goes too, broker 2 stands.
		mu.Lock()
		holdUntil = time.Now().Add(200 * time.Millisecond)
		mu.Unlock()
		time.Sleep(300 * time.Millisecond)
		c3.Close()
		m2.waitFor("broker 2 takes over once its hold is over", isController(3))
	})
}

// The registration is what a Kafka 3.9 broker at the same
// inter.broker.protocol.version writes: version 5 with the supported
// features from 2.7-IV0, version 4 without them below; and new topics have
// ids from 2.8-IV0.
func TestRegistrationFollowsInterBrokerProtocol(t *testing.T) {
	for _, tc := range []struct {
		ibp      string
		version  int
		features bool
		topicIDs bool
	}{{"2.6", 4, false, false}, {"2.7-IV0", 5, true, false}, {"2.8-IV0", 5, true, true}, {"3.9", 5, true, true}, {"", 5, true, true}} {
		var ibp metadataversion.Version
		if tc.ibp != "" {
			var err error
			if ibp, err = metadataversion.Parse(tc.ibp); err != nil {
				t.Fatal(err)
			}
		}
		n := &Node{cfg: Config{InterBrokerProtocol: ibp}}
		reg := n.registration()
		if reg.Version != tc.version || (reg.Features != nil) != tc.features {
			t.Errorf("IBP %q: version %d, features %v; want %d, %v", tc.ibp, reg.Version, reg.Features, tc.version, tc.features)
		}
		// New topics get ids from 2.8-IV0 (KIP-516), as Kafka's do.
		if got := n.newTopicID() != ([16]byte{}); got != tc.topicIDs {
			t.Errorf("IBP %q: new topics get ids %v, want %v", tc.ibp, got, tc.topicIDs)
		}
	}
}
