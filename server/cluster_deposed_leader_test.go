package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// stateZNodes is ZooKeeper's state znodes as a deposed leader reads them;
// reads counts the reads. While cut, every read fails and ZooKeeper has
// been silent for silence.
type stateZNodes struct {
	states  map[kafkazk.TopicPartition]kafkazk.PartitionStateZNode
	reads   int
	cut     bool
	silence time.Duration
}

func (z *stateZNodes) ZooKeeperSilence(time.Time) (time.Duration, bool) {
	if !z.cut {
		return 0, true
	}
	return z.silence, false
}

func (z *stateZNodes) PartitionState(topic string, partition int32) (kafkazk.PartitionStateZNode, int32, error) {
	z.reads++
	if z.cut {
		return kafkazk.PartitionStateZNode{}, 0, zkstore.ErrConnectionClosed
	}
	s, ok := z.states[kafkazk.TopicPartition{Topic: topic, Partition: partition}]
	if !ok {
		return s, 0, kerr.UnknownTopicOrPartition
	}
	return s, 9, nil
}

// leaderOfPartition1 is a broker on a fake clock leading partition 1 of
// "t" at epoch 5 with follower 2, holding two records.
func leaderOfPartition1(t *testing.T) (*Broker, *clocktest.Fake) {
	t.Helper()
	b := newClusterBroker(t)
	clock := clocktest.NewFake(time.UnixMilli(1_700_000_000_000))
	b.now = clock.Now
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, leaderTopicID, laiState(1, 1, 5)))
	handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(3, leaderTopicID, umState(1, 1, 5)))
	produceTwo(t, b)
	return b, clock
}

// A leader whose follower went quiet reads the state znode: while it
// still names this broker, or an epoch it already has, nothing changes;
// once it names another leader at a newer epoch the broker follows it,
// Metadata names it and a produce is sent there (KIP-951).
func TestDeposedLeaderFollowsZooKeeper(t *testing.T) {
	b, clock := leaderOfPartition1(t)
	tp := kafkazk.TopicPartition{Topic: "t", Partition: 1}
	zk := &stateZNodes{states: map[kafkazk.TopicPartition]kafkazk.PartitionStateZNode{
		tp: {Leader: 2, LeaderEpoch: 6, ISR: []int32{2}, ControllerEpoch: 4},
	}}

	// Follower 2 has been heard from: no reason to look.
	b.checkDeposedLeaders(zk)
	if zk.reads != 0 {
		t.Fatalf("read %d state znodes with every follower in touch", zk.reads)
	}
	// Follower 2 has not fetched in this leadership: its silence counts
	// from the leadership, with the fetch back-off on top.
	clock.Advance(b.followerSilenceMax() + b.cfg.ReplicaFetchBackoff + time.Second)

	zk.states[tp] = kafkazk.PartitionStateZNode{Leader: 1, LeaderEpoch: 6, ISR: []int32{1}, ControllerEpoch: 4}
	b.checkDeposedLeaders(zk)
	zk.states[tp] = kafkazk.PartitionStateZNode{Leader: 2, LeaderEpoch: 5, ISR: []int32{2}, ControllerEpoch: 4}
	b.checkDeposedLeaders(zk)
	if p := b.replicas.Get("t", 1); zk.reads != 2 || !p.IsLeader() || p.LeaderEpoch() != 5 {
		t.Fatalf("after %d reads naming itself or its own epoch: leader %v, epoch %d", zk.reads, p.IsLeader(), p.LeaderEpoch())
	}

	zk.states[tp] = kafkazk.PartitionStateZNode{Leader: 2, LeaderEpoch: 6, ISR: []int32{2}, ControllerEpoch: 4}
	b.checkDeposedLeaders(zk)
	if p := b.replicas.Get("t", 1); p.IsLeader() || p.LeaderID() != 2 || p.LeaderEpoch() != 6 {
		t.Fatalf("deposed: leader %v, follows %d at epoch %d", p.IsLeader(), p.LeaderID(), p.LeaderEpoch())
	}
	resp := handle[*kmsg.ProduceResponse](t, b, producePartition1(t, -1, 1))
	rp := resp.Topics[0].Partitions[0]
	if rp.ErrorCode != kerr.NotLeaderForPartition.Code || rp.CurrentLeader.LeaderID != 2 || rp.CurrentLeader.LeaderEpoch != 6 {
		t.Errorf("produce to the deposed leader: %s, current leader %+v", kerr.ErrorForCode(rp.ErrorCode), rp.CurrentLeader)
	}
	if mp := metadataPartition1(t, b); mp.Leader != 2 || mp.LeaderEpoch != 6 {
		t.Errorf("Metadata names leader %d at epoch %d", mp.Leader, mp.LeaderEpoch)
	}
}

// metadataPartition1 is partition 1 of "t" as the broker's Metadata
// describes it.
func metadataPartition1(t *testing.T, b *Broker) kmsg.MetadataResponseTopicPartition {
	t.Helper()
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 12
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("t")
	mreq.Topics = []kmsg.MetadataRequestTopic{mt}
	meta := handle[*kmsg.MetadataResponse](t, b, mreq)
	for _, mp := range meta.Topics[0].Partitions {
		if mp.Partition == 1 {
			return mp
		}
	}
	t.Fatal("Metadata without partition 1")
	return kmsg.MetadataResponseTopicPartition{}
}

