package controller

import (
	"slices"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/kbroker/kbroker/zkstore/zktest"
)

// unclean.leader.election.enable turned on by any broker (a config change
// notification) makes the controller elect the topic's offline
// partitions; notifications older than the controller are not replayed.
func TestUncleanEnabledThroughConfigChange(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.createTopic("idle", map[int32][]int32{0: {1, 2}})
	if err := kafkazk.SetTopicConfig(h.admin, "idle", map[string]string{"retention.ms": "5"}); err != nil {
		t.Fatal(err)
	}
	h.becomeController(3)
	h.updateIsr(kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}, 0)
	h.killBroker(1)
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != -1 {
		t.Fatalf("setup: %+v", s)
	}
	if err := kafkazk.SetTopicConfig(h.admin, "orders", map[string]string{"unclean.leader.election.enable": "false"}); err != nil {
		t.Fatal(err)
	}
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != -1 {
		t.Fatalf("elected with unclean election off: %+v", s)
	}
	if err := kafkazk.SetTopicConfig(h.admin, "orders", map[string]string{"unclean.leader.election.enable": "true"}); err != nil {
		t.Fatal(err)
	}
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) {
		t.Errorf("after enabling unclean election: %+v", s)
	}
	if h.c.lastConfigChange != 2 {
		t.Errorf("last config change handled %d", h.c.lastConfigChange)
	}
}

// The cluster-wide dynamic default of unclean.leader.election.enable
// turned on (kafka-configs --entity-type brokers --entity-default) elects
// the offline partitions of topics without an override, not of one that
// keeps it off (KafkaController.enableDefaultUncleanLeaderElection).
func TestUncleanEnabledThroughDynamicDefault(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.createTopic("careful", map[int32][]int32{0: {1, 2}})
	if err := kafkazk.SetTopicConfig(h.admin, "careful", map[string]string{"unclean.leader.election.enable": "false"}); err != nil {
		t.Fatal(err)
	}
	h.becomeController(3)
	for _, topic := range []string{"orders", "careful"} {
		h.updateIsr(kafkazk.TopicPartition{Topic: topic, Partition: 0}, kafkazk.LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}, 0)
	}
	h.killBroker(1)
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != -1 {
		t.Fatalf("setup: %+v", s)
	}
	if err := kafkazk.SetBrokerConfigs(h.admin, "", map[string]string{"unclean.leader.election.enable": "true"}); err != nil {
		t.Fatal(err)
	}
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != 2 {
		t.Errorf("orders after the dynamic default turned unclean election on: %+v", s)
	}
	if s, _ := h.state("careful", 0); s.Leader != -1 {
		t.Errorf("careful, whose override keeps it off, was elected: %+v", s)
	}
}

// The legacy /admin/preferred_replica_election node: a preferred election
// for its partitions, then the node goes.
func TestLegacyPreferredReplicaElection(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	setupDisplacedLeader(t, h)
	zktest.MustCreate(t, h.admin, kafkazk.PreferredReplicaElectionPath, string(kafkazk.EncodePartitionList([]kafkazk.TopicPartition{{Topic: "orders", Partition: 0}})), zkstore.ModePersistent)
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != 1 {
		t.Errorf("after legacy preferred election: %+v", s)
	}
	if ok, _, _ := h.admin.Exists(kafkazk.PreferredReplicaElectionPath); ok {
		t.Error("node not deleted")
	}
}
