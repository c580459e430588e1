package server

import (
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func metadataRequest(topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	for _, n := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = strp(n)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func TestMetadataDescribesBrokerAndTopics(t *testing.T) {
	ab := startAdminBroker(t, "broker.rack=r1")
	ab.createTopic(t, "orders", 3, nil)

	resp := request[*kmsg.MetadataResponse](t, ab.cl, metadataRequest("orders"))
	if len(resp.Brokers) != 1 {
		t.Fatalf("brokers %+v", resp.Brokers)
	}
	_, port, _ := net.SplitHostPort(ab.addr)
	br := resp.Brokers[0]
	if br.NodeID != 0 || br.Host != "127.0.0.1" || strconv.Itoa(int(br.Port)) != port || br.Rack == nil || *br.Rack != "r1" {
		t.Fatalf("broker %+v, want 0 at %s, rack r1", br, ab.addr)
	}
	if resp.ClusterID == nil || *resp.ClusterID == "" || resp.ControllerID != 0 {
		t.Fatalf("cluster id %v controller %d", resp.ClusterID, resp.ControllerID)
	}
	if len(resp.Topics) != 1 {
		t.Fatalf("topics %+v", resp.Topics)
	}
	top := resp.Topics[0]
	if top.ErrorCode != 0 || *top.Topic != "orders" || top.TopicID == [16]byte{} || top.IsInternal || len(top.Partitions) != 3 {
		t.Fatalf("topic %+v", top)
	}
	if top.AuthorizedOperations != authorizedOperationsNotRequested {
		t.Fatalf("authorized operations %d when not requested", top.AuthorizedOperations)
	}
	for i, p := range top.Partitions {
		if p.Partition != int32(i) || p.Leader != 0 || p.LeaderEpoch != 0 || len(p.Replicas) != 1 || p.Replicas[0] != 0 || len(p.ISR) != 1 || p.ISR[0] != 0 || len(p.OfflineReplicas) != 0 {
			t.Fatalf("partition %d: %+v", i, p)
		}
	}
	if id := ab.b.topic("orders").ID; id != top.TopicID {
		t.Fatalf("topic id %x, table has %x", top.TopicID, id)
	}

	req := metadataRequest("orders")
	req.IncludeTopicAuthorizedOperations = true
	resp = request[*kmsg.MetadataResponse](t, ab.cl, req)
	if got := resp.Topics[0].AuthorizedOperations; got != topicAuthorizedOperations {
		t.Fatalf("authorized operations %b, want %b", got, topicAuthorizedOperations)
	}
}

func TestMetadataTopicSelectionByVersion(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "a", 1, nil)
	ab.createTopic(t, "b", 1, nil)

	all := request[*kmsg.MetadataResponse](t, ab.cl, kmsg.NewPtrMetadataRequest())
	if len(all.Topics) != 2 || *all.Topics[0].Topic != "a" || *all.Topics[1].Topic != "b" {
		t.Fatalf("null list: %+v", all.Topics)
	}
	none := kmsg.NewPtrMetadataRequest()
	none.Topics = []kmsg.MetadataRequestTopic{}
	if got := request[*kmsg.MetadataResponse](t, ab.cl, none); len(got.Topics) != 0 {
		t.Fatalf("empty list at v%d listed %d topics", got.Version, len(got.Topics))
	}
	v0 := ab.pinned(t, kmsg.Metadata.Int16(), 0)
	empty := kmsg.NewPtrMetadataRequest()
	empty.Topics = []kmsg.MetadataRequestTopic{}
	got := request[*kmsg.MetadataResponse](t, v0, empty)
	if got.Version != 0 || len(got.Topics) != 2 {
		t.Fatalf("v%d empty list: %d topics, want all 2", got.Version, len(got.Topics))
	}
}

func TestMetadataTopicByID(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "by-id", 2, nil)
	id := ab.b.topic("by-id").ID
	req := kmsg.NewPtrMetadataRequest()
	for _, tid := range [][16]byte{id, {1, 2, 3}} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = tid
		req.Topics = append(req.Topics, rt)
	}
	resp := request[*kmsg.MetadataResponse](t, ab.pinned(t, kmsg.Metadata.Int16(), 12), req)
	if len(resp.Topics) != 2 {
		t.Fatalf("topics %+v", resp.Topics)
	}
	if r := resp.Topics[0]; r.ErrorCode != 0 || r.Topic == nil || *r.Topic != "by-id" || len(r.Partitions) != 2 {
		t.Fatalf("known id: %+v", r)
	}
	if r := resp.Topics[1]; r.ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown id: %s", errName(r.ErrorCode))
	}
}

