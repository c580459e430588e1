package server

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/zkbroker"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func listReassignRequest(topics map[string][]int32) *kmsg.ListPartitionReassignmentsRequest {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = 5000
	if topics != nil {
		req.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{}
		for name, ps := range topics {
			rt := kmsg.NewListPartitionReassignmentsRequestTopic()
			rt.Topic, rt.Partitions = name, ps
			req.Topics = append(req.Topics, rt)
		}
	}
	return req
}

// Standalone nothing is ever being reassigned; a partition that is named
// but not reassigned (or unknown) is left out, not an error.
func TestListPartitionReassignmentsStandalone(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "orders", 1, nil)
	for _, topics := range []map[string][]int32{nil, {"orders": {0}, "nosuch": {3}}} {
		resp := request[*kmsg.ListPartitionReassignmentsResponse](t, ab.cl, listReassignRequest(topics))
		if resp.ErrorCode != 0 || len(resp.Topics) != 0 {
			t.Errorf("%v: %s, %d topics", topics, errName(resp.ErrorCode), len(resp.Topics))
		}
	}
	res, err := ab.adm.ListPartitionReassignments(testCtx(t), kadm.TopicsSet{"orders": {0: {}}})
	if err != nil || len(res) != 0 {
		t.Errorf("kadm: %v %v", res, err)
	}
}

func TestListPartitionReassignmentsCluster(t *testing.T) {
	b := clusterBroker(&fakeControl{}, nil)
	resp := call(t, b, handleListPartitionReassignments, listReassignRequest(nil)).(*kmsg.ListPartitionReassignmentsResponse)
	if resp.ErrorCode != kerr.NotController.Code {
		t.Errorf("not controller: %s", errName(resp.ErrorCode))
	}

	f := &fakeControl{controller: true}
	b = clusterBroker(f, nil)
	var asked []TopicPartition
	f.list = func(tps []TopicPartition) (map[TopicPartition]PartitionReassignment, error) {
		asked = tps
		return map[TopicPartition]PartitionReassignment{
			{"orders", 1}: {Replicas: []int32{3, 1, 2}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{2}},
			{"audit", 0}:  {Replicas: []int32{1, 2}},
		}, nil
	}
	resp = call(t, b, handleListPartitionReassignments, listReassignRequest(nil)).(*kmsg.ListPartitionReassignmentsResponse)
	if asked != nil {
		t.Errorf("null topics reached the controller as %v", asked)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 2 || resp.Topics[0].Topic != "audit" || resp.Topics[1].Topic != "orders" {
		t.Fatalf("got %+v", resp)
	}
	if p := resp.Topics[0].Partitions[0]; p.AddingReplicas == nil || p.RemovingReplicas == nil {
		t.Errorf("empty replica lists must not be null: %+v", p)
	}
	p := resp.Topics[1].Partitions[0]
	if p.Partition != 1 || !slices.Equal(p.Replicas, []int32{3, 1, 2}) || !slices.Equal(p.AddingReplicas, []int32{3}) || !slices.Equal(p.RemovingReplicas, []int32{2}) {
		t.Errorf("orders-1: %+v", p)
	}
	// The response survives the wire with its arrays.
	resp.SetVersion(0)
	round := kmsg.NewPtrListPartitionReassignmentsResponse()
	if err := round.ReadFrom(resp.AppendTo(nil)); err != nil || len(round.Topics) != 2 {
		t.Errorf("round trip: %v %+v", err, round)
	}

	resp = call(t, b, handleListPartitionReassignments, listReassignRequest(map[string][]int32{"orders": {1, 4}})).(*kmsg.ListPartitionReassignmentsResponse)
	if resp.ErrorCode != 0 {
		t.Errorf("named partitions: %s", errName(resp.ErrorCode))
	}
	if !slices.Equal(asked, []TopicPartition{{"orders", 1}, {"orders", 4}}) {
		t.Errorf("controller asked for %v", asked)
	}

	f.list = func([]TopicPartition) (map[TopicPartition]PartitionReassignment, error) {
		return nil, zkbroker.ErrNotConnected
	}
	resp = call(t, b, handleListPartitionReassignments, listReassignRequest(nil)).(*kmsg.ListPartitionReassignmentsResponse)
	if resp.ErrorCode != kerr.NotController.Code {
		t.Errorf("after controller loss: %s", errName(resp.ErrorCode))
	}
	f.list = func([]TopicPartition) (map[TopicPartition]PartitionReassignment, error) {
		return nil, errors.New("boom")
	}
	resp = call(t, b, handleListPartitionReassignments, listReassignRequest(nil)).(*kmsg.ListPartitionReassignmentsResponse)
	if resp.ErrorCode != kerr.UnknownServerError.Code {
		t.Errorf("controller failure: %s", errName(resp.ErrorCode))
	}
}
