package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
	"github.com/kbroker/kbroker/kafkazk"
)

// stateZNodes is ZooKeeper's state znodes as a deposed leader reads them;
// reads counts the reads.
type stateZNodes struct {
	states map[kafkazk.TopicPartition]kafkazk.PartitionStateZNode
	reads  int
}

func (z *stateZNodes) PartitionState(topic string, partition int32) (kafkazk.PartitionStateZNode, int32, error) {
	z.reads++
	s, ok := z.states[kafkazk.TopicPartition{Topic: topic, Partition: partition}]
	if !ok {
		return s, 0, kerr.UnknownTopicOrPartition
	}
	return s, 9, nil
}

// A leader whose follower went quiet reads the state znode: while it
// still names this broker, or an epoch it already has, nothing changes;
// once it names another leader at a newer epoch the broker follows it,
// Metadata names it and a produce is sent there (KIP-951).
func TestDeposedLeaderFollowsZooKeeper(t *testing.T) {
	b := newClusterBroker(t)
	clock := clocktest.NewFake(time.UnixMilli(1_700_000_000_000))
	b.now = clock.Now
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, leaderTopicID, laiState(1, 1, 5)))
	handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(3, leaderTopicID, umState(1, 1, 5)))
	produceTwo(t, b)
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
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 12
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("t")
	mreq.Topics = []kmsg.MetadataRequestTopic{mt}
	meta := handle[*kmsg.MetadataResponse](t, b, mreq)
	for _, mp := range meta.Topics[0].Partitions {
		if mp.Partition == 1 && (mp.Leader != 2 || mp.LeaderEpoch != 6) {
			t.Errorf("Metadata names leader %d at epoch %d", mp.Leader, mp.LeaderEpoch)
		}
	}
}
