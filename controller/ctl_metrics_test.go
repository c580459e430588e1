package controller

import (
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
)

func TestPreferredReplicaImbalanceCount(t *testing.T) {
	c := newControllerContext()
	lead := func(topic string, p, leader int32, isr ...int32) {
		c.leadership[kafkazk.TopicPartition{Topic: topic, Partition: p}] = partitionLeadership{leaderAndIsr: leaderAndIsr{Leader: leader, ISR: isr}}
	}
	c.assignments["a"] = map[int32]replicaAssignment{
		0: {Replicas: []int32{1, 2}},                     // led by 1: balanced
		1: {Replicas: []int32{1, 2}},                     // led by 2: imbalanced
		2: {Replicas: []int32{3, 1}, Adding: []int32{3}}, // 3 being added, not in the ISR yet: not counted
		3: {Replicas: []int32{3, 1}, Adding: []int32{3}}, // 3 in the ISR, not leading: imbalanced
		4: {Replicas: []int32{1, 2}},                     // no leadership known: not counted
	}
	lead("a", 0, 1, 1, 2)
	lead("a", 1, 2, 1, 2)
	lead("a", 2, 1, 1)
	lead("a", 3, 1, 1, 3)
	c.assignments["gone"] = map[int32]replicaAssignment{0: {Replicas: []int32{1}}}
	lead("gone", 0, -1)
	c.topicsToDelete["gone"] = true
	if n := c.preferredReplicaImbalanceCount(); n != 2 {
		t.Fatalf("imbalance %d, want 2", n)
	}
}
