package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/protocol"
)

// followerControl stands in for the ZooKeeper side: this broker is not the
// controller, has broker epoch 10, and no topic has overrides.
type followerControl struct{ ClusterControl }

func (followerControl) IsController() bool  { return false }
func (followerControl) ControllerID() int32 { return 2 }
func (followerControl) BrokerEpoch() int64  { return 10 }
func (followerControl) TopicConfigs(string) (map[string]string, error) {
	return map[string]string{}, nil
}

// newClusterBroker builds broker 1 of a cluster without starting it:
// requests are handed to Handle directly.
func newClusterBroker(t *testing.T) *Broker {
	t.Helper()
	dir := t.TempDir()
	props := "broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nzookeeper.connect=127.0.0.1:1\nlog.dirs=" + filepath.Join(dir, "logs") + "\n"
	path := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(path, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	b.cluster.control = followerControl{}
	t.Cleanup(func() {
		b.replicas.Close()
		b.logs.Close()
	})
	return b
}

func handle[R kmsg.Response](t *testing.T, b *Broker, req kmsg.Request) R {
	t.Helper()
	pr := &protocol.Request{Key: req.Key(), Version: req.GetVersion(), Body: req,
		Conn: &protocol.ConnInfo{Listener: "PLAINTEXT"}}
	resp := b.Handle(context.Background(), pr)
	if resp.Wait != nil {
		resp = resp.Wait(context.Background())
	}
	return resp.Msg.(R)
}

func updateMetadata(controllerEpoch int32, topicID [16]byte, states ...kmsg.UpdateMetadataRequestTopicPartition) *kmsg.UpdateMetadataRequest {
	r := kmsg.NewPtrUpdateMetadataRequest()
	r.Version, r.ControllerID, r.ControllerEpoch, r.BrokerEpoch = 8, 2, controllerEpoch, 10
	for _, id := range []int32{1, 2} {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
		ep.Host, ep.Port, ep.ListenerName = "127.0.0.1", 9090+id, "PLAINTEXT"
		lb.Endpoints = []kmsg.UpdateMetadataRequestLiveBrokerEndpoint{ep}
		r.LiveBrokers = append(r.LiveBrokers, lb)
	}
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic, ts.TopicID, ts.PartitionStates = "t", topicID, states
	r.TopicStates = []kmsg.UpdateMetadataRequestTopicState{ts}
	return r
}

func umState(p, leader, epoch int32) kmsg.UpdateMetadataRequestTopicPartition {
	s := kmsg.NewUpdateMetadataRequestTopicPartition()
	s.Partition, s.Leader, s.LeaderEpoch = p, leader, epoch
	s.ISR, s.Replicas = []int32{1, 2}, []int32{1, 2}
	return s
}

func leaderAndIsr(controllerEpoch int32, topicID [16]byte, states ...kmsg.LeaderAndISRRequestTopicPartition) *kmsg.LeaderAndISRRequest {
	r := kmsg.NewPtrLeaderAndISRRequest()
	r.Version, r.ControllerID, r.ControllerEpoch, r.BrokerEpoch = 7, 2, controllerEpoch, 10
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic, ts.TopicID, ts.PartitionStates = "t", topicID, states
	r.TopicStates = []kmsg.LeaderAndISRRequestTopicState{ts}
	return r
}

func laiState(p, leader, epoch int32) kmsg.LeaderAndISRRequestTopicPartition {
	s := kmsg.NewLeaderAndISRRequestTopicPartition()
	s.Partition, s.Leader, s.LeaderEpoch = p, leader, epoch
	s.ISR, s.Replicas = []int32{1, 2}, []int32{1, 2}
	return s
}

// The controller's requests build the broker's view: UpdateMetadata fills
// the metadata cache that Metadata answers from, LeaderAndIsr makes this
// broker leader of partition 1 and follower of partition 0, stale
// controller epochs are refused, produce to a partition led elsewhere is
// NOT_LEADER_OR_FOLLOWER with the leader named (KIP-951), and StopReplica
// with delete removes the replica's log.
// producePartition1 writes n records to partition 1 of topic "t".
func producePartition1(t *testing.T, acks int16, n int) *kmsg.ProduceRequest {
	preq := kmsg.NewPtrProduceRequest()
	preq.Version, preq.Acks, preq.TimeoutMillis = 11, acks, 30000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = 1
	pp.Records = rawBatch(t, plainOpts(), n, time.Now().UnixMilli())
	pt.Partitions = []kmsg.ProduceRequestTopicPartition{pp}
	preq.Topics = []kmsg.ProduceRequestTopic{pt}
	return preq
}

func TestClusterControllerRequests(t *testing.T) {
	b := newClusterBroker(t)
	id := [16]byte{1, 2, 3}

	lai := handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, id, laiState(0, 2, 4), laiState(1, 1, 5)))
	if lai.ErrorCode != 0 || len(lai.Topics) != 1 || len(lai.Topics[0].Partitions) != 2 {
		t.Fatalf("LeaderAndIsr: %+v", lai)
	}
	for _, p := range lai.Topics[0].Partitions {
		if p.ErrorCode != 0 {
			t.Fatalf("LeaderAndIsr partition %d: %s", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
	}
	if um := handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(3, id, umState(0, 2, 4), umState(1, 1, 5))); um.ErrorCode != 0 {
		t.Fatalf("UpdateMetadata: %s", kerr.ErrorForCode(um.ErrorCode))
	}

	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 12
	md := handle[*kmsg.MetadataResponse](t, b, mreq)
	if len(md.Brokers) != 2 || md.ControllerID != 2 || len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2 {
		t.Fatalf("Metadata: brokers %d controller %d topics %+v", len(md.Brokers), md.ControllerID, md.Topics)
	}
	if p := md.Topics[0].Partitions[0]; p.Leader != 2 || p.LeaderEpoch != 4 {
		t.Fatalf("Metadata partition 0: leader %d epoch %d", p.Leader, p.LeaderEpoch)
	}

	// An older controller epoch is fenced; the same leader epoch again is
	// refused per partition.
	if um := handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(2, id, umState(0, 1, 9))); um.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Fatalf("stale UpdateMetadata: %s", kerr.ErrorForCode(um.ErrorCode))
	}
	again := handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, id, laiState(1, 1, 5)))
	if c := again.Topics[0].Partitions[0].ErrorCode; c != kerr.StaleControllerEpoch.Code {
		t.Fatalf("same leader epoch: %s", kerr.ErrorForCode(c))
	}

	preq := kmsg.NewPtrProduceRequest()
	preq.Version, preq.Acks, preq.TimeoutMillis = 11, 1, 1000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = 0
	pt.Partitions = []kmsg.ProduceRequestTopicPartition{pp}
	preq.Topics = []kmsg.ProduceRequestTopic{pt}
	pr := handle[*kmsg.ProduceResponse](t, b, preq)
	got := pr.Topics[0].Partitions[0]
	if got.ErrorCode != kerr.NotLeaderForPartition.Code || got.CurrentLeader.LeaderID != 2 || got.CurrentLeader.LeaderEpoch != 4 {
		t.Fatalf("produce to a follower: %s, current leader %+v", kerr.ErrorForCode(got.ErrorCode), got.CurrentLeader)
	}
	if len(pr.Brokers) != 1 || pr.Brokers[0].NodeID != 2 || pr.Brokers[0].Port != 9092 {
		t.Fatalf("produce node endpoints: %+v", pr.Brokers)
	}

	sr := kmsg.NewPtrStopReplicaRequest()
	sr.Version, sr.ControllerID, sr.ControllerEpoch, sr.BrokerEpoch = 4, 2, 3, 10
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic = "t"
	ps := kmsg.NewStopReplicaRequestTopicPartitionState()
	ps.Partition, ps.LeaderEpoch, ps.Delete = 1, -2, true
	st.PartitionStates = []kmsg.StopReplicaRequestTopicPartitionState{ps}
	sr.Topics = []kmsg.StopReplicaRequestTopic{st}
	if resp := handle[*kmsg.StopReplicaResponse](t, b, sr); resp.ErrorCode != 0 || resp.Partitions[0].ErrorCode != 0 {
		t.Fatalf("StopReplica: %+v", resp)
	}
	if _, ok := b.logs.Get("t", 1); ok {
		t.Fatal("StopReplica with delete left the log of t-1")
	}
	if _, ok := b.logs.Get("t", 0); !ok {
		t.Fatal("the log of t-0 went away with t-1's")
	}
}

