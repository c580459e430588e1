package server

// Rows of the authorization matrix: the data path and the metadata APIs.

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
)

// dataPathCases: Produce, Fetch, ListOffsets, Metadata.
func dataPathCases(f *authzFixture) []authzCase {
	return []authzCase{
		{
			name: "Produce", key: 0, version: 11,
			acls:  []aclSpec{topicACL(opWrite, "orders")},
			codes: []int16{topicDenied},
			alternatives: [][]aclSpec{
				{topicACL(opWrite, "ord").prefixed()},
				{topicACL(opWrite, "*")},
				{topicACL(kmsg.ACLOperationAll, "orders")},
			},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opDescribe, "orders")}, topicDenied},
				{[]aclSpec{topicACL(opRead, "orders")}, topicDenied},
				{[]aclSpec{topicACL(opWrite, "orders-").prefixed()}, topicDenied},
			},
			// A PREFIXED DENY overrides a LITERAL ALLOW.
			deny: []aclSpec{topicACL(opWrite, "ord").prefixed().denial()},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.saved = e.logEnd(t, "orders")
				return produceRequest(t, "orders", plainOpts(), nil)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", sp.ErrorCode, ph.code)
					if sp.BaseOffset != -1 || sp.LogAppendTime != -1 || sp.LogStartOffset != -1 {
						t.Errorf("denied produce reports offsets: %+v", sp)
					}
					if end := e.logEnd(t, "orders"); end != ph.saved {
						t.Errorf("denied produce appended: log end %d, was %d", end, ph.saved)
					}
					return
				}
				wantCode(t, "partition", sp.ErrorCode, 0)
				if sp.BaseOffset != ph.saved {
					t.Errorf("base offset %d, want %d", sp.BaseOffset, ph.saved)
				}
			},
		},
		{
			// Kafka asks for WRITE on the transactional id only when the
			// records are transactional.
			name: "Produce/transactional", key: 0, version: 11,
			acls:  []aclSpec{txnACL(opWrite, "txprod-").prefixed(), topicACL(opWrite, "orders")},
			codes: []int16{txnDenied, topicDenied},
			notEnough: []authzShortfall{
				{[]aclSpec{txnACL(opDescribe, "txprod-").prefixed(), topicACL(opWrite, "orders")}, txnDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.p = e.initProducer(t, "txprod-"+ph.tag)
				e.beginTxn(t, ph.p, "orders")
				ph.cleanup = func(t *testing.T) { e.endTxn(t, ph.p, false) }
				ph.saved = e.logEnd(t, "orders")
				return produceRequest(t, "orders", logstoreOpts(ph.p.id, ph.p.epoch, 0, true), &ph.p.txnID)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", sp.ErrorCode, ph.code)
					if sp.BaseOffset != -1 {
						t.Errorf("denied produce reports base offset %d", sp.BaseOffset)
					}
					if end := e.logEnd(t, "orders"); end != ph.saved {
						t.Errorf("denied produce appended: log end %d, was %d", end, ph.saved)
					}
					return
				}
				wantCode(t, "partition", sp.ErrorCode, 0)
			},
		},
		{
			// A transactional id on non-transactional records is not
			// checked (KafkaApis.handleProduceRequest looks at the records).
			name: "Produce/transactional id, plain records", key: 0, version: 11,
			acls:  []aclSpec{topicACL(opWrite, "orders")},
			codes: []int16{topicDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.saved = e.logEnd(t, "orders")
				return produceRequest(t, "orders", plainOpts(), strp("txprod-unused"))
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", sp.ErrorCode, ph.code)
					return
				}
				wantCode(t, "partition", sp.ErrorCode, 0)
				if sp.BaseOffset != ph.saved {
					t.Errorf("base offset %d, want %d", sp.BaseOffset, ph.saved)
				}
			},
		},
		{
			// Transactional records without a transactional id fail for
			// everyone, super users included: Kafka's check needs an id.
			name: "Produce/transactional records, no transactional id", key: 0, version: 11,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.saved = e.logEnd(t, "orders")
				return produceRequest(t, "orders", logstoreOpts(4242, 0, 0, true), nil)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
				wantCode(t, "partition", sp.ErrorCode, txnDenied)
				if end := e.logEnd(t, "orders"); end != ph.saved {
					t.Errorf("appended: log end %d, was %d", end, ph.saved)
				}
			},
		},
		{
			name: "Fetch", key: 1, version: 16,
			acls:  []aclSpec{topicACL(opRead, "orders")},
			codes: []int16{topicDenied},
			alternatives: [][]aclSpec{
				{topicACL(opRead, "*")},
				{topicACL(opRead, "or").prefixed()},
			},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opDescribe, "orders")}, topicDenied},
				{[]aclSpec{topicACL(opWrite, "orders")}, topicDenied},
				{[]aclSpec{clusterACL(opClusterAction)}, topicDenied},
			},
			// A wildcard DENY overrides a LITERAL ALLOW.
			deny: []aclSpec{topicACL(opRead, "*").denial()},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return fetchRequest(f.ordersID, -1)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkFetch(t, ph.denied, ph.code, resp)
			},
		},
		{
			// A follower needs CLUSTER_ACTION; READ on the topic is not
			// enough. Broker 1 is no replica of orders-0: once authorized,
			// the fetch gets Kafka's NOT_LEADER_OR_FOLLOWER for a fetch from
			// outside the replica set (Partition.followerReplicaOrThrow),
			// still without data.
			name: "Fetch/follower", key: 1, version: 16,
			acls:  []aclSpec{clusterACL(opClusterAction)},
			codes: []int16{topicDenied},
			alternatives: [][]aclSpec{
				{clusterACL(kmsg.ACLOperationAll)},
			},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opRead, "orders")}, topicDenied},
				{[]aclSpec{clusterACL(opAlter)}, topicDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return fetchRequest(f.ordersID, 1)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				if ph.denied {
					checkFetch(t, true, ph.code, resp)
					return
				}
				// Refused by the replica manager instead, also without data.
				checkFetch(t, true, kerr.NotLeaderForPartition.Code, resp)
			},
		},
		{
			// DESCRIBE, implied by READ, WRITE, DELETE and ALTER; the ACL
			// is for the tests' host only.
			name: "ListOffsets", key: 2, version: 9,
			acls:  []aclSpec{topicACL(opDescribe, "orders").onHost(authzHost)},
			codes: []int16{topicDenied},
			alternatives: [][]aclSpec{
				{topicACL(opRead, "orders")},
				{topicACL(opWrite, "orders")},
				{topicACL(opDelete, "orders")},
				{topicACL(opAlter, "orders")},
			},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opCreate, "orders")}, topicDenied},
				{[]aclSpec{topicACL(opDescribeConfigs, "orders")}, topicDenied},
				{[]aclSpec{topicACL(opDescribe, "orders").onHost(otherHost)}, topicDenied},
				// READ implies DESCRIBE, but not past a DENY of DESCRIBE.
				{[]aclSpec{topicACL(opRead, "orders"), topicACL(opDescribe, "orders").denial()}, topicDenied},
			},
			// A DENY for the one host.
			deny: []aclSpec{topicACL(opDescribe, "orders").onHost(authzHost).denial()},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.saved = e.logEnd(t, "orders")
				req := kmsg.NewPtrListOffsetsRequest()
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = "orders"
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Timestamp = -1
				rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
				req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", sp.ErrorCode, ph.code)
					if sp.Offset != -1 || sp.Timestamp != -1 || sp.LeaderEpoch != -1 {
						t.Errorf("denied ListOffsets reports %+v", sp)
					}
					return
				}
				wantCode(t, "partition", sp.ErrorCode, 0)
				if sp.Offset != ph.saved {
					t.Errorf("offset %d, want %d", sp.Offset, ph.saved)
				}
			},
		},
	}
}

