package controller

import (
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
)

// Broker 1 reports a failed log directory twice, dead broker 3 once, and
// one node names another event: broker 1 alone gets one LeaderAndIsr of
// every replica it hosts that has a state (not a topic being deleted).
func TestDecideLogDirEvents(t *testing.T) {
	p0, p1, p2, d0 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1},
		kafkazk.TopicPartition{Topic: "t", Partition: 2}, kafkazk.TopicPartition{Topic: "doomed", Partition: 0}
	ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{p0: {1, 2}, p1: {2, 1}, p2: {2}, d0: {1}})
	ctx.leadership[p0] = leadership(1, 2, []int32{1, 2}, 3)
	ctx.leadership[p1] = leadership(2, 0, []int32{2, 1}, 0)
	ctx.leadership[p2] = leadership(2, 0, []int32{2}, 0)
	ctx.leadership[d0] = leadership(1, 0, []int32{1}, 0)
	ctx.topicsToDelete["doomed"] = true
	failure := func(b int32) kafkazk.LogDirEventZNode {
		return kafkazk.LogDirEventZNode{Broker: b, Event: kafkazk.LogDirFailureEvent}
	}
	d := decideLogDirEvents(ctx, []logDirEvent{
		{"log_dir_event_0000000001", failure(1)},
		{"log_dir_event_0000000002", kafkazk.LogDirEventZNode{Broker: 2, Event: 7}},
		{"log_dir_event_0000000003", failure(3)},
		{"log_dir_event_0000000004", failure(1)},
	})
	if !slices.Equal(d.brokers, []int32{1}) || !slices.Equal(d.ignored, []string{"log_dir_event_0000000002"}) {
		t.Fatalf("decision %+v", d)
	}
	lai := controllertest.LeaderAndIsrs(sentOf(d.requests))
	if len(lai) != 1 || len(lai[1]) != 2 || lai[1][p0].LeaderEpoch != 2 || lai[1][p0].ZkVersion != 3 || lai[1][p1].Leader != 2 {
		t.Errorf("LeaderAndIsr %v", lai)
	}
	if d := decideLogDirEvents(ctx, nil); len(d.brokers) != 0 || len(sentOf(d.requests)) != 0 {
		t.Errorf("no event: %+v", d)
	}
}
