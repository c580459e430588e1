package server

import (
	"time"

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

// A leader cut off from ZooKeeper cannot read the state znode either.
// Once it has not heard from ZooKeeper for the session timeout, its
// session has expired (the server has not heard from it for as long), so
// the controller has moved the leadership of every partition it led where
// another in-sync replica was alive: the ISR followers that went quiet are
// following that leader now. It suspends those leaderships
// (replica.Partition.SuspendLeadership): writes are refused with
// NOT_LEADER_OR_FOLLOWER at once instead of timing out, and Metadata names
// no leader, so clients ask another broker, which knows the new one.
// Kafka's leader keeps answering as leader until its session is back.
// The first state znode read that gets through ends the suspension: with
// a newer leader the broker follows it as above, still named at its own
// epoch it leads again.

// partitionStateReader reads a partition's state znode and its version,
// and says whether ZooKeeper is in reach.
type partitionStateReader interface {
	PartitionState(topic string, partition int32) (kafkazk.PartitionStateZNode, int32, error)
	// ZooKeeperSilence reports whether the broker's session is usable
	// and, when it is not, how long ago the broker last heard from
	// ZooKeeper.
	ZooKeeperSilence(now time.Time) (silence time.Duration, connected bool)
}

// checkDeposedLeaders runs with the leaders' ISR check, as often.
func (b *Broker) checkDeposedLeaders(states partitionStateReader) {
	silence, connected := states.ZooKeeperSilence(b.now())
	for _, p := range b.replicas.Partitions() {
		suspended := p.LeadershipSuspended()
		if !suspended && !p.HasSilentIsrFollower() {
			continue
		}
		if !connected {
			// No read is tried: without a session each one waits out a
			// reconnect attempt (seconds), partition after partition.
			if !suspended && silence >= b.cfg.ZookeeperSessionTimeout && p.SuspendLeadership() {
				b.logger.Warn("leadership suspended: ZooKeeper unheard for longer than the session timeout and in-sync followers silent, so another leader was most likely elected; refusing writes until ZooKeeper answers",
					"topic", p.Topic, "partition", p.Index, "leader_epoch", p.LeaderEpoch(), "zookeeper_silence", silence.Round(time.Millisecond))
			}
			continue
		}
		s, version, err := states.PartitionState(p.Topic, p.Index)
		if err != nil {
			continue
		}
		if s.Leader == b.cfg.BrokerID && s.LeaderEpoch == p.LeaderEpoch() {
			if suspended && p.ResumeLeadership(s.LeaderEpoch) {
				b.logger.Info("leadership resumed: ZooKeeper still names this broker leader",
					"topic", p.Topic, "partition", p.Index, "leader_epoch", s.LeaderEpoch)
			}
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
