package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDecideDeletionMarkers(t *testing.T) {
	ctx := decideContext([]int32{1}, map[kafkazk.TopicPartition][]int32{{Topic: "a", Partition: 0}: {1}, {Topic: "b", Partition: 0}: {1}})
	toDelete, unknown := decideDeletionMarkers(ctx, []string{"b", "ghost", "a"})
	if !slices.Equal(toDelete, []string{"b", "a"}) || !slices.Equal(unknown, []string{"ghost"}) {
		t.Errorf("to delete %v unknown %v", toDelete, unknown)
	}
	if len(ctx.topicsToDelete) != 0 {
		t.Error("decision changed the context")
	}
}

// Three topics queued for deletion with broker 3 dead: "fresh" starts (its
// partitions' UpdateMetadata says leader -2, StopReplica with delete to its
// live replicas, the dead one stays pending), "moving" waits for its
// reassignment, "half" resends only what is unsent, and "empty" has
// nothing pending and is done.
func TestDecideResumeDeletions(t *testing.T) {
	f0, f1, m0, h0 := kafkazk.TopicPartition{Topic: "fresh", Partition: 0}, kafkazk.TopicPartition{Topic: "fresh", Partition: 1},
		kafkazk.TopicPartition{Topic: "moving", Partition: 0}, kafkazk.TopicPartition{Topic: "half", Partition: 0}
	ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{f0: {1, 3}, f1: {2, 1}, h0: {1, 2}, {Topic: "empty", Partition: 0}: {1}})
	ctx.setAssignment(m0, replicaAssignment{Replicas: []int32{1, 2}, Adding: []int32{2}})
	for _, tp := range []kafkazk.TopicPartition{f0, f1, m0, h0} {
		ctx.leadership[tp] = leadership(1, 4, []int32{1}, 2)
		ctx.states[tp] = partitionOnline
	}
	for _, topic := range []string{"fresh", "moving", "half", "empty"} {
		ctx.topicsToDelete[topic] = true
	}
	ctx.deletionPending["half"] = map[topicPartitionReplica]bool{{h0, 1}: true, {h0, 2}: false}
	ctx.deletionPending["empty"] = map[topicPartitionReplica]bool{}

	d := decideResumeDeletions(ctx)
	if len(d.started) != 1 || d.started[0].topic != "fresh" || !slices.Equal(d.started[0].partitions, []kafkazk.TopicPartition{f0, f1}) ||
		len(d.started[0].pending) != 4 || d.started[0].pending[topicPartitionReplica{f0, 3}] {
		t.Fatalf("started %+v", d.started)
	}
	wantSent := []topicPartitionReplica{{f0, 1}, {f1, 1}, {f1, 2}, {h0, 2}}
	if !slices.Equal(d.sent, wantSent) {
		t.Errorf("sent %v, want %v", d.sent, wantSent)
	}
	if !slices.Equal(d.done, []string{"empty"}) {
		t.Errorf("done %v", d.done)
	}
	if _, ok := ctx.deletionPending["fresh"]; ok || ctx.states[f0] != partitionOnline || ctx.deletionPending["half"][topicPartitionReplica{h0, 2}] {
		t.Error("decision changed the context")
	}

	sent := sentOf(d.requests)
	stops := controllertest.StopReplicas(sent)
	if len(stops) != 2 || len(stops[1]) != 2 || !stops[1][f0] || !stops[1][f1] || len(stops[2]) != 2 || !stops[2][f1] || !stops[2][h0] {
		t.Errorf("StopReplicas %v", stops)
	}
	for _, s := range sent {
		if r, ok := s.Req.(*kmsg.StopReplicaRequest); ok {
			for _, tt := range r.Topics {
				for _, p := range tt.PartitionStates {
					if p.LeaderEpoch != leaderEpochDuringDelete {
						t.Errorf("StopReplica to %d for %s-%d at epoch %d", s.Broker, tt.Topic, p.Partition, p.LeaderEpoch)
					}
				}
			}
		}
	}
	parts, _ := controllertest.UpdateMetadatas(sent)
	for _, b := range []int32{1, 2} {
		if len(parts[b]) != 2 || parts[b][f0].Leader != leaderDuringDelete || parts[b][f1].Leader != leaderDuringDelete {
			t.Errorf("UpdateMetadata to %d: %v", b, parts[b])
		}
	}
}