// A leader cut off from ZooKeeper, whose follower went quiet, suspends its
// leadership once ZooKeeper has been silent for the session timeout: its
// session has expired and the controller has most likely moved the
// leadership. Writes are refused at once, with no leader hint, and
// Metadata names no leader. When ZooKeeper answers again and still names
// it at its epoch, it leads again; when ZooKeeper names a newer leader, it
// follows that one.
func TestLeaderCutFromZooKeeperSuspendsLeadership(t *testing.T) {
	b, clock := leaderOfPartition1(t)
	p := b.replicas.Get("t", 1)
	tp := kafkazk.TopicPartition{Topic: "t", Partition: 1}
	zk := &stateZNodes{cut: true, silence: b.cfg.ZookeeperSessionTimeout, states: map[kafkazk.TopicPartition]kafkazk.PartitionStateZNode{}}

	// ZooKeeper silent long enough, but follower 2 is in touch: it still
	// fetches from this leader, so nobody else leads.
	b.checkDeposedLeaders(zk)
	if p.LeadershipSuspended() || zk.reads != 0 {
		t.Fatalf("suspended %v after %d reads with every follower in touch", p.LeadershipSuspended(), zk.reads)
	}
	clock.Advance(b.followerSilenceMax() + b.cfg.ReplicaFetchBackoff + time.Second)
	// Follower silent, but the session may still be alive.
	zk.silence = b.cfg.ZookeeperSessionTimeout - time.Millisecond
	b.checkDeposedLeaders(zk)
	if p.LeadershipSuspended() {
		t.Fatal("suspended before the session timeout had passed")
	}
	produceTwo(t, b)

	zk.silence = b.cfg.ZookeeperSessionTimeout
	b.checkDeposedLeaders(zk)
	if !p.LeadershipSuspended() || !p.IsLeader() || p.LeaderEpoch() != 5 {
		t.Fatalf("after the session timeout: suspended %v, leader %v, epoch %d", p.LeadershipSuspended(), p.IsLeader(), p.LeaderEpoch())
	}
	if zk.reads != 0 {
		t.Fatalf("%d state znode reads tried without a session: each would wait out a reconnect attempt", zk.reads)
	}
	resp := handle[*kmsg.ProduceResponse](t, b, producePartition1(t, 1, 1))
	if rp := resp.Topics[0].Partitions[0]; rp.ErrorCode != kerr.NotLeaderForPartition.Code || rp.CurrentLeader.LeaderID != -1 {
		t.Errorf("produce to a suspended leader: %s, current leader %+v; want NOT_LEADER_OR_FOLLOWER without naming itself", kerr.ErrorForCode(rp.ErrorCode), rp.CurrentLeader)
	}
	if mp := metadataPartition1(t, b); mp.Leader != -1 || mp.ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Errorf("Metadata of a suspended leadership: leader %d, %s; want no leader, LEADER_NOT_AVAILABLE", mp.Leader, kerr.ErrorForCode(mp.ErrorCode))
	}

	// ZooKeeper is back and still names this broker at its epoch.
	zk.cut = false
	zk.states[tp] = kafkazk.PartitionStateZNode{Leader: 1, LeaderEpoch: 5, ISR: []int32{1, 2}, ControllerEpoch: 3}
	b.checkDeposedLeaders(zk)
	if p.LeadershipSuspended() {
		t.Fatal("still suspended although ZooKeeper names this broker at its epoch")
	}
	produceTwo(t, b)
	if mp := metadataPartition1(t, b); mp.Leader != 1 || mp.ErrorCode != 0 {
		t.Errorf("Metadata after the leadership resumed: leader %d, %s", mp.Leader, kerr.ErrorForCode(mp.ErrorCode))
	}

	// Cut again; this time the controller has moved the leadership.
	zk.cut = true
	b.checkDeposedLeaders(zk)
	if !p.LeadershipSuspended() {
		t.Fatal("not suspended on the second cut")
	}
	zk.cut = false
	zk.states[tp] = kafkazk.PartitionStateZNode{Leader: 2, LeaderEpoch: 6, ISR: []int32{2}, ControllerEpoch: 4}
	b.checkDeposedLeaders(zk)
	if p.IsLeader() || p.LeadershipSuspended() || p.LeaderID() != 2 || p.LeaderEpoch() != 6 {
		t.Fatalf("ZooKeeper names leader 2 at epoch 6: leader %v, suspended %v, follows %d at epoch %d", p.IsLeader(), p.LeadershipSuspended(), p.LeaderID(), p.LeaderEpoch())
	}
	if mp := metadataPartition1(t, b); mp.Leader != 2 || mp.LeaderEpoch != 6 {
		t.Errorf("Metadata names leader %d at epoch %d", mp.Leader, mp.LeaderEpoch)
	}
}
