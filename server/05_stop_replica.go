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
	// Only brokers send it: CLUSTER_ACTION on the cluster.
	if !b.authorizeCluster(req, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Response{Msg: resp}
	}
	unlock, code := b.lockForController(r.ControllerID, r.ControllerEpoch, r.BrokerEpoch)
	if code != 0 {
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	defer unlock()
	answer := func(topic string, partition int32, err error) {
		rp := kmsg.NewStopReplicaResponsePartition()
		rp.Topic, rp.Partition, rp.ErrorCode = topic, partition, errCode(err)
		resp.Partitions = append(resp.Partitions, rp)
	}
	for _, rt := range r.Topics {
		switch {
		case r.Version == 0:
			answer(rt.Topic, rt.Partition, b.stopReplica(rt.Topic, rt.Partition, -1, r.DeletePartitions))
		case r.Version <= 2:
			for _, p := range rt.Partitions {
				answer(rt.Topic, p, b.stopReplica(rt.Topic, p, -1, r.DeletePartitions))
			}
		default:
			for _, ps := range rt.PartitionStates {
				answer(rt.Topic, ps.Partition, b.stopReplica(rt.Topic, ps.Partition, ps.LeaderEpoch, ps.Delete))
			}
		}
	}
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