func stopReplicaExchange(deleting bool, tps ...kafkazk.TopicPartition) (*kmsg.StopReplicaRequest, *kmsg.StopReplicaResponse) {
	req := kmsg.NewPtrStopReplicaRequest()
	resp := kmsg.NewPtrStopReplicaResponse()
	for _, tp := range tps {
		tr := kmsg.NewStopReplicaRequestTopic()
		tr.Topic = tp.Topic
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition = tp.Partition
		ps.Delete = deleting
		tr.PartitionStates = append(tr.PartitionStates, ps)
		req.Topics = append(req.Topics, tr)
		rp := kmsg.NewStopReplicaResponsePartition()
		rp.Topic, rp.Partition = tp.Topic, tp.Partition
		resp.Partitions = append(resp.Partitions, rp)
	}
	return req, resp
}

// Broker 2 answers StopReplica: a confirmed replica leaves the pending
// set, a failed one goes back to unsent, a topic with nothing left is
// complete; a stop without delete, or of a topic not being deleted,
// changes nothing; a failed request sends every pending replica again.
func TestDecideStopReplicaResponse(t *testing.T) {
	a0, a1, b0, c0 := kafkazk.TopicPartition{Topic: "a", Partition: 0}, kafkazk.TopicPartition{Topic: "a", Partition: 1},
		kafkazk.TopicPartition{Topic: "b", Partition: 0}, kafkazk.TopicPartition{Topic: "c", Partition: 0}
	ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{a0: {2}, a1: {1, 2}, b0: {2}, c0: {2}})
	ctx.deletionPending["a"] = map[topicPartitionReplica]bool{{a0, 2}: true, {a1, 1}: true, {a1, 2}: true}
	ctx.deletionPending["b"] = map[topicPartitionReplica]bool{{b0, 2}: true}

	req, resp := stopReplicaExchange(true, a0, a1, b0, c0)
	resp.Partitions[1].ErrorCode = kerr.KafkaStorageError.Code
	o := decideStopReplicaResponse(ctx, 2, req, resp)
	want := []pendingChange{{replica: topicPartitionReplica{a0, 2}, confirmed: true}, {replica: topicPartitionReplica{a1, 2}, err: kerr.KafkaStorageError},
		{replica: topicPartitionReplica{b0, 2}, confirmed: true}}
	if o.requestErr != nil || len(o.changes) != len(want) {
		t.Fatalf("outcome %+v", o)
	}
	for i, ch := range o.changes {
		if ch.replica != want[i].replica || ch.confirmed != want[i].confirmed || !errors.Is(ch.err, want[i].err) {
			t.Errorf("change %d: %+v, want %+v", i, ch, want[i])
		}
	}
	if !slices.Equal(o.complete, []string{"b"}) {
		t.Errorf("complete %v", o.complete)
	}
	if len(ctx.deletionPending["a"]) != 3 || len(ctx.deletionPending["b"]) != 1 {
		t.Error("decision changed the context")
	}

	req, resp = stopReplicaExchange(false, a0)
	if o := decideStopReplicaResponse(ctx, 2, req, resp); len(o.changes) != 0 || len(o.complete) != 0 {
		t.Errorf("stop without delete: %+v", o)
	}

	req, resp = stopReplicaExchange(true, a1, b0, c0)
	resp.ErrorCode = kerr.NotController.Code
	o = decideStopReplicaResponse(ctx, 2, req, resp)
	if !errors.Is(o.requestErr, kerr.NotController) || len(o.complete) != 0 || len(o.changes) != 2 ||
		o.changes[0].replica != (topicPartitionReplica{a1, 2}) || o.changes[1].replica != (topicPartitionReplica{b0, 2}) || o.changes[0].confirmed || o.changes[1].confirmed {
		t.Errorf("failed request: %+v", o)
	}
}
