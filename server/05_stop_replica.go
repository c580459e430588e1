package server

// StopReplica, versions 0-4. Sent by the controller (cluster mode only) to
// take a replica off this broker, deleting its log when asked (topic
// deletion, reassignment). Per partition (ReplicaManager.stopReplicas): a leader epoch
// at least the current one, or -1 / -2 (unknown / topic being deleted),
// stops the replica; an older one is FENCED_LEADER_EPOCH.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

func init() { register(kmsg.StopReplica.Int16(), 0, 4, handleStopReplica) }

func handleStopReplica(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.StopReplicaRequest)
	resp := r.ResponseKind().(*kmsg.StopReplicaResponse)
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

// stopReplica removes one replica from this broker. The caller holds
// cluster.mu.
func (b *Broker) stopReplica(topic string, partition, leaderEpoch int32, deleteLog bool) error {
	c := b.cluster
	tp := TopicPartition{topic, partition}
	if p := c.hosted[tp]; p != nil {
		if leaderEpoch >= 0 && leaderEpoch < p.LeaderEpoch() {
			return kerr.FencedLeaderEpoch
		}
		// Waiting fetches and produces see the partition go away.
		c.fetchers.RemovePartitions(replica.TopicPartition{Topic: topic, Partition: partition})
		p.Stop()
		delete(c.hosted, tp)
		if topic == offsetsTopic {
			b.groups.UnloadPartition(partition)
		}
	}
	if deleteLog {
		if _, ok := b.logs.Get(topic, partition); ok {
			if err := b.logs.Delete(topic, partition); err != nil {
				b.logger.Error("cannot delete a partition log", "topic", topic, "partition", partition, "err", err)
				return kerr.KafkaStorageError
			}
		}
	}
	return nil
}
