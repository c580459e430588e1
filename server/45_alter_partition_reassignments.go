package server

// AlterPartitionReassignments, version 0 (KIP-455). kafka-reassign-partitions
// --execute and --cancel send it to the controller; a partition whose
// replicas are null cancels its reassignment.
//
// Cluster mode: the controller starts or cancels the reassignments and
// answers per partition; other brokers answer a top-level NOT_CONTROLLER.
// Standalone, the broker is its own controller with one live broker: the
// only valid target is the current one (this broker), which completes at
// once; any other broker id is not alive (INVALID_REPLICA_ASSIGNMENT), and
// there is never a reassignment to cancel (NO_REASSIGNMENT_IN_PROGRESS).
// Checks and messages follow Kafka's KafkaController.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() {
	register(kmsg.AlterPartitionAssignments.Int16(), 0, 0, handleAlterPartitionReassignments)
}

func handleAlterPartitionReassignments(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	// Kafka collects the request into a map: a partition named twice is
	// answered once, with its last target.
	targets := map[TopicPartition][]int32{}
	var order []TopicPartition
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			tp := TopicPartition{t.Topic, p.Partition}
			if _, dup := targets[tp]; !dup {
				order = append(order, tp)
			}
			targets[tp] = p.Replicas
		}
	}
	switch {
	case !b.authorizeCluster(req, kmsg.ACLOperationAlter):
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, nullableString(clusterAuthorizationFailedMessage)
		return protocol.Response{Msg: resp}
	case !b.cluster.control.IsController():
		resp.ErrorCode, resp.ErrorMessage = kerr.NotController.Code, &kerr.NotController.Description
		return protocol.Response{Msg: resp}
	}
	timeout := requestTimeout(r.TimeoutMillis)
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		results, err := b.cluster.control.AlterPartitionReassignments(ctx, targets)
		if err != nil {
			resp.ErrorCode, resp.ErrorMessage = apiError(controllerCallError(err))
			return protocol.Response{Msg: resp}
		}
		fillAlterReassignments(resp, order, results)
		return protocol.Response{Msg: resp}
	}}
}

// fillAlterReassignments writes the results grouped by topic, in request
// order.
func fillAlterReassignments(resp *kmsg.AlterPartitionAssignmentsResponse, order []TopicPartition, results map[TopicPartition]error) {
	idx := map[string]int{}
	for _, tp := range order {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(resp.Topics)
			idx[tp.Topic] = i
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
		rp.Partition = tp.Partition
		err, ok := results[tp]
		if !ok {
			// The controller skipped it: it cannot have run.
			err = kerr.UnknownServerError
		}
		rp.ErrorCode, rp.ErrorMessage = apiError(err)
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
}
