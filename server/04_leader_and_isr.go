package server

// LeaderAndIsr, versions 0-7. Sent by the controller (cluster mode only)
// to the replicas of partitions whose leader or ISR it decided. Per
// partition, following Kafka's ReplicaManager.becomeLeaderOrFollower
// (in ZooKeeper mode): a newer leader epoch is applied — this broker becomes
// leader when it is named, else follower; an older or equal one is
// refused with STALE_CONTROLLER_EPOCH; a broker not among the replicas
// answers UNKNOWN_TOPIC_OR_PARTITION; a log that cannot be opened is
// KAFKA_STORAGE_ERROR.
//
// A partition this broker now follows is handed to the fetcher manager
// (replica/fetcher), which truncates it and fetches from the new leader;
// every partition leaves the fetchers before its role changes.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

func init() { register(kmsg.LeaderAndISR.Int16(), 0, 7, handleLeaderAndIsr) }

func handleLeaderAndIsr(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.LeaderAndISRRequest)
	resp := r.ResponseKind().(*kmsg.LeaderAndISRResponse)
	unlock, code := b.lockForController(r.ControllerID, r.ControllerEpoch, r.BrokerEpoch)
	if code != 0 {
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	defer unlock()
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

// becomeLeaderOrFollower applies one partition state. The caller holds
// cluster.mu.
func (b *Broker) becomeLeaderOrFollower(topic string, id [16]byte, ps kmsg.LeaderAndISRRequestTopicPartition, live []kmsg.LeaderAndISRRequestLiveLeader) error {
	c := b.cluster
	self := b.cfg.BrokerID
	if !slices.Contains(ps.Replicas, self) {
		return kerr.UnknownTopicOrPartition
	}
	tp := TopicPartition{topic, ps.Partition}
	p := c.hosted[tp]
	if p != nil && ps.LeaderEpoch <= p.LeaderEpoch() {
		return kerr.StaleControllerEpoch
	}
	leads := ps.Leader == self
	if p == nil {
		configs := b.clusterTopicConfigs(topic)
		l, err := b.logs.GetOrCreate(topic, ps.Partition, id, b.cfg.TopicLogConfig(configs))
		if err != nil {
			b.logger.Error("cannot open a partition log", "topic", topic, "partition", ps.Partition, "err", err)
			return kerr.KafkaStorageError
		}
		hw := c.checkpointedHW[tp] // 0 when never checkpointed; New clamps it to the log
		p = replica.New(topic, ps.Partition, id, l, hw, b.partitionOptions(configs))
		c.hosted[tp] = p
	}
	// While a partition is in a fetcher the fetcher is its log's only
	// writer: take it out before any change of role.
	b.cluster.fetchers.RemovePartitions(replica.TopicPartition{Topic: topic, Partition: ps.Partition})
	var applied bool
	if leads {
		applied = p.BecomeLeader(replica.LeaderAndIsr{
			ControllerEpoch: ps.ControllerEpoch,
			Leader:          ps.Leader,
			LeaderEpoch:     ps.LeaderEpoch,
			Isr:             ps.ISR,
			PartitionEpoch:  ps.ZKVersion,
			Replicas:        ps.Replicas,
		})
	} else {
		applied = p.BecomeFollower(ps.Leader, ps.LeaderEpoch)
	}
	if !applied {
		if !leads && p.LeaderID() == ps.Leader {
			// Still following the same leader: keep fetching.
			b.startFollowing(p, ps.Leader, live)
		}
		return kerr.StaleControllerEpoch
	}
	if !leads {
		b.startFollowing(p, ps.Leader, live)
	}
	b.logger.Info("partition state applied", "topic", topic, "partition", ps.Partition,
		"leader", ps.Leader, "leader_epoch", ps.LeaderEpoch, "isr", ps.ISR, "role", map[bool]string{true: "leader", false: "follower"}[leads])
	if topic == offsetsTopic {
		b.offsetsLeadershipChanged(ps.Partition, leads)
	}
	return nil
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

// startFollowing hands a follower replica to the fetcher for its leader;
// with the leader unknown or offline it waits for the next LeaderAndIsr.
func (b *Broker) startFollowing(p *replica.Partition, leader int32, live []kmsg.LeaderAndISRRequestLiveLeader) {
	if leader < 0 {
		return
	}
	ep, ok := b.leaderEndpoint(leader, live)
	if !ok {
		b.logger.Warn("no endpoint for the leader; not fetching", "topic", p.Topic, "partition", p.Index, "leader", leader)
		return
	}
	b.cluster.fetchers.AddPartitions(ep, followerReplica{p})
}
