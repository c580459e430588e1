package server

// ListPartitionReassignments, version 0 (KIP-455). kafka-reassign-partitions
// --list and --verify, and kafka-topics --describe, send it to the
// controller. Null topics list every ongoing reassignment; named
// partitions that are unknown or not being reassigned are left out, as
// Kafka does.
//
// Cluster mode: the controller answers; other brokers answer a top-level
// NOT_CONTROLLER. Standalone there is never a reassignment in progress, so
// the answer is empty.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() {
	register(kmsg.ListPartitionReassignments.Int16(), 0, 0, handleListPartitionReassignments)
}

func handleListPartitionReassignments(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !b.authorizeCluster(req, kmsg.ACLOperationDescribe) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, nullableString(clusterAuthorizationFailedMessage)
		return protocol.Response{Msg: resp}
	}
	if !b.cluster.control.IsController() {
		resp.ErrorCode, resp.ErrorMessage = kerr.NotController.Code, &kerr.NotController.Description
		return protocol.Response{Msg: resp}
	}
	var partitions []TopicPartition
	if r.Topics != nil {
		partitions = []TopicPartition{}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				partitions = append(partitions, TopicPartition{t.Topic, p})
			}
		}
	}
	timeout := requestTimeout(r.TimeoutMillis)
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		ongoing, err := b.cluster.control.ListPartitionReassignments(ctx, partitions)
		if err != nil {
			resp.ErrorCode, resp.ErrorMessage = apiError(controllerCallError(err))
			return protocol.Response{Msg: resp}
		}
		fillListReassignments(resp, ongoing)
		return protocol.Response{Msg: resp}
	}}
}

// fillListReassignments writes the reassignments grouped by topic, in name
// and partition order.
func fillListReassignments(resp *kmsg.ListPartitionReassignmentsResponse, ongoing map[TopicPartition]PartitionReassignment) {
	for _, tp := range sortedPartitions(ongoing) {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		ra := ongoing[tp]
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition = tp.Partition
		rp.Replicas = nonNil(ra.Replicas)
		rp.AddingReplicas = nonNil(ra.AddingReplicas)
		rp.RemovingReplicas = nonNil(ra.RemovingReplicas)
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
}

// nonNil keeps a non-nullable array from going out as null.
func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}
