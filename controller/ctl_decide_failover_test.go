package controller

import (
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
)

// A controller fails over with brokers 1 and 2 live and 3 dead: every live
// broker hears of the live brokers first, then gets a LeaderAndIsr for
// each of its replicas with a state; broker 3's replicas are to go
// offline; partitions take their state from the cached state znodes.
func TestDecideFailover(t *testing.T) {
	p0, p1, p2 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1}, kafkazk.TopicPartition{Topic: "t", Partition: 2}
	u0 := kafkazk.TopicPartition{Topic: "u", Partition: 0}
	ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{p0: {1, 3}, p1: {3, 2}, p2: {2, 1}, u0: {3, 4}})
	ctx.leadership[p0] = leadership(1, 2, []int32{1, 3}, 3)
	ctx.leadership[p1] = leadership(3, 0, []int32{3, 2}, 0)
	ctx.leadership[u0] = leadership(4, 1, []int32{4}, 1)

	d := decideFailover(ctx)
	sent := sentOf(d.metadata)
	parts, live := controllertest.UpdateMetadatas(sent)
	if len(sent) != 2 || len(parts[1]) != 0 || len(parts[2]) != 0 || !slices.Equal(live[1], []int32{1, 2}) || !slices.Equal(live[2], []int32{1, 2}) {
		t.Errorf("metadata %v %v", parts, live)
	}
	lai := controllertest.LeaderAndIsrs(sentOf(d.replicas))
	if len(lai) != 2 || len(lai[1]) != 1 || lai[1][p0].LeaderEpoch != 2 || len(lai[2]) != 1 || lai[2][p1].Leader != 3 {
		t.Errorf("LeaderAndIsr %v", lai)
	}
	if len(d.dead) != 2 || d.dead[0].broker != 3 || !slices.Equal(d.dead[0].tps, []kafkazk.TopicPartition{p0, p1, u0}) ||
		d.dead[1].broker != 4 || !slices.Equal(d.dead[1].tps, []kafkazk.TopicPartition{u0}) {
		t.Errorf("dead replicas %+v", d.dead)
	}
	states := cachedPartitionStates(ctx)
	want := map[kafkazk.TopicPartition]partitionState{p0: partitionOnline, p1: partitionOffline, p2: partitionNew, u0: partitionOffline}
	if len(states) != len(want) {
		t.Errorf("states %v", states)
	}
	for tp, s := range want {
		if states[tp] != s {
			t.Errorf("%v: state %v, want %v", tp, states[tp], s)
		}
	}
	if len(ctx.states) != 0 {
		t.Error("decision changed the context")
	}
	// A topic being deleted keeps its dead replicas.
	ctx.topicsToDelete["u"] = true
	if dead := deadReplicas(ctx); len(dead) != 1 || !slices.Equal(dead[0].tps, []kafkazk.TopicPartition{p0, p1}) {
		t.Errorf("dead replicas with u being deleted: %+v", dead)
	}
}
