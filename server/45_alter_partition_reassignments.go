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
	"slices"

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
	case b.cluster == nil:
		results := make(map[TopicPartition]error, len(targets))
		for tp, target := range targets {
			results[tp] = b.standaloneReassignment(tp, target)
		}
		fillAlterReassignments(resp, order, results)
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

// standaloneReassignment checks one target in Kafka's order: the replica
// list, then cancellation, then the partition's existence.
func (b *Broker) standaloneReassignment(tp TopicPartition, target []int32) error {
	st, known := b.partitionState(tp)
	if target != nil {
		if err := b.validateReassignmentReplicas(st.Replicas, target); err != nil {
			return err
		}
	}
	switch {
	case target == nil:
		return kerr.NoReassignmentInProgress
	case !known:
		return newTopicError(kerr.UnknownTopicOrPartition, "The partition does not exist.")
	}
	// The target is the current replica set: Kafka's reassignment
	// completes at once.
	return nil
}

// validateReassignmentReplicas is Kafka's validateReplicas with this
// broker the only live one.
func (b *Broker) validateReassignmentReplicas(current, target []int32) error {
	seen := map[int32]bool{}
	for _, r := range target {
		seen[r] = true
	}
	switch {
	case len(target) == 0:
		return newTopicError(kerr.InvalidReplicaAssignment, "Empty replica list specified in partition reassignment.")
	case len(seen) != len(target):
		return newTopicError(kerr.InvalidReplicaAssignment, "Duplicate replica ids in partition reassignment replica list: %v", target)
	case slices.ContainsFunc(target, func(r int32) bool { return r < 0 }):
		return newTopicError(kerr.InvalidReplicaAssignment, "Invalid broker id in replica list: %v", target)
	}
	var adding []int32
	for _, r := range target {
		if !slices.Contains(current, r) {
			adding = append(adding, r)
		}
	}
	for _, r := range adding {
		if !b.brokerRegistered(r) {
			return newTopicError(kerr.InvalidReplicaAssignment,
				"Replica assignment has brokers that are not alive. Replica list: %v, live broker list: [%d]", adding, b.cfg.BrokerID)
		}
	}
	return nil
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