// Leadership moves by LeaderAndIsr a moment before UpdateMetadata tells the
// metadata cache. A produce answered in between — one that was waiting for
// acks=all when this broker became a follower, and one that arrives after —
// names the new leader from the replica's own state, not this broker from
// the stale cache (KIP-951 hints; without them a client waits for its next
// metadata refresh).
func TestProduceHintsNewLeaderBeforeUpdateMetadata(t *testing.T) {
	b := newClusterBroker(t)
	id := [16]byte{1, 2, 3}
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, id, laiState(0, 2, 4), laiState(1, 1, 5)))
	handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(3, id, umState(0, 2, 4), umState(1, 1, 5)))

	produce := func(acks int16) *kmsg.ProduceRequest { return producePartition1(t, acks, 1) }
	// acks=all waits: follower 2 has not fetched the record.
	pr := &protocol.Request{Key: 0, Version: 11, Body: produce(-1), Conn: &protocol.ConnInfo{Listener: "PLAINTEXT"}}
	waiting := b.Handle(context.Background(), pr)
	if waiting.Wait == nil {
		t.Fatalf("acks=all produce answered at once: %+v", waiting.Msg)
	}
	answered := make(chan *kmsg.ProduceResponse, 1)
	go func() { answered <- waiting.Wait(context.Background()).Msg.(*kmsg.ProduceResponse) }()

	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, id, laiState(1, 2, 6)))
	check := func(what string, resp *kmsg.ProduceResponse) {
		t.Helper()
		got := resp.Topics[0].Partitions[0]
		if got.ErrorCode != kerr.NotLeaderForPartition.Code || got.CurrentLeader.LeaderID != 2 || got.CurrentLeader.LeaderEpoch != 6 {
			t.Fatalf("%s: %s, current leader %+v", what, kerr.ErrorForCode(got.ErrorCode), got.CurrentLeader)
		}
		if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 2 {
			t.Fatalf("%s: node endpoints %+v", what, resp.Brokers)
		}
	}
	check("the produce waiting for acks=all", <-answered)
	check("a produce after the LeaderAndIsr", handle[*kmsg.ProduceResponse](t, b, produce(1)))
}

