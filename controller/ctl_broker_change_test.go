package controller

import (
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// Topic creation: the controller sees /brokers/topics/<t>, creates each
// partition's state znode with Kafka's exact JSON, tells the replicas
// (IsNew) and every broker.
func TestTopicCreationCreatesStateZNodes(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(1)
	h.ch.Take()
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}})
	h.run()
	if got := h.rawState("orders", 0); got != `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}` {
		t.Errorf("orders-0 state %s", got)
	}
	if got := h.rawState("orders", 1); got != `{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":0,"isr":[2,3,1]}` {
		t.Errorf("orders-1 state %s", got)
	}
	sent := h.ch.Take()
	lai := controllertest.LeaderAndIsrs(sent)
	for _, id := range []int32{1, 2, 3} {
		v := lai[id][kafkazk.TopicPartition{Topic: "orders", Partition: 1}]
		if !v.IsNew || v.Leader != 2 || v.LeaderEpoch != 0 || v.ZkVersion != 0 || !slices.Equal(v.Replicas, []int32{2, 3, 1}) {
			t.Errorf("LeaderAndIsr orders-1 to %d: %+v", id, v)
		}
	}
	parts, _ := controllertest.UpdateMetadatas(sent)
	if got := brokersOf(parts); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("UpdateMetadata went to %v", got)
	}
	// Leader -1 replicas: a partition whose replicas are all dead stays New.
	h.createTopic("nowhere", map[int32][]int32{0: {7}})
	h.run()
	if ok, _, _ := h.admin.Exists(kafkazk.PartitionStatePath("nowhere", 0)); ok {
		t.Error("state created for a partition without live replicas")
	}
	// When broker 7 appears it gets its leader.
	h.startBroker(7)
	h.run()
	if s, _ := h.state("nowhere", 0); s.Leader != 7 {
		t.Errorf("after broker 7 started: %+v", s)
	}
}

// Broker failure: partitions it led get the first live ISR member in
// assignment order, with the leader epoch bumped and the dead broker out of
// the ISR, written conditionally; survivors get LeaderAndIsr and everyone
// UpdateMetadata with the dead replica offline.
func TestBrokerFailureElectsFromIsr(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}, 1: {2, 1, 3}})
	h.run()
	h.ch.Take()
	h.killBroker(1)
	h.run()
	s, v := h.state("orders", 0)
	if s.Leader != 2 || s.LeaderEpoch != 1 || !slices.Equal(s.ISR, []int32{2, 3}) || v != 1 {
		t.Errorf("orders-0 after broker 1 died: %+v version %d", s, v)
	}
	// Broker 1 only followed orders-1: it leaves the ISR, epoch bumped,
	// leader kept.
	s, _ = h.state("orders", 1)
	if s.Leader != 2 || s.LeaderEpoch != 1 || !slices.Equal(s.ISR, []int32{2, 3}) {
		t.Errorf("orders-1 after broker 1 died: %+v", s)
	}
	sent := h.ch.Take()
	lai := controllertest.LeaderAndIsrs(sent)
	if got := brokersOf(lai); !slices.Equal(got, []int32{2, 3}) {
		t.Errorf("LeaderAndIsr went to %v", got)
	}
	if v := lai[3][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; v.Leader != 2 || v.LeaderEpoch != 1 || v.ZkVersion != 1 {
		t.Errorf("LeaderAndIsr orders-0 to 3: %+v", v)
	}
	parts, live := controllertest.UpdateMetadatas(sent)
	if v := parts[2][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !slices.Equal(v.Offline, []int32{1}) {
		t.Errorf("UpdateMetadata offline replicas %+v", v)
	}
	if !slices.Equal(live[2], []int32{2, 3}) {
		t.Errorf("live brokers %v", live[2])
	}
	if h.c.ctx.offlinePartitionCount() != 0 {
		t.Error("offline partitions after a clean election")
	}
	// Broker 1, the preferred leader, is gone: orders-0 is led by 2.
	if n := h.c.ctx.preferredReplicaImbalanceCount(); n != 1 {
		t.Errorf("preferred replica imbalance %d, want 1", n)
	}
}

// A leader's ISR write between the controller's read and its write makes
// the controller's conditional write fail; it re-reads and decides again.
func TestBrokerFailureRetriesOnVersionConflict(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	// Broker 1 (the leader) shrinks the ISR to [1,3] just before the
	// controller writes.
	raced := false
	c.zk = &raceZK{Client: c.zk, before: func(ops []zkstore.Op) {
		if raced || len(ops) < 2 {
			return
		}
		if set, ok := ops[1].(*zkstore.OpSet); ok && set.Path == kafkazk.PartitionStatePath("orders", 0) {
			raced = true
			if _, err := kafkazk.UpdateIsr(h.admin, kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 3}, ControllerEpoch: 1}, 0); err != nil {
				t.Errorf("leader write: %v", err)
			}
		}
	}}
	h.killBroker(1)
	h.run()
	if !raced {
		t.Fatal("no race happened")
	}
	s, v := h.state("orders", 0)
	// Decided on the re-read ISR [1,3]: 2 is not in it.
	if s.Leader != 3 || !slices.Equal(s.ISR, []int32{3}) || s.LeaderEpoch != 1 || v != 2 {
		t.Errorf("orders-0: %+v version %d", s, v)
	}
}

