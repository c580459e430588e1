package server

import (
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type reassignEntry struct {
	topic     string
	partition int32
	replicas  []int32 // nil: cancel
}

func alterReassignRequest(entries ...reassignEntry) *kmsg.AlterPartitionAssignmentsRequest {
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = 5000
	for _, e := range entries {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != e.topic {
			rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			rt.Topic = e.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = e.partition, e.replicas
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return req
}

// alterCodes flattens a response in answer order.
func alterCodes(resp *kmsg.AlterPartitionAssignmentsResponse) ([]TopicPartition, []string) {
	var tps []TopicPartition
	var codes []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			tps = append(tps, TopicPartition{t.Topic, p.Partition})
			codes = append(codes, errName(p.ErrorCode))
		}
	}
	return tps, codes
}

// Standalone, only broker 0 is alive: moving to itself is a no-op that
// succeeds, any other broker id is refused, and nothing can be cancelled.
func TestAlterPartitionReassignmentsStandalone(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "orders", 2, nil)
	cases := []struct {
		entry reassignEntry
		want  string
	}{
		{reassignEntry{"orders", 0, []int32{0}}, "NONE"},
		{reassignEntry{"orders", 1, []int32{1}}, "INVALID_REPLICA_ASSIGNMENT"},
		{reassignEntry{"orders", 1, []int32{0, 2}}, "INVALID_REPLICA_ASSIGNMENT"},
		{reassignEntry{"orders", 1, []int32{0, 0}}, "INVALID_REPLICA_ASSIGNMENT"},
		{reassignEntry{"orders", 1, []int32{}}, "INVALID_REPLICA_ASSIGNMENT"},
		{reassignEntry{"orders", 1, []int32{-1}}, "INVALID_REPLICA_ASSIGNMENT"},
		{reassignEntry{"orders", 1, nil}, "NO_REASSIGNMENT_IN_PROGRESS"},
		{reassignEntry{"orders", 5, []int32{0}}, "UNKNOWN_TOPIC_OR_PARTITION"},
		{reassignEntry{"nosuch", 0, []int32{0}}, "UNKNOWN_TOPIC_OR_PARTITION"},
		// Kafka checks the replicas before the partition's existence.
		{reassignEntry{"nosuch", 0, []int32{3}}, "INVALID_REPLICA_ASSIGNMENT"},
		{reassignEntry{"nosuch", 0, nil}, "NO_REASSIGNMENT_IN_PROGRESS"},
	}
	for _, c := range cases {
		resp := request[*kmsg.AlterPartitionAssignmentsResponse](t, ab.cl, alterReassignRequest(c.entry))
		if resp.ErrorCode != 0 {
			t.Fatalf("%v: top-level %s", c.entry, errName(resp.ErrorCode))
		}
		tps, codes := alterCodes(resp)
		if len(codes) != 1 || tps[0] != (TopicPartition{c.entry.topic, c.entry.partition}) || codes[0] != c.want {
			t.Errorf("%v: got %v %v, want %s", c.entry, tps, codes, c.want)
			continue
		}
		if msg := resp.Topics[0].Partitions[0].ErrorMessage; c.want != "NONE" && (msg == nil || *msg == "") {
			t.Errorf("%v: no error message", c.entry)
		}
	}

	// Several partitions in one request are answered in request order,
	// grouped by topic.
	resp := request[*kmsg.AlterPartitionAssignmentsResponse](t, ab.cl, alterReassignRequest(
		reassignEntry{"orders", 1, []int32{0}},
		reassignEntry{"orders", 0, []int32{7}},
		reassignEntry{"other", 0, nil},
	))
	tps, codes := alterCodes(resp)
	wantTPs := []TopicPartition{{"orders", 1}, {"orders", 0}, {"other", 0}}
	wantCodes := []string{"NONE", "INVALID_REPLICA_ASSIGNMENT", "NO_REASSIGNMENT_IN_PROGRESS"}
	if !slices.Equal(tps, wantTPs) || !slices.Equal(codes, wantCodes) || len(resp.Topics) != 2 {
		t.Errorf("got %v %v (%d topics), want %v %v", tps, codes, len(resp.Topics), wantTPs, wantCodes)
	}

	// kadm's view of the same.
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("orders", 0, []int32{0})
	res, err := ab.adm.AlterPartitionAssignments(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if r := res["orders"][0]; r.Err != nil {
		t.Errorf("kadm reassign to self: %v", r.Err)
	}
}

func TestAlterPartitionReassignmentsCluster(t *testing.T) {
	states := map[string][]PartitionState{"orders": {{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}}}

	b := clusterBroker(&fakeControl{}, states)
	resp := call(t, b, handleAlterPartitionReassignments, alterReassignRequest(reassignEntry{"orders", 0, []int32{2, 3}})).(*kmsg.AlterPartitionAssignmentsResponse)
	if resp.ErrorCode != kerr.NotController.Code || len(resp.Topics) != 0 {
		t.Errorf("not controller: %s with %d topics", errName(resp.ErrorCode), len(resp.Topics))
	}

	f := &fakeControl{controller: true}
	b = clusterBroker(f, states)
	var got map[TopicPartition][]int32
	f.reassign = func(m map[TopicPartition][]int32) (map[TopicPartition]error, error) {
		got = m
		return map[TopicPartition]error{
			{"orders", 0}: nil,
			{"orders", 1}: kerr.NoReassignmentInProgress,
		}, nil
	}
	resp = call(t, b, handleAlterPartitionReassignments, alterReassignRequest(
		reassignEntry{"orders", 0, []int32{2, 3}},
		reassignEntry{"orders", 1, nil},
	)).(*kmsg.AlterPartitionAssignmentsResponse)
	if !slices.Equal(got[TopicPartition{"orders", 0}], []int32{2, 3}) {
		t.Errorf("controller asked for %v", got)
	}
	if target, ok := got[TopicPartition{"orders", 1}]; !ok || target != nil {
		t.Errorf("cancel reached the controller as %v (present %v)", target, ok)
	}
	if _, codes := alterCodes(resp); !slices.Equal(codes, []string{"NONE", "NO_REASSIGNMENT_IN_PROGRESS"}) {
		t.Errorf("codes %v", codes)
	}

	f.reassign = func(map[TopicPartition][]int32) (map[TopicPartition]error, error) {
		return nil, errors.New("zk: session expired")
	}
	resp = call(t, b, handleAlterPartitionReassignments, alterReassignRequest(reassignEntry{"orders", 0, []int32{2}})).(*kmsg.AlterPartitionAssignmentsResponse)
	if resp.ErrorCode != kerr.UnknownServerError.Code || resp.ErrorMessage == nil {
		t.Errorf("controller failure: %s %v", errName(resp.ErrorCode), resp.ErrorMessage)
	}
}