// Until its first UpdateMetadata, a broker of a cluster knows no topic,
// and says so with retriable answers that no client counts as "unknown
// topic": LEADER_NOT_AVAILABLE in Metadata, NOT_LEADER_OR_FOLLOWER in
// Produce. Once told, a topic the cache lacks is unknown.
func TestUnknownTopicsOnlyAfterFirstUpdateMetadata(t *testing.T) {
	b := newClusterBroker(t)
	metadata := func(topic string) int16 {
		t.Helper()
		r := kmsg.NewPtrMetadataRequest()
		r.Version = 12
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		r.Topics = []kmsg.MetadataRequestTopic{rt}
		resp := handle[*kmsg.MetadataResponse](t, b, r)
		return resp.Topics[0].ErrorCode
	}
	produce := func(topic string) int16 {
		t.Helper()
		r := producePartition1(t, 1, 1)
		r.Topics[0].Topic = topic
		return handle[*kmsg.ProduceResponse](t, b, r).Topics[0].Partitions[0].ErrorCode
	}
	if got := metadata("t"); got != kerr.LeaderNotAvailable.Code {
		t.Fatalf("Metadata before the first UpdateMetadata: %v, want LEADER_NOT_AVAILABLE", kerr.ErrorForCode(got))
	}
	if got := produce("t"); got != kerr.NotLeaderForPartition.Code {
		t.Fatalf("Produce before the first UpdateMetadata: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(got))
	}

	handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(3, [16]byte{1, 2, 3}, umState(0, 2, 4), umState(1, 2, 4)))
	if got := metadata("t"); got != 0 {
		t.Fatalf("Metadata of a known topic: %v", kerr.ErrorForCode(got))
	}
	if got := metadata("nope"); got != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("Metadata of a topic the told cache lacks: %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(got))
	}
	if got := produce("nope"); got != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("Produce to a topic the told cache lacks: %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(got))
	}
}
