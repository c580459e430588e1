package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

func readTopicZNode(t *testing.T, h *ctlHarness, topic string) kafkazk.TopicZNode {
	t.Helper()
	data, _, err := h.admin.Get(kafkazk.TopicPath(topic))
	if err != nil {
		t.Fatal(err)
	}
	z, err := kafkazk.DecodeTopicZNode(data)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// Reassignment end to end (KIP-455): [1,2] → [3,4]. Phase A records RS,
// adding and removing in the topic znode and bumps the leader epoch; once
// the leader has 3 and 4 in its ISR (announced by an ISR change
// notification), phase B elects 3, drops 1 and 2 from the ISR, deletes
// their replicas and writes the final assignment.
func TestReassignmentEndToEnd(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3, 4)
	c := h.becomeController(4)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.run()
	h.ch.Take()
	tp := kafkazk.TopicPartition{Topic: "orders", Partition: 0}

	if err := c.alterPartitionReassignment(tp, []int32{3, 3}); !errors.Is(err, kerr.InvalidReplicaAssignment) {
		t.Errorf("duplicates: %v", err)
	}
	if err := c.alterPartitionReassignment(tp, []int32{3, 9}); !errors.Is(err, kerr.InvalidReplicaAssignment) {
		t.Errorf("dead broker: %v", err)
	}
	if err := c.alterPartitionReassignment(tp, nil); !errors.Is(err, kerr.NoReassignmentInProgress) {
		t.Errorf("cancel without reassignment: %v", err)
	}
	if err := c.alterPartitionReassignment(tp, []int32{3, 4}); err != nil {
		t.Fatal(err)
	}
	h.run()
	z := readTopicZNode(t, h, "orders")
	if !slices.Equal(z.Partitions[0], []int32{3, 4, 1, 2}) || !slices.Equal(z.Adding[0], []int32{3, 4}) || !slices.Equal(z.Removing[0], []int32{1, 2}) {
		t.Fatalf("topic znode during reassignment: %+v", z)
	}
	s, v := h.state("orders", 0)
	if s.Leader != 1 || s.LeaderEpoch != 1 {
		t.Errorf("state during reassignment: %+v", s)
	}
	lai := controllertest.LeaderAndIsrs(h.ch.Take())
	if got := brokersOf(lai); !slices.Equal(got, []int32{1, 2, 3, 4}) {
		t.Errorf("LeaderAndIsr to %v", got)
	}
	if got := lai[3][tp]; !slices.Equal(got.Replicas, []int32{3, 4, 1, 2}) {
		t.Errorf("LeaderAndIsr to 3: %+v", got)
	}
	listed := c.listReassignments(nil)
	if r := listed[kafkazk.TopicPartition(tp)]; !slices.Equal(r.AddingReplicas, []int32{3, 4}) || !slices.Equal(r.RemovingReplicas, []int32{1, 2}) {
		t.Errorf("listed %+v", listed)
	}
	// Topic deletion waits for the reassignment.
	// The new replicas catch up: the leader writes the ISR and announces.
	h.updateIsr(tp, kafkazk.LeaderAndIsr{Leader: 1, LeaderEpoch: 1, ISR: []int32{1, 2, 3, 4}, ControllerEpoch: 1}, v)
	if err := kafkazk.WriteIsrChangeNotification(h.admin, []kafkazk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	h.run()
	z = readTopicZNode(t, h, "orders")
	if !slices.Equal(z.Partitions[0], []int32{3, 4}) || len(z.Adding) != 0 || len(z.Removing) != 0 {
		t.Fatalf("topic znode after reassignment: %+v", z)
	}
	s, _ = h.state("orders", 0)
	if s.Leader != 3 || !slices.Equal(s.ISR, []int32{3, 4}) {
		t.Errorf("state after reassignment: %+v", s)
	}
	sent := h.ch.Take()
	stops := controllertest.StopReplicas(sent)
	for _, r := range []int32{1, 2} {
		if !stops[r][tp] {
			t.Errorf("replica on %d not deleted: %v", r, stops)
		}
	}
	if len(c.listReassignments(nil)) != 0 {
		t.Error("reassignment still listed")
	}
}

// Cancelling reverts to the original replicas and stops the added ones.
func TestReassignmentCancel(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.run()
	tp := kafkazk.TopicPartition{Topic: "orders", Partition: 0}
	if err := c.alterPartitionReassignment(tp, []int32{1, 3}); err != nil {
		t.Fatal(err)
	}
	h.run()
	h.ch.Take()
	if err := c.alterPartitionReassignment(tp, nil); err != nil {
		t.Fatal(err)
	}
	h.run()
	z := readTopicZNode(t, h, "orders")
	if !slices.Equal(z.Partitions[0], []int32{1, 2}) || len(z.Adding) != 0 {
		t.Fatalf("topic znode after cancel: %+v", z)
	}
	if stops := controllertest.StopReplicas(h.ch.Take()); !stops[3][tp] {
		t.Errorf("added replica not deleted: %v", stops)
	}
}

// A new controller resumes a reassignment recorded in the topic znode.
func TestReassignmentResumesAfterFailover(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.becomeController(3)
	mustSet := func(data string) {
		if _, err := h.admin.Set(kafkazk.TopicPath("orders"), []byte(data), -1); err != nil {
			t.Fatal(err)
		}
	}
	id := kafkazk.EncodeUUID(h.c.ctx.topicIDs["orders"])
	// As a previous controller left it, with 3 already in the ISR.
	mustSet(`{"partitions":{"0":[3,1,2]},"topic_id":"` + id + `","adding_replicas":{"0":[3]},"removing_replicas":{"0":[2]},"version":3}`)
	h.updateIsr(kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.LeaderAndIsr{Leader: 1, ISR: []int32{1, 2, 3}, ControllerEpoch: 1}, 0)
	if err := h.admin.Delete(kafkazk.ControllerPath, -1); err != nil {
		t.Fatal(err)
	}
	h.becomeController(3)
	z := readTopicZNode(t, h, "orders")
	if !slices.Equal(z.Partitions[0], []int32{3, 1}) || len(z.Removing) != 0 {
		t.Fatalf("topic znode after resumed reassignment: %+v", z)
	}
	if s, _ := h.state("orders", 0); s.Leader != 1 || !slices.Equal(s.ISR, []int32{1, 3}) {
		t.Errorf("state: %+v", s)
	}
}