func TestMetadataAutoCreatesTopics(t *testing.T) {
	ab := startAdminBroker(t, "num.partitions=4")

	req := metadataRequest("auto-1")
	req.AllowAutoTopicCreation = true
	first := request[*kmsg.MetadataResponse](t, ab.cl, req)
	if c := first.Topics[0].ErrorCode; c != kerr.LeaderNotAvailable.Code {
		t.Fatalf("first answer %s, want LEADER_NOT_AVAILABLE", errName(c))
	}
	second := request[*kmsg.MetadataResponse](t, ab.cl, req)
	if r := second.Topics[0]; r.ErrorCode != 0 || len(r.Partitions) != 4 {
		t.Fatalf("second answer %s with %d partitions, want 4 (num.partitions)", errName(r.ErrorCode), len(r.Partitions))
	}

	noCreate := metadataRequest("auto-2")
	noCreate.AllowAutoTopicCreation = false
	if c := request[*kmsg.MetadataResponse](t, ab.cl, noCreate).Topics[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("AllowAutoTopicCreation=false: %s", errName(c))
	}
	if ab.b.topic("auto-2") != nil {
		t.Fatal("auto-2 was created although the request did not allow it")
	}

	bad := metadataRequest("bad name!")
	bad.AllowAutoTopicCreation = true
	if c := request[*kmsg.MetadataResponse](t, ab.cl, bad).Topics[0].ErrorCode; c != kerr.InvalidTopicException.Code {
		t.Fatalf("invalid name: %s", errName(c))
	}

	off := metadataRequest(offsetsTopic)
	off.AllowAutoTopicCreation = true
	request[*kmsg.MetadataResponse](t, ab.cl, off)
	resp := request[*kmsg.MetadataResponse](t, ab.cl, off)
	if r := resp.Topics[0]; r.ErrorCode != 0 || !r.IsInternal || len(r.Partitions) != 3 {
		t.Fatalf("__consumer_offsets: %s internal=%v partitions=%d", errName(r.ErrorCode), r.IsInternal, len(r.Partitions))
	}
	if got := ab.b.topic(offsetsTopic).Configs["cleanup.policy"]; got != "compact" {
		t.Fatalf("__consumer_offsets cleanup.policy %q", got)
	}
}

func TestMetadataAutoCreateDisabled(t *testing.T) {
	ab := startAdminBroker(t, "auto.create.topics.enable=false")
	req := metadataRequest("nope")
	req.AllowAutoTopicCreation = true
	if c := request[*kmsg.MetadataResponse](t, ab.cl, req).Topics[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("%s, want UNKNOWN_TOPIC_OR_PARTITION", errName(c))
	}
	if ab.b.topic("nope") != nil {
		t.Fatal("topic created with auto.create.topics.enable=false")
	}
	// v3 requests have no flag: creation then depends on the broker alone.
	v3 := ab.pinned(t, kmsg.Metadata.Int16(), 3)
	if c := request[*kmsg.MetadataResponse](t, v3, metadataRequest("nope")).Topics[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("v3: %s", errName(c))
	}
}

// A client that came in through a listener is told that listener's address,
// so clients on an internal and an external network each stay on theirs.
func TestMetadataAdvertisesTheRequestListener(t *testing.T) {
	ab := startAdminBroker(t,
		"listeners=PLAINTEXT://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT",
		"inter.broker.listener.name=PLAINTEXT")
	ab.b.boundMu.RLock()
	external := ab.b.bound["EXTERNAL"]
	ab.b.boundMu.RUnlock()
	if external == nil || external.String() == ab.addr {
		t.Fatalf("EXTERNAL bound at %v, PLAINTEXT at %s", external, ab.addr)
	}
	for _, addr := range []string{ab.addr, external.String()} {
		cl := ab.client(t, kgo.SeedBrokers(addr))
		defer cl.Close()
		resp := request[*kmsg.MetadataResponse](t, cl, kmsg.NewPtrMetadataRequest())
		got := net.JoinHostPort(resp.Brokers[0].Host, strconv.Itoa(int(resp.Brokers[0].Port)))
		if got != addr {
			t.Fatalf("connected to %s, told %s", addr, got)
		}
	}
}

// A producer that may auto-create topics gets LEADER_NOT_AVAILABLE first,
// retries, and its records land in the new topic.
func TestMetadataAutoCreateForProducer(t *testing.T) {
	ab := startAdminBroker(t)
	cl := ab.client(t, kgo.AllowAutoTopicCreation(), kgo.RequestRetries(20))
	defer cl.Close()
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "made-by-producer", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	tp := ab.b.topic("made-by-producer")
	if tp == nil || len(tp.Partitions) != 1 || tp.Partitions[0].LogEndOffset() != 1 {
		t.Fatalf("topic %+v", tp)
	}
}

// The bitfields Kafka reports without an authorizer: every operation the
// resource type has (AclEntry.supportedOperations), by AclOperation code.
const (
	// READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
	topicAuthorizedOperations = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	// CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE_CONFIGS ALTER_CONFIGS IDEMPOTENT_WRITE
	clusterAuthorizedOperations = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12
)
