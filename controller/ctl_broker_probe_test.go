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

// silence feeds the controller probes of broker id that nobody answered,
// enough for a verdict, and the answers of the brokers in answering.
func (h *ctlHarness) silence(id int32, t0 time.Time, answering ...int32) {
	h.t.Helper()
	p := brokerprobe.DefaultPolicy
	for i := range p.Silences {
		at := t0.Add(time.Duration(i) * p.SilentSpan)
		for _, a := range answering {
			if err := h.c.handleProbe(brokerprobe.Target{ID: a, Epoch: h.c.ctx.brokers[a].Epoch}, brokerprobe.Reachable, at); err != nil {
				h.t.Fatal(err)
			}
		}
		b, ok := h.c.ctx.brokers[id]
		if !ok {
			h.t.Fatalf("broker %d not live", id)
		}
		if err := h.c.handleProbe(brokerprobe.Target{ID: id, Epoch: b.Epoch}, brokerprobe.Unanswered, at); err != nil {
			h.t.Fatal(err)
		}
	}
	h.run()
}

// A broker that stops answering (paused, hung, cut off) while the other
// brokers answer is handled as failed; when it answers again it comes
// back as a follower.
func TestUnresponsiveBrokerFenced(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	h.ch.Take()
	t0 := time.Unix(1_700_000_000, 0)

	h.silence(1, t0, 2)
	s, _ := h.state("orders", 0)
	if s.Leader != 2 || !slices.Equal(s.ISR, []int32{2, 3}) || h.c.ctx.isLive(1) {
		t.Fatalf("after broker 1 went silent: %+v, live %v", s, h.c.ctx.liveBrokerIDs())
	}
	h.ch.Take()

	// With broker 1 fenced, a second silent broker is not fenced: this
	// controller would be judging on its own word against everyone's.
	h.silence(2, t0.Add(time.Minute))
	if !h.c.ctx.isLive(2) {
		t.Fatal("a second silent broker was fenced")
	}
	if s, _ := h.state("orders", 0); s.Leader != 2 {
		t.Fatalf("leader moved off the second silent broker: %+v", s)
	}

	if err := h.c.handleProbe(brokerprobe.Target{ID: 1, Epoch: h.c.probes.fenced[1].Epoch}, brokerprobe.Reachable, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	h.run()
	if !h.c.ctx.isLive(1) {
		t.Fatal("broker 1 answers again but is not live")
	}
	if v, ok := controllertest.LeaderAndIsrs(h.ch.Take())[1][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !ok || v.Leader != 2 {
		t.Errorf("broker 1 got LeaderAndIsr %+v (sent %v)", v, ok)
	}
}

// A controller that nobody answers is the one cut off: it fences nobody.
func TestCutOffControllerFencesNobody(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	t0 := time.Unix(1_700_000_000, 0)
	p := brokerprobe.DefaultPolicy
	for i := range 4 * p.Silences {
		at := t0.Add(time.Duration(i) * p.SilentSpan)
		for _, id := range []int32{1, 2} {
			if err := h.c.handleProbe(brokerprobe.Target{ID: id, Epoch: h.c.ctx.brokers[id].Epoch}, brokerprobe.Unanswered, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.run()
	if !h.c.ctx.isLive(1) || !h.c.ctx.isLive(2) {
		t.Fatalf("a cut-off controller fenced brokers: live %v", h.c.ctx.liveBrokerIDs())
	}
	if s, _ := h.state("orders", 0); s.Leader != 1 {
		t.Fatalf("leader moved: %+v", s)
	}

	// Broker 2 answers again while broker 1 stays silent: now the
	// controller's view holds, and broker 1 is fenced on its next probe.
	at := t0.Add(time.Minute)
	if err := h.c.handleProbe(brokerprobe.Target{ID: 2, Epoch: h.c.ctx.brokers[2].Epoch}, brokerprobe.Reachable, at); err != nil {
		t.Fatal(err)
	}
	if err := h.c.handleProbe(brokerprobe.Target{ID: 1, Epoch: h.c.ctx.brokers[1].Epoch}, brokerprobe.Unanswered, at); err != nil {
		t.Fatal(err)
	}
	h.run()
	if h.c.ctx.isLive(1) {
		t.Fatal("silent broker 1 not fenced once broker 2 answered")
	}
}