func produceRequest(t *testing.T, topic string, opts logstore.BatchOptions, txnID *string) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, 5000, txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = rawBatch(t, opts, 1, time.Now().UnixMilli())
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	return req
}

// fetchRequest reads orders-0 from offset 0, by topic id, as replica
// (-1: a consumer).
func fetchRequest(id [16]byte, replica int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.ReplicaState.ID = replica, replica
	req.MaxWaitMillis, req.MinBytes, req.SessionEpoch = 0, 1, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "orders", id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	return req
}

// checkFetch judges a fetch of orders-0: refused with code and nothing
// else, or with records.
func checkFetch(t *testing.T, refused bool, code int16, resp kmsg.Response) {
	t.Helper()
	r := resp.(*kmsg.FetchResponse)
	wantCode(t, "fetch", r.ErrorCode, 0)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch answer %+v", r.Topics)
	}
	sp := r.Topics[0].Partitions[0]
	if refused {
		wantCode(t, "partition", sp.ErrorCode, code)
		if sp.HighWatermark != -1 || sp.LastStableOffset != -1 || sp.LogStartOffset != -1 || len(sp.RecordBatches) != 0 || len(sp.AbortedTransactions) != 0 {
			t.Errorf("denied fetch leaks: hw %d lso %d log start %d, %d record bytes, %d aborted",
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset, len(sp.RecordBatches), len(sp.AbortedTransactions))
		}
		return
	}
	wantCode(t, "partition", sp.ErrorCode, 0)
	if len(sp.RecordBatches) == 0 || sp.HighWatermark < 3 {
		t.Errorf("fetch returned %d record bytes, hw %d", len(sp.RecordBatches), sp.HighWatermark)
	}
}

