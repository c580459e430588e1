package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// setupDisplacedLeader leaves orders-0 ([1,2]) led by 2 with 1 back in the
// ISR: broker 1 died, came back and caught up.
func setupDisplacedLeader(t *testing.T, h *ctlHarness) {
	t.Helper()
	h.createTopic("orders", map[int32][]int32{0: {1, 2}, 1: {2, 1}})
	h.run()
	h.killBroker(1)
	h.run()
	h.startBroker(1)
	h.run()
	s, v := h.state("orders", 0)
	if s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) {
		t.Fatalf("setup: %+v", s)
	}
	// Leader 2 takes 1 back into the ISR and announces it.
	h.updateIsr(kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.LeaderAndIsr{Leader: 2, LeaderEpoch: s.LeaderEpoch, ISR: []int32{2, 1}, ControllerEpoch: 1}, v)
	if err := kafkazk.WriteIsrChangeNotification(h.admin, []kafkazk.TopicPartition{{Topic: "orders", Partition: 0}}); err != nil {
		t.Fatal(err)
	}
	h.run()
	h.ch.Take()
}

func TestElectLeadersPreferred(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	setupDisplacedLeader(t, h)
	res, err := c.electLeadersAPI(ElectPreferred, []kafkazk.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}, {Topic: "nope", Partition: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if res[kafkazk.TopicPartition{Topic: "orders", Partition: 0}] != nil {
		t.Errorf("orders-0: %v", res[kafkazk.TopicPartition{Topic: "orders", Partition: 0}])
	}
	if !errors.Is(res[kafkazk.TopicPartition{Topic: "orders", Partition: 1}], kerr.ElectionNotNeeded) {
		t.Errorf("orders-1: %v", res[kafkazk.TopicPartition{Topic: "orders", Partition: 1}])
	}
	if !errors.Is(res[kafkazk.TopicPartition{Topic: "nope", Partition: 0}], kerr.UnknownTopicOrPartition) {
		t.Errorf("nope-0: %v", res[kafkazk.TopicPartition{Topic: "nope", Partition: 0}])
	}
	h.run()
	s, _ := h.state("orders", 0)
	if s.Leader != 1 || !slices.Equal(s.ISR, []int32{2, 1}) {
		t.Errorf("after preferred election: %+v", s)
	}
	// Preferred election goes to all replicas.
	if got := brokersOf(controllertest.LeaderAndIsrs(h.ch.Take())); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("LeaderAndIsr to %v", got)
	}
	// UNCLEAN where the leader is live: not needed.
	res, _ = c.electLeadersAPI(ElectUnclean, []kafkazk.TopicPartition{{Topic: "orders", Partition: 0}})
	if !errors.Is(res[kafkazk.TopicPartition{Topic: "orders", Partition: 0}], kerr.ElectionNotNeeded) {
		t.Errorf("unclean on a led partition: %v", res)
	}
}

// The preferred replica must be in the ISR.
func TestElectLeadersPreferredNotAvailable(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.run()
	h.killBroker(1)
	h.run()
	h.startBroker(1) // back, but not in the ISR yet
	h.run()
	res, err := c.electLeadersAPI(ElectPreferred, []kafkazk.TopicPartition{{Topic: "orders", Partition: 0}})
	if err != nil || !errors.Is(res[kafkazk.TopicPartition{Topic: "orders", Partition: 0}], kerr.PreferredLeaderNotAvailable) {
		t.Fatalf("%v %v", res, err)
	}
}

// UNCLEAN ElectLeaders elects outside the ISR whatever the topic says.
func TestElectLeadersUnclean(t *testing.T) {
	h, c := newLoneLeaderHarness(t)
	h.killBroker(1)
	h.run()
	res, err := c.electLeadersAPI(ElectUnclean, nil)
	if err != nil || res[kafkazk.TopicPartition{Topic: "orders", Partition: 0}] != nil {
		t.Fatalf("%v %v", res, err)
	}
	if s, _ := h.state("orders", 0); s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) {
		t.Errorf("after unclean election: %+v", s)
	}
}

// Auto rebalance, on a tick: broker 1 prefers 2 partitions and leads none
// (100% > 10%), so both move back; with the feature off nothing happens.
func TestAutoLeaderRebalance(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	h.createTopic("more", map[int32][]int32{0: {1, 2}})
	setupDisplacedLeader(t, h)
	if got := preferredImbalance(c.ctx, 10); !slices.Equal(got, []kafkazk.TopicPartition{{Topic: "orders", Partition: 0}}) {
		// more-0 is displaced too but 1 is not in its ISR yet.
		t.Errorf("imbalanced partitions %v", got)
	}
	if err := c.processAutoPreferredReplicaLeaderElection(); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.state("orders", 0); s.Leader != 2 {
		t.Fatalf("rebalanced while disabled: %+v", s)
	}
	c.cfg.AutoLeaderRebalance = true
	c.enqueue(ctlEvent{"AutoPreferredReplicaLeaderElection", c.processAutoPreferredReplicaLeaderElection})
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != 1 {
		t.Errorf("orders-0 after rebalance: %+v", s)
	}
	// A 50% imbalance under a 60% threshold is tolerated.
	if got := preferredImbalance(c.ctx, 60); len(got) != 0 {
		t.Errorf("imbalance under threshold: %v", got)
	}
}
