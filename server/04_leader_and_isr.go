package server

// LeaderAndIsr, versions 0-7. Sent by the controller to the replicas of
// partitions whose leader or ISR it decided; the replica manager applies
// each partition's state (replica.Manager.BecomeLeaderOrFollower says
// how). Followers are handed to the fetcher for their leader's
// inter-broker endpoint.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

func init() { register(kmsg.LeaderAndISR.Int16(), 0, 7, handleLeaderAndIsr) }

func handleLeaderAndIsr(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.LeaderAndISRRequest)
	resp := r.ResponseKind().(*kmsg.LeaderAndISRResponse)
	answer := func(topic string, id [16]byte, partition int32, err error) {
		rp := kmsg.NewLeaderAndISRResponseTopicPartition()
		rp.Partition, rp.ErrorCode = partition, errCode(err)
		if r.Version < 5 {
			rp.Topic = topic
			resp.Partitions = append(resp.Partitions, rp)
			return
		}
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].TopicID != id {
			rt := kmsg.NewLeaderAndISRResponseTopic()
			rt.TopicID = id
			resp.Topics = append(resp.Topics, rt)
		}
		last := &resp.Topics[len(resp.Topics)-1]
		last.Partitions = append(last.Partitions, rp)
	}
	// Only brokers send it: CLUSTER_ACTION on the cluster, else every
	// partition carries the error too (LeaderAndIsrRequest.getErrorResponse).
	if !b.authorizeCluster(req, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		for _, ps := range r.PartitionStates {
			answer(ps.Topic, [16]byte{}, ps.Partition, kerr.ClusterAuthorizationFailed)
		}
		for _, ts := range r.TopicStates {
			for _, ps := range ts.PartitionStates {
				answer(ts.Topic, ts.TopicID, ps.Partition, kerr.ClusterAuthorizationFailed)
			}
		}
		return protocol.Response{Msg: resp}
	}
	unlock, code := b.lockForController(r.ControllerID, r.ControllerEpoch, r.BrokerEpoch)
	if code != 0 {
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	defer unlock()
	for _, ps := range r.PartitionStates {
		answer(ps.Topic, [16]byte{}, ps.Partition, b.becomeLeaderOrFollower(ps.Topic, [16]byte{}, ps, r.LiveLeaders))
	}
	for _, ts := range r.TopicStates {
		for _, ps := range ts.PartitionStates {
			answer(ts.Topic, ts.TopicID, ps.Partition, b.becomeLeaderOrFollower(ts.Topic, ts.TopicID, ps, r.LiveLeaders))
		}
	}
	b.rebuildTopics()
	return protocol.Response{Msg: resp}
}

// becomeLeaderOrFollower applies one partition state through the replica
// manager and moves the group coordinator with __consumer_offsets
// leadership. The caller holds cluster.mu.
func (b *Broker) becomeLeaderOrFollower(topic string, id [16]byte, ps kmsg.LeaderAndISRRequestTopicPartition, live []kmsg.LeaderAndISRRequestLiveLeader) error {
	_, leads, err := b.replicas.BecomeLeaderOrFollower(replica.Role{
		LeaderAndIsr: replica.LeaderAndIsr{
			ControllerEpoch: ps.ControllerEpoch,
			Leader:          ps.Leader,
			LeaderEpoch:     ps.LeaderEpoch,
			Isr:             ps.ISR,
			PartitionEpoch:  ps.ZKVersion,
			Replicas:        ps.Replicas,
		},
		Topic:      topic,
		TopicID:    id,
		Partition:  ps.Partition,
		LeaderAddr: b.leaderAddr(ps.Leader, live),
	})
	if err == nil {
		switch topic {
		case offsetsTopic:
			b.offsetsLeadershipChanged(ps.Partition, leads)
		case txnTopic:
			b.txnLeadershipChanged(ps.Partition, ps.LeaderEpoch, leads)
		}
	}
	return err
}

// offsetsLeadershipChanged moves the group coordinator for the groups of
// one __consumer_offsets partition to or from this broker.
func (b *Broker) offsetsLeadershipChanged(partition int32, leads bool) {
	if !leads {
		b.groups.UnloadPartition(partition)
		return
	}
	// Loading replays the partition, which takes the cluster lock this
	// handler holds: it runs in the background, as Kafka's does, and the
	// coordinator answers COORDINATOR_LOAD_IN_PROGRESS meanwhile.
	go func() {
		if err := b.groups.LoadPartition(partition); err != nil {
			b.logger.Error("cannot load group metadata", "partition", partition, "err", err)
		}
	}()
}
