package server

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/replica"
)

// A leader cut off from the other brokers but not from ZooKeeper or its
// clients never hears that the controller elected another leader in its
// place: the controller's LeaderAndIsr cannot reach it. Kafka's leader
// keeps the partition, and every acks=all write it takes waits for
// followers that no longer fetch from it until the request times out, so
// clients keep writing to it instead of to the new leader. Here a leader
// whose ISR followers have gone quiet reads the partition's state znode;
// when ZooKeeper names a newer leader epoch with another leader, it
// applies that state as the LeaderAndIsr it missed would have: it becomes
// a follower, its waiting writes are answered NOT_LEADER_OR_FOLLOWER with
// the new leader (KIP-951), and Metadata names the new leader. The epoch
// fences make this safe: the state znode is the controller's decision.

// partitionStateReader reads a partition's state znode and its version.
type partitionStateReader interface {
	PartitionState(topic string, partition int32) (kafkazk.PartitionStateZNode, int32, error)
}

// checkDeposedLeaders runs with the leaders' ISR check, as often.
func (b *Broker) checkDeposedLeaders(states partitionStateReader) {
	for _, p := range b.replicas.Partitions() {
		if !p.HasSilentIsrFollower() {
			continue
		}
		s, version, err := states.PartitionState(p.Topic, p.Index)
		if err != nil {
			// Cut off from ZooKeeper too: its session ends the leadership.
			continue
		}
		if s.Leader == b.cfg.BrokerID || s.LeaderEpoch <= p.LeaderEpoch() {
			continue
		}
		b.applyDeposition(p, s, version)
	}
}

// applyDeposition makes this broker a follower of the leader the state
// znode names, and its metadata cache say so.
func (b *Broker) applyDeposition(p *replica.Partition, s kafkazk.PartitionStateZNode, version int32) {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	ct := c.cache[p.Topic]
	if ct == nil {
		return
	}
	cached, ok := ct.States[p.Index]
	if !ok || s.LeaderEpoch <= p.LeaderEpoch() {
		return // a LeaderAndIsr came meanwhile
	}
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Topic, ps.Partition = p.Topic, p.Index
	ps.ControllerEpoch, ps.Leader, ps.LeaderEpoch = s.ControllerEpoch, s.Leader, s.LeaderEpoch
	ps.ISR, ps.ZKVersion, ps.Replicas = s.ISR, version, cached.Replicas
	b.logger.Warn("deposed: ZooKeeper names another leader that the controller could not tell this broker about; following it",
		"topic", p.Topic, "partition", p.Index, "leader", s.Leader, "leader_epoch", s.LeaderEpoch, "isr", s.ISR)
	if err := b.becomeLeaderOrFollower(p.Topic, p.TopicID, ps, nil); err != nil {
		b.logger.Warn("cannot follow the new leader", "topic", p.Topic, "partition", p.Index, "err", err)
		return
	}
	if s.LeaderEpoch > cached.LeaderEpoch {
		ct.States[p.Index] = partitionStateOf(s.Leader, s.LeaderEpoch, version, cached.Replicas, s.ISR, cached.Offline)
	}
	b.rebuildTopics()
}
