package kafkazk

import (
	"fmt"
	"testing"

	"github.com/kbroker/kbroker/zkstore"
)

// testTree is an in-memory ensemble with the top-level paths, registered
// brokers (broker id on rack r<id%2>) and an admin session for the test's
// own reads and writes.
type testTree struct {
	t          *testing.T
	admin      zkstore.Client
	newTopicID func() [16]byte
}

func newTestTree(t *testing.T, ids ...int32) *testTree {
	t.Helper()
	z := zkstore.NewMem()
	h := &testTree{t: t, admin: z.Connect()}
	if err := CreateTopLevelPaths(h.admin); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		reg := testRegistration(fmt.Sprintf("kb%d", id))
		reg.Rack = fmt.Sprintf("r%d", id%2)
		if _, err := RegisterBroker(z.Connect(), id, reg); err != nil {
			t.Fatal(err)
		}
	}
	seq := byte(0)
	h.newTopicID = func() [16]byte { seq++; return [16]byte{0: 0xAB, 15: seq} }
	return h
}

func (h *testTree) createTopic(name string, assignment map[int32][]int32) {
	h.t.Helper()
	if _, err := CreateTopic(h.admin, name, -1, -1, assignment, nil, false, nil, h.newTopicID); err != nil {
		h.t.Fatal(err)
	}
}

// createPartitionState writes a new partition's first state, as the
// controller does when it brings the partition online.
func (h *testTree) createPartitionState(topic string, p int32, s PartitionStateZNode) {
	h.t.Helper()
	if err := CreateRecursive(h.admin, TopicPartitionPath(topic, p)); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.admin.Create(PartitionStatePath(topic, p), s.Encode(), zkstore.ModePersistent); err != nil {
		h.t.Fatal(err)
	}
}

func (h *testTree) rawState(topic string, p int32) string {
	h.t.Helper()
	data, _, err := h.admin.Get(PartitionStatePath(topic, p))
	if err != nil {
		h.t.Fatalf("state of %s-%d: %v", topic, p, err)
	}
	return string(data)
}

func (h *testTree) topicZNode(topic string) TopicZNode {
	h.t.Helper()
	data, _, err := h.admin.Get(TopicPath(topic))
	if err != nil {
		h.t.Fatal(err)
	}
	z, err := DecodeTopicZNode(data)
	if err != nil {
		h.t.Fatal(err)
	}
	return z
}
