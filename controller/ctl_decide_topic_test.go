package controller

import (
	"slices"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
)

func TestDecideTopicChange(t *testing.T) {
	ctx := decideContext([]int32{1}, map[kafkazk.TopicPartition][]int32{{Topic: "kept", Partition: 0}: {1}, {Topic: "gone", Partition: 0}: {1}, {Topic: "also-gone", Partition: 0}: {1}})
	gone, fresh := decideTopicChange(ctx, []string{"kept", "new-b", "new-a"})
	if !slices.Equal(gone, []string{"also-gone", "gone"}) || !slices.Equal(fresh, []string{"new-a", "new-b"}) {
		t.Errorf("gone %v fresh %v", gone, fresh)
	}
	if len(ctx.assignments) != 3 {
		t.Error("decision changed the context")
	}
}

// A znode with a topic id is taken as it is; one without gets the id
// given, at version 3, to be written back; the partitions carry their
// reassignment state.
func TestDecideTopicLoad(t *testing.T) {
	id := [16]byte{7}
	z := kafkazk.TopicZNode{Version: 3, TopicID: id, Partitions: kafkazk.ReplicaMap{0: {1, 2}, 1: {3, 1, 2}},
		Adding: kafkazk.ReplicaMap{1: {3}}, Removing: kafkazk.ReplicaMap{1: {2}}}
	d := decideTopicLoad("orders", z, [16]byte{9})
	a1 := d.assignments[kafkazk.TopicPartition{Topic: "orders", Partition: 1}]
	if d.rewrite || d.id != id || len(d.assignments) != 2 || !slices.Equal(d.assignments[kafkazk.TopicPartition{Topic: "orders", Partition: 0}].Replicas, []int32{1, 2}) ||
		!slices.Equal(a1.Replicas, []int32{3, 1, 2}) || !slices.Equal(a1.Adding, []int32{3}) || !slices.Equal(a1.Removing, []int32{2}) {
		t.Errorf("with id: %+v", d)
	}
	old := kafkazk.TopicZNode{Version: 2, Partitions: kafkazk.ReplicaMap{0: {1}}}
	d = decideTopicLoad("legacy", old, [16]byte{9})
	if !d.rewrite || d.id != ([16]byte{9}) || d.znode.TopicID != ([16]byte{9}) || d.znode.Version != 3 || !slices.Equal(d.znode.Partitions[0], []int32{1}) {
		t.Errorf("without id: %+v", d)
	}
	if old.Version != 2 || old.TopicID != ([16]byte{}) {
		t.Errorf("decision changed its input: %+v", old)
	}
	// Below IBP 2.8-IV0 there are no topic ids to give: the znode stays.
	d = decideTopicLoad("legacy", old, [16]byte{})
	if d.rewrite || d.id != ([16]byte{}) || len(d.assignments) != 1 {
		t.Errorf("without id at an IBP without ids: %+v", d)
	}
}

func TestDecidePartitionModifications(t *testing.T) {
	p0, p1, p2 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1}, kafkazk.TopicPartition{Topic: "t", Partition: 2}
	ctx := decideContext([]int32{1}, map[kafkazk.TopicPartition][]int32{p0: {1}, p1: {1}, p2: {1}})
	if added, ignored := decidePartitionModifications(ctx, "t", map[int32]bool{0: true}); ignored || !slices.Equal(added, []kafkazk.TopicPartition{p1, p2}) {
		t.Errorf("added %v ignored %v", added, ignored)
	}
	if added, ignored := decidePartitionModifications(ctx, "t", map[int32]bool{0: true, 1: true, 2: true}); ignored || len(added) != 0 {
		t.Errorf("none added: %v %v", added, ignored)
	}
	ctx.topicsToDelete["t"] = true
	if added, ignored := decidePartitionModifications(ctx, "t", map[int32]bool{0: true}); !ignored || len(added) != 0 {
		t.Errorf("being deleted: %v %v", added, ignored)
	}
	if _, ignored := decidePartitionModifications(ctx, "t", map[int32]bool{0: true, 1: true, 2: true}); ignored {
		t.Error("nothing added to a topic being deleted is not ignored")
	}
}
