package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/internal/brokerprobe"
	"github.com/kbroker/kbroker/kafkazk"
)

// refuse feeds the controller the refusals that make a verdict on broker
// id's current registration.
func (h *ctlHarness) refuse(id int32, t0 time.Time) {
	h.t.Helper()
	target := brokerprobe.Target{ID: id, Epoch: h.c.ctx.brokers[id].Epoch}
	for i := range brokerprobe.DefaultPolicy.Refusals {
		at := t0.Add(time.Duration(i) * brokerprobe.DefaultPolicy.MinSpan)
		if err := h.c.handleProbe(target, brokerprobe.Refused, at); err != nil {
			h.t.Fatal(err)
		}
	}
	h.run()
}

// A registered broker that refuses connections is handled as failed at
// once: its partitions get new leaders and it leaves the ISRs, although its
// registration is still there. Later broker changes that leave that
// registration as it was do not bring it back; its replacement by a new
// registration (a restart) does.
func TestRefusingBrokerHandledAsFailed(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	h.ch.Take()
	t0 := time.Unix(1_700_000_000, 0)

	// Two refusals are not enough.
	target := brokerprobe.Target{ID: 1, Epoch: h.c.ctx.brokers[1].Epoch}
	for i := range 2 {
		if err := h.c.handleProbe(target, brokerprobe.Refused, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := h.state("orders", 0); s.Leader != 1 {
		t.Fatalf("leader moved after two refusals: %+v", s)
	}
	h.c.probes.tracker.Forget(1)

	h.refuse(1, t0)
	s, _ := h.state("orders", 0)
	if s.Leader != 2 || s.LeaderEpoch != 1 || !slices.Equal(s.ISR, []int32{2, 3}) {
		t.Fatalf("after broker 1 refused connections: %+v", s)
	}
	sent := h.ch.Take()
	if got := brokersOf(controllertest.LeaderAndIsrs(sent)); !slices.Equal(got, []int32{2, 3}) {
		t.Errorf("LeaderAndIsr went to %v", got)
	}
	if h.c.ctx.isLive(1) {
		t.Error("broker 1 still live")
	}

	// A broker change elsewhere leaves broker 1's registration as it was.
	h.startBroker(4)
	h.run()
	if h.c.ctx.isLive(1) || !h.c.ctx.isLive(4) {
		t.Fatalf("live brokers after broker 4 started: %v", h.c.ctx.liveBrokerIDs())
	}

	// The restart: the old registration goes, a new one comes.
	h.killBroker(1)
	h.run()
	if _, fenced := h.c.probes.fenced[1]; fenced {
		t.Error("broker 1 still fenced after its registration went")
	}
	h.ch.Take()
	h.startBroker(1)
	h.run()
	if !h.c.ctx.isLive(1) {
		t.Fatal("restarted broker 1 not live")
	}
	if v, ok := controllertest.LeaderAndIsrs(h.ch.Take())[1][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !ok || v.Leader != 2 {
		t.Errorf("restarted broker 1 got LeaderAndIsr %+v (sent %v)", v, ok)
	}
}

// A fenced broker that accepts a connection again under the same
// registration was alive: it is started up again (LeaderAndIsr and
// metadata), and rejoins the ISR the usual way, through its leader.
func TestFencedBrokerReachableAgain(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	t0 := time.Unix(1_700_000_000, 0)
	epoch := h.c.ctx.brokers[1].Epoch
	h.refuse(1, t0)
	h.ch.Take()

	// Evidence about an older incarnation is ignored.
	if err := h.c.handleProbe(brokerprobe.Target{ID: 1, Epoch: epoch - 1}, brokerprobe.Reachable, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	h.run()
	if h.c.ctx.isLive(1) {
		t.Fatal("a stale probe brought broker 1 back")
	}
	if err := h.c.handleProbe(brokerprobe.Target{ID: 1, Epoch: epoch}, brokerprobe.Reachable, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	h.run()
	if !h.c.ctx.isLive(1) {
		t.Fatal("reachable broker 1 not live again")
	}
	sent := h.ch.Take()
	if v, ok := controllertest.LeaderAndIsrs(sent)[1][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !ok || v.Leader != 2 {
		t.Errorf("broker 1 got LeaderAndIsr %+v (sent %v)", v, ok)
	}
	if _, fenced := h.c.probes.fenced[1]; fenced {
		t.Error("broker 1 still fenced")
	}
}

// Timeouts are no evidence: a broker whose probes only time out keeps its
// leaderships until its session expires.
func TestSlowBrokerNotFenced(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	t0 := time.Unix(1_700_000_000, 0)
	target := brokerprobe.Target{ID: 1, Epoch: h.c.ctx.brokers[1].Epoch}
	for i := range 20 {
		if err := h.c.handleProbe(target, brokerprobe.Unknown, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != 1 || !h.c.ctx.isLive(1) {
		t.Fatalf("a broker that only timed out was fenced: %+v", s)
	}
}

// A broker this broker found dead before its election (the controller it
// deposed) is handled as failed by the failover itself; a finding about an
// older registration of the broker is ignored.
func TestKnownDeadFencedAtFailover(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(1)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	epoch := h.c.ctx.brokers[1].Epoch
	// Broker 1's controller tenure ends, but its registration stays.
	h.c.stop()
	if err := kafkazk.ResignController(h.brokers[1], h.c.epochZkVersion); err != nil {
		t.Fatal(err)
	}

	h.cfg.KnownDead = []brokerprobe.Target{{ID: 1, Epoch: epoch}, {ID: 2, Epoch: 1}}
	h.becomeController(3)
	if h.c.ctx.isLive(1) || !h.c.ctx.isLive(2) {
		t.Fatalf("live brokers after failover: %v", h.c.ctx.liveBrokerIDs())
	}
	if s, _ := h.state("orders", 0); s.Leader != 2 || slices.Contains(s.ISR, 1) {
		t.Errorf("orders-0 after failover: %+v", s)
	}
}