// No live ISR member: the partition goes leaderless (-1), its ISR frozen
// at the last member, unless unclean election is enabled for the topic —
// then the first live assigned replica leads with ISR [it].
func TestUncleanLeaderElection(t *testing.T) {
	h, _ := newLoneLeaderHarness(t)
	h.killBroker(1)
	h.run()
	if got := h.rawState("orders", 0); got != `{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":1,"isr":[1]}` {
		t.Fatalf("state after the last ISR member died: %s", got)
	}
	if n := h.c.ctx.offlinePartitionCount(); n != 1 {
		t.Errorf("offline partitions %d", n)
	}
	// The topic override turns it on: the controller elects at once.
	if err := kafkazk.SetEntityConfig(h.admin, kafkazk.ConfigTypeTopic, "orders", map[string]string{"unclean.leader.election.enable": "true"}); err != nil {
		t.Fatal(err)
	}
	if err := h.c.processTopicUncleanLeaderElectionEnable("orders"); err != nil {
		t.Fatal(err)
	}
	h.run()
	s, _ := h.state("orders", 0)
	if s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) || s.LeaderEpoch != 2 {
		t.Errorf("after unclean election: %+v", s)
	}
}

// The broker default enables unclean election, but the topic override
// (false) wins.
func TestUncleanLeaderElectionTopicOverrideWins(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.cfg.UncleanLeaderElection = true
	h.becomeController(3)
	if _, err := kafkazk.CreateTopic(h.admin, "strict", -1, -1, map[int32][]int32{0: {1, 2}}, map[string]string{"unclean.leader.election.enable": "false"}, false, nil, h.cfg.NewTopicID); err != nil {
		t.Fatal(err)
	}
	h.createTopic("loose", map[int32][]int32{0: {1, 2}})
	h.run()
	for _, topic := range []string{"strict", "loose"} {
		h.updateIsr(kafkazk.TopicPartition{Topic: topic, Partition: 0}, kafkazk.LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}, 0)
	}
	h.killBroker(1)
	h.run()
	if s, _ := h.state("strict", 0); s.Leader != -1 {
		t.Errorf("strict: %+v", s)
	}
	if s, _ := h.state("loose", 0); s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) {
		t.Errorf("loose: %+v", s)
	}
}

// A broker that comes back gets all partition metadata and a LeaderAndIsr
// for its replicas; a bounce (new registration, higher epoch) counts as
// failure then start-up.
func TestBrokerStartupAndBounce(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.run()
	h.killBroker(1)
	h.run()
	h.ch.Take()
	h.startBroker(1)
	h.run()
	sent := h.ch.Take()
	if len(sent) == 0 || sent[0].Req.Key() != 6 {
		t.Fatalf("first request after start-up %v", sent)
	}
	lai := controllertest.LeaderAndIsrs(sent)
	if v, ok := lai[1][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !ok || v.Leader != 2 {
		t.Errorf("LeaderAndIsr to returning broker: %+v %v", v, ok)
	}
	parts, _ := controllertest.UpdateMetadatas(sent)
	if _, ok := parts[1][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !ok {
		t.Error("returning broker got no partition metadata")
	}
	// Bounce broker 2 (the leader): re-registration within one event.
	old := h.c.ctx.brokers[2].Epoch
	h.brokers[2].Close()
	h.startBroker(2)
	h.run()
	if e := h.c.ctx.brokers[2].Epoch; e <= old {
		t.Errorf("broker epoch after bounce %d, was %d", e, old)
	}
}