// Every operation of a topic, a group and the cluster (Kafka's
// AclEntry.supportedOperations), as authorized-operations bitfields.
var (
	allTopicOps   = opsBits(topicOperations...)
	allGroupOps   = opsBits(groupOperations...)
	allClusterOps = opsBits(clusterOperations...)
)

// metadataCases: Metadata, which hides what the principal may not
// describe.
func metadataCases(f *authzFixture) []authzCase {
	metadata := func(e *authzEnv, topics ...string) *kmsg.MetadataRequest {
		req := kmsg.NewPtrMetadataRequest()
		req.IncludeTopicAuthorizedOperations = true
		if topics != nil {
			req.Topics = []kmsg.MetadataRequestTopic{}
		}
		for _, n := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = strp(n)
			req.Topics = append(req.Topics, rt)
		}
		return req
	}
	topicName := func(rt kmsg.MetadataResponseTopic) string { return stringOr(rt.Topic) }
	checkDeniedTopic := func(t *testing.T, rt kmsg.MetadataResponseTopic, code int16) {
		t.Helper()
		wantCode(t, "topic "+topicName(rt), rt.ErrorCode, code)
		if len(rt.Partitions) != 0 || rt.TopicID != ([16]byte{}) || rt.IsInternal || rt.AuthorizedOperations != -2147483648 {
			t.Errorf("denied topic leaks: %d partitions, id %x, internal %v, operations %d", len(rt.Partitions), rt.TopicID, rt.IsInternal, rt.AuthorizedOperations)
		}
	}
	// The topic operations the allowed phases get: DESCRIBE, and READ
	// with it for the READ alternative; every one for super users.
	topicOps := func(ph *authzPhase) int32 {
		switch {
		case ph.super:
			return allTopicOps
		case ph.kind == "alternative":
			return opsBits(opRead, opDescribe)
		}
		return opsBits(opDescribe)
	}
	return []authzCase{
		{
			name: "Metadata/named topic", key: 3, version: 12,
			acls:         []aclSpec{topicACL(opDescribe, "orders")},
			codes:        []int16{topicDenied},
			alternatives: [][]aclSpec{{topicACL(opRead, "orders")}},
			notEnough:    []authzShortfall{{[]aclSpec{topicACL(opCreate, "orders")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return metadata(e, "orders", "__consumer_offsets")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.MetadataResponse)
				if len(r.Brokers) != 1 || len(r.Topics) != 2 {
					t.Fatalf("%d brokers, %d topics", len(r.Brokers), len(r.Topics))
				}
				var rt kmsg.MetadataResponseTopic
				for _, x := range r.Topics {
					switch topicName(x) {
					case "orders":
						rt = x
					case "__consumer_offsets":
						if ph.super {
							if x.ErrorCode != 0 || !x.IsInternal {
								t.Errorf("super user: __consumer_offsets %s, internal %v", errName(x.ErrorCode), x.IsInternal)
							}
							continue
						}
						// Not even whether it is internal.
						checkDeniedTopic(t, x, topicDenied)
					default:
						t.Errorf("topic %q", topicName(x))
					}
				}
				if ph.denied {
					checkDeniedTopic(t, rt, ph.code)
					return
				}
				wantCode(t, "topic", rt.ErrorCode, 0)
				if len(rt.Partitions) != 1 || rt.TopicID != f.ordersID {
					t.Errorf("%d partitions, id %x", len(rt.Partitions), rt.TopicID)
				}
				if want := topicOps(ph); rt.AuthorizedOperations != want {
					t.Errorf("authorized operations %b, want %b", rt.AuthorizedOperations, want)
				}
			},
		},
		{
			// Kafka leaves out, without a word, every topic the principal
			// may not describe.
			name: "Metadata/all topics", key: 3, version: 12,
			acls:  []aclSpec{topicACL(opDescribe, "orders")},
			codes: []int16{0},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return metadata(e)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.MetadataResponse)
				switch {
				case ph.denied:
					wantTopics(t, "topics", r.Topics, topicName)
				case ph.super:
					for _, n := range []string{"orders", "secret", "__consumer_offsets", "__transaction_state"} {
						if !has(r.Topics, topicName, n) {
							t.Errorf("super user does not see %s", n)
						}
					}
				default:
					wantTopics(t, "topics", r.Topics, topicName, "orders")
				}
			},
		},
		{
			// By id, a denied topic is answered without its name.
			name: "Metadata/by topic id", key: 3, version: 12,
			acls:  []aclSpec{topicACL(opDescribe, "orders")},
			codes: []int16{topicDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := metadata(e)
				rt := kmsg.NewMetadataRequestTopic()
				rt.TopicID = f.ordersID
				req.Topics = []kmsg.MetadataRequestTopic{rt}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.MetadataResponse)
				if len(r.Topics) != 1 {
					t.Fatalf("%d topics", len(r.Topics))
				}
				rt := r.Topics[0]
				if ph.denied {
					wantCode(t, "topic", rt.ErrorCode, ph.code)
					if rt.Topic != nil || rt.TopicID != f.ordersID || len(rt.Partitions) != 0 {
						t.Errorf("denied topic: name %v, id %x, %d partitions", rt.Topic, rt.TopicID, len(rt.Partitions))
					}
					return
				}
				wantCode(t, "topic", rt.ErrorCode, 0)
				if topicName(rt) != "orders" || len(rt.Partitions) != 1 {
					t.Errorf("topic %q with %d partitions", topicName(rt), len(rt.Partitions))
				}
			},
		},
		{
			// Auto-creation needs DESCRIBE on the topic and CREATE on the
			// cluster or on the topic.
			name: "Metadata/auto-creation", key: 3, version: 12,
			acls:  []aclSpec{topicACL(opDescribe, "auto-").prefixed(), clusterACL(opCreate)},
			codes: []int16{topicDenied, topicDenied},
			alternatives: [][]aclSpec{
				{topicACL(opDescribe, "auto-").prefixed(), topicACL(opCreate, "auto-").prefixed()},
			},
			notEnough: []authzShortfall{
				{[]aclSpec{clusterACL(opCreate), topicACL(opCreate, "auto-").prefixed()}, topicDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := metadata(e, "auto-"+ph.tag)
				req.AllowAutoTopicCreation = true
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.MetadataResponse)
				if len(r.Topics) != 1 || topicName(r.Topics[0]) != "auto-"+ph.tag {
					t.Fatalf("topics %+v", r.Topics)
				}
				rt := r.Topics[0]
				if ph.denied {
					checkDeniedTopic(t, rt, ph.code)
					if e.b.topic("auto-"+ph.tag) != nil {
						t.Error("created although denied")
					}
					return
				}
				wantCode(t, "topic", rt.ErrorCode, kerr.LeaderNotAvailable.Code)
				want := opsBits(opDescribe)
				switch {
				case ph.super:
					want = allTopicOps
				case ph.kind == "alternative":
					want = opsBits(opDescribe, opCreate)
				}
				if rt.AuthorizedOperations != want {
					t.Errorf("authorized operations %b, want %b", rt.AuthorizedOperations, want)
				}
				eventually(t, "auto-created topic", func() string {
					if e.b.topic("auto-"+ph.tag) == nil {
						return "not created"
					}
					return ""
				})
			},
		},
		{
			// Only v8-10 carry the cluster's operations: 0 without
			// DESCRIBE on the cluster.
			name: "Metadata/cluster authorized operations", key: 3, version: 10,
			acls:         []aclSpec{clusterACL(opDescribe)},
			codes:        []int16{0},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := metadata(e, []string{}...)
				req.IncludeClusterAuthorizedOperations = true
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.MetadataResponse)
				if len(r.Brokers) != 1 || len(r.Topics) != 0 {
					t.Errorf("%d brokers, %d topics", len(r.Brokers), len(r.Topics))
				}
				want := opsBits(opDescribe)
				switch {
				case ph.denied:
					want = 0
				case ph.super:
					want = allClusterOps
				case ph.kind == "alternative":
					want = opsBits(opAlter, opDescribe)
				}
				if r.AuthorizedOperations != want {
					t.Errorf("cluster operations %b, want %b", r.AuthorizedOperations, want)
				}
			},
		},
	}
}
