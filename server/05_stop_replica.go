package server

// StopReplica, versions 0-4. Sent by the controller to take a replica off
// this broker, deleting its log when asked (topic deletion, reassignment);
// replica.Manager.StopReplica applies Kafka's leader-epoch fencing.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.StopReplica.Int16(), 0, 4, handleStopReplica) }

func handleStopReplica(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.StopReplicaRequest)
	resp := r.ResponseKind().(*kmsg.StopReplicaResponse)
	answer := func(topic string, partition int32, err error) {
		rp := kmsg.NewStopReplicaResponsePartition()
		rp.Topic, rp.Partition, rp.ErrorCode = topic, partition, errCode(err)
		resp.Partitions = append(resp.Partitions, rp)
	}
	// Only brokers send it: CLUSTER_ACTION on the cluster, else every
	// partition carries the error too (StopReplicaRequest.getErrorResponse).
	if !b.authorizeCluster(req, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		eachStopReplicaPartition(r, func(topic string, partition, _ int32, _ bool) {
			answer(topic, partition, kerr.ClusterAuthorizationFailed)
		})
		return protocol.Response{Msg: resp}
	}
	unlock, code := b.lockForController(r.ControllerID, r.ControllerEpoch, r.BrokerEpoch)
	if code != 0 {
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	defer unlock()
	eachStopReplicaPartition(r, func(topic string, partition, leaderEpoch int32, deleteLog bool) {
		answer(topic, partition, b.stopReplica(topic, partition, leaderEpoch, deleteLog))
	})
	b.rebuildTopics()
	return protocol.Response{Msg: resp}
}

// stopReplica removes one replica from this broker through the replica
// manager. The caller holds cluster.mu.
func (b *Broker) stopReplica(topic string, partition, leaderEpoch int32, deleteLog bool) error {
	p, err := b.replicas.StopReplica(topic, partition, leaderEpoch, deleteLog)
	if p != nil {
		switch topic {
		case offsetsTopic:
			b.groups.UnloadPartition(partition)
		case txnTopic:
			// StopReplica resigns whatever epoch was loaded.
			b.txns.UnloadPartition(partition, -1)
		}
	}
	return err
}

// eachStopReplicaPartition calls fn for every partition of the request in
// its version's layout; before v3 there is no leader epoch (-1) and one
// delete flag for all.
func eachStopReplicaPartition(r *kmsg.StopReplicaRequest, fn func(topic string, partition, leaderEpoch int32, deleteLog bool)) {
	for _, rt := range r.Topics {
		switch {
		case r.Version == 0:
			fn(rt.Topic, rt.Partition, -1, r.DeletePartitions)
		case r.Version <= 2:
			for _, p := range rt.Partitions {
				fn(rt.Topic, p, -1, r.DeletePartitions)
			}
		default:
			for _, ps := range rt.PartitionStates {
				fn(rt.Topic, ps.Partition, ps.LeaderEpoch, ps.Delete)
			}
		}
	}
}
