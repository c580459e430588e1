package server

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
)

// The authorization matrix: for every API this broker serves, what Kafka
// 3.9's KafkaApis (ZooKeeper mode) answers a principal without ACLs, one
// ACL short of what the API needs, with exactly those ACLs, with each of
// the other ACL sets Kafka accepts instead, with an explicit DENY next to
// the ALLOW, and as a super user. A denied principal must get Kafka's
// error code and none of the data; an allowed one must get a real answer.
// Every served API key needs a row: a new API does not pass until it says
// how it is authorized.

// notRequired marks, in authzCase.codes, an ACL without which Kafka still
// answers successfully and only leaves something out of the answer; the
// "one ACL short" phase is not run for it.
const notRequired int16 = -1

// authzCase is one row of the matrix.
type authzCase struct {
	name    string
	key     int16
	version int16
	// acls is exactly what Kafka requires; nil for an API Kafka does not
	// authorize (every phase then expects the same answer).
	acls []aclSpec
	// codes[i] is Kafka's answer when acls[i] is the first one missing;
	// a single entry applies to every ACL.
	codes []int16
	// alternatives are other ACL sets Kafka accepts in place of acls.
	alternatives [][]aclSpec
	// notEnough are ACL sets that look close but that Kafka refuses.
	notEnough []authzShortfall
	// deny is added next to acls in the deny phase (default: the DENY
	// twin of acls[0]); denyCode is Kafka's answer then (default codes[0]).
	deny     []aclSpec
	denyCode *int16
	// build returns the request of one phase; it may prepare what the
	// phase needs (as the super user) and note it in ph.
	build func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request
	// check judges the answer: ph.denied says whether Kafka refuses the
	// phase, ph.code with what.
	check func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response)
}

type authzShortfall struct {
	acls []aclSpec
	code int16
}

// authzPhase is one attempt of a row.
type authzPhase struct {
	kind   string // none, short, notenough, allow, otherhost, alternative, deny, super
	tag    string // unique per phase: names the principal and what the phase creates
	denied bool
	code   int16
	super  bool
	host   string
	grant  []aclSpec

	// Scratch for build and check.
	saved   int64
	p       producer
	m       groupMember
	cleanup func(t *testing.T)
}

// allows reports whether the phase was granted an ALLOW of op.
func (ph *authzPhase) allows(op kmsg.ACLOperation) bool {
	for _, a := range ph.grant {
		if !a.deny && a.op == op {
			return true
		}
	}
	return false
}

func (ph *authzPhase) principal() string {
	if ph.super {
		return authzSuper
	}
	return "User:" + ph.tag
}

// otherHost is an address no host-restricted ACL names.
const otherHost = "10.20.30.40"

func (c authzCase) code(i int) int16 {
	if len(c.codes) == 1 {
		return c.codes[0]
	}
	return c.codes[i]
}

// phases lists the attempts of row idx in the order they run.
func (c authzCase) phases(idx int) []*authzPhase {
	tag := func(kind string) string { return fmt.Sprintf("r%02d-%s", idx, kind) }
	var out []*authzPhase
	add := func(ph *authzPhase, grant []aclSpec) {
		if ph.host == "" {
			ph.host = authzHost
		}
		ph.grant = grant
		out = append(out, ph)
	}
	if c.acls == nil {
		everything := []aclSpec{
			clusterACL(kmsg.ACLOperationAll).denial(), topicACL(kmsg.ACLOperationAll, "*").denial(),
			groupACL(kmsg.ACLOperationAll, "*").denial(), txnACL(kmsg.ACLOperationAll, "*").denial(),
		}
		add(&authzPhase{kind: "none", tag: tag("none")}, nil)
		add(&authzPhase{kind: "deny", tag: tag("deny")}, everything)
		add(&authzPhase{kind: "super", tag: tag("super"), super: true}, nil)
		return out
	}
	add(&authzPhase{kind: "none", tag: tag("none"), denied: true, code: c.code(0)}, nil)
	if len(c.acls) > 1 {
		for i := range c.acls {
			if c.code(i) == notRequired {
				continue
			}
			short := slices.Delete(slices.Clone(c.acls), i, i+1)
			add(&authzPhase{kind: "short", tag: tag(fmt.Sprintf("short%d", i)), denied: true, code: c.code(i)}, short)
		}
	}
	for i, n := range c.notEnough {
		add(&authzPhase{kind: "notenough", tag: tag(fmt.Sprintf("ne%d", i)), denied: true, code: n.code}, n.acls)
	}
	add(&authzPhase{kind: "allow", tag: tag("allow")}, c.acls)
	for i, a := range c.acls {
		if a.host != "" {
			// The allow phase's principal, connecting from elsewhere.
			add(&authzPhase{kind: "otherhost", tag: tag("otherhost"), denied: true, code: c.code(i), host: otherHost}, c.acls)
			break
		}
	}
	for i, alt := range c.alternatives {
		add(&authzPhase{kind: "alternative", tag: tag(fmt.Sprintf("alt%d", i))}, alt)
	}
	deny, code := c.deny, c.code(0)
	if deny == nil {
		deny = []aclSpec{c.acls[0].denial()}
	}
	if c.denyCode != nil {
		code = *c.denyCode
	}
	add(&authzPhase{kind: "deny", tag: tag("deny"), denied: true, code: code}, append(slices.Clone(c.acls), deny...))
	add(&authzPhase{kind: "super", tag: tag("super"), super: true}, nil)
	return out
}

func TestAuthorizationMatrix(t *testing.T) {
	e := startAuthzBroker(t)
	f := setupAuthzFixture(t, e)
	cases := authzCases(f)

	covered := map[int16]bool{}
	for _, c := range cases {
		covered[c.key] = true
		min, max, ok := e.b.Versions(c.key)
		if !ok || c.version < min || c.version > max {
			t.Errorf("%s: %s v%d is not served", c.name, kmsg.NameForKey(c.key), c.version)
		}
	}
	for _, k := range supportedAPIs() {
		if !covered[k.ApiKey] {
			t.Errorf("%s (key %d) is served but has no row in the authorization matrix", kmsg.NameForKey(k.ApiKey), k.ApiKey)
		}
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, ph := range c.phases(i) {
				if !ph.super {
					e.grant(t, ph.principal(), ph.grant...)
				}
				req := c.build(t, e, ph)
				req.SetVersion(c.version)
				resp := e.send(t, ph.principal(), ph.host, req)
				ok := t.Run(ph.tag, func(t *testing.T) {
					if ph.denied {
						t.Logf("granted %v; Kafka answers %s", ph.grant, errName(ph.code))
					} else {
						t.Logf("granted %v; Kafka allows it", ph.grant)
					}
					c.check(t, e, ph, resp)
				})
				if ph.cleanup != nil {
					ph.cleanup(t)
				}
				if !ok {
					return
				}
			}
		})
	}
}

// authzFixture is what every row finds in the broker: data a denied
// principal must not see.
type authzFixture struct {
	e *authzEnv
	// orders is the topic most rows ask about: records of an idempotent
	// producer, offsets of group "readers", an open transaction.
	ordersID [16]byte
	// live is a Stable group of one static member whose assignment is
	// liveAssignment.
	live groupMember
	// ongoing is a transaction with orders-0 in it.
	ongoing producer
}

const liveAssignment = "secret-assignment"

func setupAuthzFixture(t *testing.T, e *authzEnv) *authzFixture {
	t.Helper()
	// Super users pass even an explicit DENY of everything.
	e.grant(t, authzSuper,
		clusterACL(kmsg.ACLOperationAll).denial(), topicACL(kmsg.ACLOperationAll, "*").denial(),
		groupACL(kmsg.ACLOperationAll, "*").denial(), txnACL(kmsg.ACLOperationAll, "*").denial())
	e.awaitCoordinators(t)
	for _, name := range []string{"orders", "secret", "trim", "markers", "cfg", "stop-victim"} {
		e.createTopic(t, name, 1)
	}
	f := &authzFixture{e: e, ordersID: e.b.topic("orders").ID}

	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(4)
	ip := e.admin(t, req).(*kmsg.InitProducerIDResponse)
	if ip.ErrorCode != 0 {
		t.Fatalf("idempotent InitProducerId: %s", errName(ip.ErrorCode))
	}
	e.produce(t, "orders", logstoreOpts(ip.ProducerID, ip.ProducerEpoch, 0, false), 3, nil)
	e.produce(t, "secret", plainOpts(), 2, nil)
	e.produce(t, "trim", plainOpts(), 2, nil)

	e.commitOffset(t, "readers", "orders", 2)
	e.commitOffset(t, "readers", "secret", 5)
	e.commitOffset(t, "hidden", "secret", 1)
	f.live = e.joinGroup(t, "live", "live-1", []byte(liveAssignment))
	f.ongoing = e.initProducer(t, "ongoing")
	e.beginTxn(t, f.ongoing, "orders")
	return f
}

// opsBits is an authorized-operations bitfield (Kafka's
// Utils.to32BitField of the operations' codes).
func opsBits(ops ...kmsg.ACLOperation) int32 {
	var bits int32
	for _, op := range ops {
		bits |= 1 << uint(op)
	}
	return bits
}

func wantCode(t *testing.T, what string, got, want int16) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %s, want %s", what, errName(got), errName(want))
	}
}

func wantTopics[T any](t *testing.T, what string, items []T, name func(T) string, want ...string) {
	t.Helper()
	var got []string
	for _, it := range items {
		got = append(got, name(it))
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

func has[T any](items []T, name func(T) string, want string) bool {
	for _, it := range items {
		if name(it) == want {
			return true
		}
	}
	return false
}

func logstoreOpts(id int64, epoch int16, seq int32, transactional bool) logstore.BatchOptions {
	return logstore.BatchOptions{ProducerID: id, ProducerEpoch: epoch, BaseSequence: seq, Transactional: transactional}
}

// Error codes the rows name.
var (
	topicDenied   = kerr.TopicAuthorizationFailed.Code
	groupDenied   = kerr.GroupAuthorizationFailed.Code
	clusterDenied = kerr.ClusterAuthorizationFailed.Code
	txnDenied     = kerr.TransactionalIDAuthorizationFailed.Code
)

const (
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
)

func authzCases(f *authzFixture) []authzCase {
	var cases []authzCase
	cases = append(cases, dataPathCases(f)...)
	cases = append(cases, metadataCases(f)...)
	cases = append(cases, brokerCases(f)...)
	cases = append(cases, groupCases(f)...)
	cases = append(cases, txnCases(f)...)
	cases = append(cases, adminCases(f)...)
	cases = append(cases, securityCases(f)...)
	return cases
}

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

// metadataCases: Metadata and DescribeTopicPartitions, which hide what the
// principal may not describe.
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
		{
			name: "DescribeTopicPartitions/named topic", key: 75, version: 0,
			acls:  []aclSpec{topicACL(opDescribe, "orders")},
			codes: []int16{topicDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				// One partition per answer: orders fills it, and a topic
				// the principal may not describe is still answered (Kafka's
				// DescribeTopicPartitionsRequestHandler adds them after the
				// paged ones); the cursor only ever names a describable one.
				req := kmsg.NewPtrDescribeTopicPartitionsRequest()
				req.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "orders"}, {Topic: "secret"}}
				req.ResponsePartitionLimit = 1
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeTopicPartitionsResponse)
				byName := map[string]kmsg.DescribeTopicPartitionsResponseTopic{}
				for _, rt := range r.Topics {
					byName[stringOr(rt.Topic)] = rt
				}
				denied := func(rt kmsg.DescribeTopicPartitionsResponseTopic, code int16) {
					t.Helper()
					wantCode(t, "topic "+stringOr(rt.Topic), rt.ErrorCode, code)
					if len(rt.Partitions) != 0 || rt.TopicID != ([16]byte{}) || rt.IsInternal || rt.AuthorizedOperations != -2147483648 {
						t.Errorf("denied topic leaks: %+v", rt)
					}
				}
				if ph.super {
					if len(byName) != 1 || r.NextCursor == nil || r.NextCursor.Topic != "secret" {
						t.Errorf("super user: topics %+v, cursor %+v", r.Topics, r.NextCursor)
					}
				} else {
					if len(byName) != 2 || r.NextCursor != nil {
						t.Fatalf("topics %+v, cursor %+v", r.Topics, r.NextCursor)
					}
					denied(byName["secret"], topicDenied)
				}
				rt := byName["orders"]
				if ph.denied {
					denied(rt, ph.code)
					return
				}
				wantCode(t, "orders", rt.ErrorCode, 0)
				if len(rt.Partitions) != 1 || rt.TopicID != f.ordersID {
					t.Errorf("orders: %d partitions, id %x", len(rt.Partitions), rt.TopicID)
				}
				want := opsBits(opDescribe)
				if ph.super {
					want = allTopicOps
				}
				if rt.AuthorizedOperations != want {
					t.Errorf("authorized operations %b, want %b", rt.AuthorizedOperations, want)
				}
			},
		},
		{
			name: "DescribeTopicPartitions/all topics", key: 75, version: 0,
			acls:  []aclSpec{topicACL(opDescribe, "orders")},
			codes: []int16{0},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return kmsg.NewPtrDescribeTopicPartitionsRequest()
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeTopicPartitionsResponse)
				name := func(rt kmsg.DescribeTopicPartitionsResponseTopic) string { return stringOr(rt.Topic) }
				switch {
				case ph.denied:
					wantTopics(t, "topics", r.Topics, name)
				case ph.super:
					if !has(r.Topics, name, "orders") || !has(r.Topics, name, "secret") {
						t.Errorf("super user sees %d topics", len(r.Topics))
					}
				default:
					wantTopics(t, "topics", r.Topics, name, "orders")
				}
			},
		},
	}
}

// controllerEpoch is the controller id and epoch this broker follows, for
// controller requests it accepts.
func (e *authzEnv) controllerEpoch() (int32, int32) {
	c := e.b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.controllerID, c.controllerEpoch
}

// brokerCases: the requests only brokers send, which need CLUSTER_ACTION
// (WriteTxnMarkers: ALTER as well). A denied one must change nothing:
// the denied phases carry partitions that would show up if applied.
func brokerCases(f *authzFixture) []authzCase {
	clusterAction := []aclSpec{clusterACL(opClusterAction)}
	notEnough := []authzShortfall{
		{[]aclSpec{clusterACL(opAlter)}, clusterDenied},
		{[]aclSpec{clusterACL(opIdempotentWrite), topicACL(kmsg.ACLOperationAll, "*")}, clusterDenied},
	}
	ghost := func(ph *authzPhase) string { return "ghost-" + ph.tag }
	return []authzCase{
		{
			name: "LeaderAndIsr", key: 4, version: 7,
			acls: clusterAction, codes: []int16{clusterDenied}, notEnough: notEnough,
			alternatives: [][]aclSpec{{clusterACL(kmsg.ACLOperationAll)}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrLeaderAndISRRequest()
				req.ControllerID, req.ControllerEpoch = e.controllerEpoch()
				req.BrokerEpoch = -1
				if ph.denied {
					ts := kmsg.NewLeaderAndISRRequestTopicState()
					ts.Topic, ts.TopicID = ghost(ph), [16]byte{1, 2, 3}
					ps := kmsg.NewLeaderAndISRRequestTopicPartition()
					ps.ControllerEpoch, ps.ISR, ps.Replicas = req.ControllerEpoch, []int32{0}, []int32{0}
					ts.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{ps}
					req.TopicStates = []kmsg.LeaderAndISRRequestTopicState{ts}
				}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.LeaderAndISRResponse)
				if !ph.denied {
					wantCode(t, "LeaderAndIsr", r.ErrorCode, 0)
					return
				}
				wantCode(t, "LeaderAndIsr", r.ErrorCode, ph.code)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				wantCode(t, "partition", r.Topics[0].Partitions[0].ErrorCode, ph.code)
				if e.b.replicas.Get(ghost(ph), 0) != nil {
					t.Error("the denied partition state was applied")
				}
			},
		},
		{
			name: "StopReplica", key: 5, version: 4,
			acls: clusterAction, codes: []int16{clusterDenied}, notEnough: notEnough,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrStopReplicaRequest()
				req.ControllerID, req.ControllerEpoch = e.controllerEpoch()
				req.BrokerEpoch = -1
				if ph.denied {
					rt := kmsg.NewStopReplicaRequestTopic()
					rt.Topic = "stop-victim"
					ps := kmsg.NewStopReplicaRequestTopicPartitionState()
					ps.LeaderEpoch, ps.Delete = -2, true
					rt.PartitionStates = []kmsg.StopReplicaRequestTopicPartitionState{ps}
					req.Topics = []kmsg.StopReplicaRequestTopic{rt}
				}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.StopReplicaResponse)
				if !ph.denied {
					wantCode(t, "StopReplica", r.ErrorCode, 0)
					return
				}
				wantCode(t, "StopReplica", r.ErrorCode, ph.code)
				if len(r.Partitions) != 1 || r.Partitions[0].Topic != "stop-victim" {
					t.Fatalf("partitions %+v", r.Partitions)
				}
				wantCode(t, "partition", r.Partitions[0].ErrorCode, ph.code)
				if e.b.replicas.Get("stop-victim", 0) == nil {
					t.Fatal("the denied StopReplica removed the replica")
				}
			},
		},
		{
			name: "UpdateMetadata", key: 6, version: 8,
			acls: clusterAction, codes: []int16{clusterDenied}, notEnough: notEnough,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrUpdateMetadataRequest()
				req.ControllerID, req.ControllerEpoch = e.controllerEpoch()
				req.BrokerEpoch = -1
				// The live brokers as they are: an allowed request changes
				// nothing.
				for _, lb := range e.b.cluster.liveBrokers() {
					b := kmsg.NewUpdateMetadataRequestLiveBroker()
					b.ID, b.Rack = lb.ID, lb.Rack
					for name, ep := range lb.Endpoints {
						bep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
						bep.ListenerName, bep.Host, bep.Port = name, ep.Host, ep.Port
						b.Endpoints = append(b.Endpoints, bep)
					}
					req.LiveBrokers = append(req.LiveBrokers, b)
				}
				if ph.denied {
					ts := kmsg.NewUpdateMetadataRequestTopicState()
					ts.Topic, ts.TopicID = ghost(ph), [16]byte{4, 5, 6}
					ps := kmsg.NewUpdateMetadataRequestTopicPartition()
					ps.ControllerEpoch, ps.ISR, ps.Replicas = req.ControllerEpoch, []int32{0}, []int32{0}
					ts.PartitionStates = []kmsg.UpdateMetadataRequestTopicPartition{ps}
					req.TopicStates = []kmsg.UpdateMetadataRequestTopicState{ts}
				}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.UpdateMetadataResponse)
				if !ph.denied {
					wantCode(t, "UpdateMetadata", r.ErrorCode, 0)
					if len(e.b.cluster.liveBrokers()) != 1 {
						t.Fatal("the live brokers changed")
					}
					return
				}
				wantCode(t, "UpdateMetadata", r.ErrorCode, ph.code)
				if e.b.topic(ghost(ph)) != nil {
					t.Error("the denied metadata was applied")
				}
			},
		},
		{
			// Broker 7 does not exist: once authorized, the controller
			// answers for an unknown broker.
			name: "ControlledShutdown", key: 7, version: 3,
			acls: clusterAction, codes: []int16{clusterDenied}, notEnough: notEnough,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrControlledShutdownRequest()
				req.BrokerID, req.BrokerEpoch = 7, -1
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ControlledShutdownResponse)
				if ph.denied {
					wantCode(t, "ControlledShutdown", r.ErrorCode, ph.code)
					if len(r.PartitionsRemaining) != 0 {
						t.Errorf("denied answer lists %d partitions", len(r.PartitionsRemaining))
					}
					return
				}
				wantCode(t, "ControlledShutdown", r.ErrorCode, kerr.BrokerNotAvailable.Code)
			},
		},
		{
			// A coordinator's markers: ALTER or CLUSTER_ACTION.
			name: "WriteTxnMarkers", key: 27, version: 1,
			acls: clusterAction, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			notEnough: []authzShortfall{
				{[]aclSpec{clusterACL(opIdempotentWrite), topicACL(opWrite, "markers")}, clusterDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.saved = e.logEnd(t, "markers")
				req := kmsg.NewPtrWriteTxnMarkersRequest()
				m := kmsg.NewWriteTxnMarkersRequestMarker()
				m.ProducerID, m.ProducerEpoch = 900000, 0
				mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
				mt.Topic, mt.Partitions = "markers", []int32{0}
				m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{mt}
				req.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.WriteTxnMarkersResponse)
				if len(r.Markers) != 1 || len(r.Markers[0].Topics) != 1 || len(r.Markers[0].Topics[0].Partitions) != 1 {
					t.Fatalf("markers %+v", r.Markers)
				}
				code := r.Markers[0].Topics[0].Partitions[0].ErrorCode
				end := e.logEnd(t, "markers")
				if ph.denied {
					wantCode(t, "partition", code, ph.code)
					if end != ph.saved {
						t.Errorf("denied marker written: log end %d, was %d", end, ph.saved)
					}
					return
				}
				wantCode(t, "partition", code, 0)
				if end != ph.saved+1 {
					t.Errorf("log end %d, want %d", end, ph.saved+1)
				}
			},
		},
		{
			// v4+ is the brokers' verification batch (KIP-890).
			name: "AddPartitionsToTxn/broker", key: 24, version: 5,
			acls: clusterAction, codes: []int16{clusterDenied},
			notEnough: []authzShortfall{
				{[]aclSpec{txnACL(opWrite, "aptv-").prefixed(), topicACL(opWrite, "orders")}, clusterDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.p = e.initProducer(t, "aptv-"+ph.tag)
				e.beginTxn(t, ph.p, "orders")
				ph.cleanup = func(t *testing.T) { e.endTxn(t, ph.p, false) }
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
				rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly = ph.p.txnID, ph.p.id, ph.p.epoch, true
				tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
				tt.Topic, tt.Partitions = "orders", []int32{0}
				rt.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{tt}
				req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{rt}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.AddPartitionsToTxnResponse)
				if ph.denied {
					wantCode(t, "AddPartitionsToTxn", r.ErrorCode, ph.code)
					if len(r.Transactions) != 0 {
						t.Errorf("denied answer lists %d transactions", len(r.Transactions))
					}
					return
				}
				wantCode(t, "AddPartitionsToTxn", r.ErrorCode, 0)
				if len(r.Transactions) != 1 || len(r.Transactions[0].Topics) != 1 || len(r.Transactions[0].Topics[0].Partitions) != 1 {
					t.Fatalf("transactions %+v", r.Transactions)
				}
				wantCode(t, "partition", r.Transactions[0].Topics[0].Partitions[0].ErrorCode, 0)
			},
		},
	}
}

// groupCases: the group coordinator's APIs, and FindCoordinator.
func groupCases(f *authzFixture) []authzCase {
	offsetFetchV9 := func(group string, topics ...string) *kmsg.OffsetFetchRequest {
		req := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group
		for _, n := range topics {
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic, rt.Partitions = n, []int32{0}
			rg.Topics = append(rg.Topics, rt)
		}
		req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
		return req
	}
	groupTopic := func(rt kmsg.OffsetFetchResponseGroupTopic) string { return rt.Topic }
	readersOffsets := []aclSpec{groupACL(opDescribe, "readers"), topicACL(opDescribe, "orders")}
	readersAlt := [][]aclSpec{{groupACL(opRead, "readers"), topicACL(opRead, "orders")}}
	findCoordinator := func(typ int8, key string) *kmsg.FindCoordinatorRequest {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = typ, key, []string{key}
		return req
	}
	checkCoordinator := func(t *testing.T, ph *authzPhase, code int16, node, port int32, host string) {
		t.Helper()
		if ph.denied {
			wantCode(t, "coordinator", code, ph.code)
			if node != -1 || port != -1 || host != "" {
				t.Errorf("denied answer names node %d at %s:%d", node, host, port)
			}
			return
		}
		wantCode(t, "coordinator", code, 0)
		if node != 0 || port <= 0 {
			t.Errorf("coordinator %d at %s:%d", node, host, port)
		}
	}
	return []authzCase{
		{
			name: "OffsetCommit", key: 8, version: 9,
			acls:  []aclSpec{groupACL(opRead, "commit-").prefixed(), topicACL(opRead, "orders")},
			codes: []int16{groupDenied, topicDenied},
			notEnough: []authzShortfall{
				{[]aclSpec{groupACL(opDescribe, "commit-").prefixed(), topicACL(opRead, "orders")}, groupDenied},
				{[]aclSpec{groupACL(opRead, "commit-").prefixed(), topicACL(opDescribe, "orders")}, topicDenied},
			},
			// Denying the topic, not the group.
			deny:     []aclSpec{topicACL(opRead, "orders").denial()},
			denyCode: &topicDenied,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return offsetCommitRequest("commit-"+ph.tag, "orders", 1)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.OffsetCommitResponse)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				code := r.Topics[0].Partitions[0].ErrorCode
				got := e.committed(t, "commit-"+ph.tag, "orders")
				if ph.denied {
					wantCode(t, "partition", code, ph.code)
					if got != -1 {
						t.Errorf("denied commit stored offset %d", got)
					}
					return
				}
				wantCode(t, "partition", code, 0)
				if got != 1 {
					t.Errorf("committed offset %d, want 1", got)
				}
			},
		},
		{
			name: "OffsetFetch/named topics", key: 9, version: 9,
			acls: readersOffsets, codes: []int16{groupDenied, topicDenied}, alternatives: readersAlt,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return offsetFetchV9("readers", "orders")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				g := resp.(*kmsg.OffsetFetchResponse).Groups[0]
				if ph.denied && ph.code == groupDenied {
					wantCode(t, "group", g.ErrorCode, ph.code)
					if len(g.Topics) != 0 {
						t.Errorf("denied group lists %d topics", len(g.Topics))
					}
					return
				}
				wantCode(t, "group", g.ErrorCode, 0)
				if len(g.Topics) != 1 || len(g.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", g.Topics)
				}
				p := g.Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", p.ErrorCode, ph.code)
					if p.Offset != -1 || p.LeaderEpoch != -1 || p.Metadata == nil || *p.Metadata != "" {
						t.Errorf("denied topic leaks %+v", p)
					}
					return
				}
				wantCode(t, "partition", p.ErrorCode, 0)
				if p.Offset != 2 {
					t.Errorf("offset %d, want 2", p.Offset)
				}
			},
		},
		{
			// All of a group's offsets: the topics the principal may not
			// describe are left out.
			name: "OffsetFetch/all topics", key: 9, version: 9,
			acls: readersOffsets, codes: []int16{groupDenied, 0}, alternatives: readersAlt,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return offsetFetchV9("readers")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				g := resp.(*kmsg.OffsetFetchResponse).Groups[0]
				switch {
				case ph.denied && ph.code == groupDenied:
					wantCode(t, "group", g.ErrorCode, ph.code)
					wantTopics(t, "topics", g.Topics, groupTopic)
				case ph.denied:
					wantCode(t, "group", g.ErrorCode, 0)
					wantTopics(t, "topics", g.Topics, groupTopic)
				case ph.super:
					wantTopics(t, "topics", g.Topics, groupTopic, "orders", "secret")
				default:
					wantTopics(t, "topics", g.Topics, groupTopic, "orders")
				}
			},
		},
		{
			name: "OffsetFetch/one group", key: 9, version: 7,
			acls: readersOffsets, codes: []int16{groupDenied, topicDenied}, alternatives: readersAlt,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.Group = "readers"
				req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "orders", Partitions: []int32{0}}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.OffsetFetchResponse)
				if ph.denied && ph.code == groupDenied {
					wantCode(t, "group", r.ErrorCode, ph.code)
					if len(r.Topics) != 0 {
						t.Errorf("denied group lists %d topics", len(r.Topics))
					}
					return
				}
				wantCode(t, "group", r.ErrorCode, 0)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				p := r.Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", p.ErrorCode, ph.code)
					if p.Offset != -1 {
						t.Errorf("denied topic leaks offset %d", p.Offset)
					}
					return
				}
				if p.Offset != 2 {
					t.Errorf("offset %d, want 2", p.Offset)
				}
			},
		},
		{
			name: "FindCoordinator/group", key: 10, version: 6,
			acls:         []aclSpec{groupACL(opDescribe, "readers")},
			codes:        []int16{groupDenied},
			alternatives: [][]aclSpec{{groupACL(opRead, "readers")}, {groupACL(opDelete, "read").prefixed()}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribe)}, groupDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return findCoordinator(coordinatorGroup, "readers")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				c := resp.(*kmsg.FindCoordinatorResponse).Coordinators[0]
				checkCoordinator(t, ph, c.ErrorCode, c.NodeID, c.Port, c.Host)
				if c.ErrorMessage != nil {
					// v4+ coordinators carry no message in Kafka.
					t.Errorf("message %q", *c.ErrorMessage)
				}
			},
		},
		{
			name: "FindCoordinator/transaction", key: 10, version: 6,
			acls:         []aclSpec{txnACL(opDescribe, "ongoing")},
			codes:        []int16{txnDenied},
			alternatives: [][]aclSpec{{txnACL(opWrite, "ongoing")}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return findCoordinator(coordinatorTransaction, "ongoing")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				c := resp.(*kmsg.FindCoordinatorResponse).Coordinators[0]
				checkCoordinator(t, ph, c.ErrorCode, c.NodeID, c.Port, c.Host)
			},
		},
		{
			name: "FindCoordinator/one key", key: 10, version: 3,
			acls:  []aclSpec{groupACL(opDescribe, "readers")},
			codes: []int16{groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return findCoordinator(coordinatorGroup, "readers")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.FindCoordinatorResponse)
				checkCoordinator(t, ph, r.ErrorCode, r.NodeID, r.Port, r.Host)
				if ph.denied && stringOr(r.ErrorMessage) != "Group authorization failed." {
					t.Errorf("message %v", r.ErrorMessage)
				}
			},
		},
		{
			name: "JoinGroup", key: 11, version: 9,
			acls:      []aclSpec{groupACL(opRead, "join-").prefixed()},
			codes:     []int16{groupDenied},
			notEnough: []authzShortfall{{[]aclSpec{groupACL(opDescribe, "join-").prefixed()}, groupDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group, req.InstanceID, req.ProtocolType = "join-"+ph.tag, strp("i"), "consumer"
				req.MemberID = "m-from-the-client"
				req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 300000, 60000
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = "range", []byte("subscription")
				req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
				if !ph.denied {
					// A new static member joins without an id.
					req.MemberID = ""
				}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.JoinGroupResponse)
				if ph.denied {
					wantCode(t, "JoinGroup", r.ErrorCode, ph.code)
					if r.MemberID != "" || r.LeaderID != "" || r.Generation != -1 || r.Protocol != nil || len(r.Members) != 0 {
						t.Errorf("denied answer: %+v", r)
					}
					if g := e.groupState(t, "join-"+ph.tag); len(g.Members) != 0 {
						t.Errorf("denied join added a member: %+v", g)
					}
					return
				}
				wantCode(t, "JoinGroup", r.ErrorCode, 0)
				if r.MemberID == "" || r.Generation < 1 {
					t.Errorf("joined as %q, generation %d", r.MemberID, r.Generation)
				}
			},
		},
		{
			name: "Heartbeat", key: 12, version: 4,
			acls:  []aclSpec{groupACL(opRead, "live")},
			codes: []int16{groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrHeartbeatRequest()
				req.Group, req.Generation, req.MemberID, req.InstanceID = f.live.group, f.live.generation, f.live.memberID, &f.live.instanceID
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				code := resp.(*kmsg.HeartbeatResponse).ErrorCode
				if ph.denied {
					wantCode(t, "Heartbeat", code, ph.code)
					return
				}
				wantCode(t, "Heartbeat", code, 0)
			},
		},
		{
			name: "LeaveGroup", key: 13, version: 5,
			acls:  []aclSpec{groupACL(opRead, "leave-").prefixed()},
			codes: []int16{groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.m = e.joinGroup(t, "leave-"+ph.tag, "i", nil)
				req := kmsg.NewPtrLeaveGroupRequest()
				req.Group = ph.m.group
				lm := kmsg.NewLeaveGroupRequestMember()
				lm.MemberID, lm.InstanceID = ph.m.memberID, &ph.m.instanceID
				req.Members = []kmsg.LeaveGroupRequestMember{lm}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.LeaveGroupResponse)
				members := len(e.groupState(t, ph.m.group).Members)
				if ph.denied {
					wantCode(t, "LeaveGroup", r.ErrorCode, ph.code)
					if len(r.Members) != 0 || members != 1 {
						t.Errorf("denied leave: %d members answered, %d left in the group", len(r.Members), members)
					}
					return
				}
				wantCode(t, "LeaveGroup", r.ErrorCode, 0)
				if len(r.Members) != 1 || r.Members[0].ErrorCode != 0 || members != 0 {
					t.Errorf("leave: %+v, %d members left", r.Members, members)
				}
			},
		},
		{
			name: "SyncGroup", key: 14, version: 5,
			acls:  []aclSpec{groupACL(opRead, "live")},
			codes: []int16{groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return syncGroupRequest(f.live)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.SyncGroupResponse)
				if ph.denied {
					wantCode(t, "SyncGroup", r.ErrorCode, ph.code)
					if len(r.MemberAssignment) != 0 {
						t.Errorf("denied sync leaks the assignment %q", r.MemberAssignment)
					}
					return
				}
				wantCode(t, "SyncGroup", r.ErrorCode, 0)
				if string(r.MemberAssignment) != liveAssignment {
					t.Errorf("assignment %q", r.MemberAssignment)
				}
			},
		},
		{
			name: "DescribeGroups", key: 15, version: 5,
			acls:         []aclSpec{groupACL(opDescribe, "live")},
			codes:        []int16{groupDenied},
			alternatives: [][]aclSpec{{groupACL(opRead, "live")}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribe)}, groupDenied}},
			// A DENY of every operation overrides an ALLOW of one.
			deny: []aclSpec{groupACL(kmsg.ACLOperationAll, "live").denial()},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Groups, req.IncludeAuthorizedOperations = []string{"live"}, true
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				g := resp.(*kmsg.DescribeGroupsResponse).Groups[0]
				if g.Group != "live" {
					t.Fatalf("group %q", g.Group)
				}
				if ph.denied {
					wantCode(t, "group", g.ErrorCode, ph.code)
					if g.State != "" || g.ProtocolType != "" || g.Protocol != "" || len(g.Members) != 0 || g.AuthorizedOperations != -2147483648 {
						t.Errorf("denied group leaks %+v", g)
					}
					return
				}
				wantCode(t, "group", g.ErrorCode, 0)
				if len(g.Members) != 1 || string(g.Members[0].MemberAssignment) != liveAssignment {
					t.Errorf("members %+v", g.Members)
				}
				want := opsBits(opDescribe)
				switch {
				case ph.super:
					want = allGroupOps
				case ph.kind == "alternative":
					want = opsBits(opRead, opDescribe)
				}
				if g.AuthorizedOperations != want {
					t.Errorf("authorized operations %b, want %b", g.AuthorizedOperations, want)
				}
			},
		},
		{
			// The groups the principal may describe, or all of them with
			// DESCRIBE on the cluster.
			name: "ListGroups", key: 16, version: 5,
			acls:         []aclSpec{groupACL(opDescribe, "live")},
			codes:        []int16{0},
			alternatives: [][]aclSpec{{clusterACL(opDescribe)}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return kmsg.NewPtrListGroupsRequest()
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ListGroupsResponse)
				wantCode(t, "ListGroups", r.ErrorCode, 0)
				name := func(g kmsg.ListGroupsResponseGroup) string { return g.Group }
				switch {
				case ph.denied:
					wantTopics(t, "groups", r.Groups, name)
				case ph.super || ph.kind == "alternative":
					for _, g := range []string{"live", "readers", "hidden"} {
						if !has(r.Groups, name, g) {
							t.Errorf("group %s not listed", g)
						}
					}
				default:
					wantTopics(t, "groups", r.Groups, name, "live")
				}
			},
		},
		{
			name: "DeleteGroups", key: 42, version: 2,
			acls:      []aclSpec{groupACL(opDelete, "dg-").prefixed()},
			codes:     []int16{groupDenied},
			notEnough: []authzShortfall{{[]aclSpec{groupACL(opRead, "dg-").prefixed()}, groupDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.commitOffset(t, "dg-"+ph.tag, "orders", 1)
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{"dg-" + ph.tag}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DeleteGroupsResponse)
				if len(r.Groups) != 1 {
					t.Fatalf("groups %+v", r.Groups)
				}
				got := e.committed(t, "dg-"+ph.tag, "orders")
				if ph.denied {
					wantCode(t, "group", r.Groups[0].ErrorCode, ph.code)
					if got != 1 {
						t.Errorf("denied delete: committed offset %d", got)
					}
					return
				}
				wantCode(t, "group", r.Groups[0].ErrorCode, 0)
				if got != -1 {
					t.Errorf("deleted group still has offset %d", got)
				}
			},
		},
		{
			name: "OffsetDelete", key: 47, version: 0,
			acls:  []aclSpec{groupACL(opDelete, "od-").prefixed(), topicACL(opRead, "orders")},
			codes: []int16{groupDenied, topicDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.commitOffset(t, "od-"+ph.tag, "orders", 1)
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = "od-" + ph.tag
				rt := kmsg.NewOffsetDeleteRequestTopic()
				rt.Topic = "orders"
				rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
				req.Topics = []kmsg.OffsetDeleteRequestTopic{rt}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.OffsetDeleteResponse)
				got := e.committed(t, "od-"+ph.tag, "orders")
				if ph.denied && ph.code == groupDenied {
					wantCode(t, "group", r.ErrorCode, ph.code)
					if len(r.Topics) != 0 || got != 1 {
						t.Errorf("denied: %d topics answered, committed offset %d", len(r.Topics), got)
					}
					return
				}
				wantCode(t, "group", r.ErrorCode, 0)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				code := r.Topics[0].Partitions[0].ErrorCode
				if ph.denied {
					wantCode(t, "partition", code, ph.code)
					if got != 1 {
						t.Errorf("denied: committed offset %d", got)
					}
					return
				}
				wantCode(t, "partition", code, 0)
				if got != -1 {
					t.Errorf("offset still committed: %d", got)
				}
			},
		},
	}
}

// txnCases: producer ids, transactions and their coordinator, and
// OffsetForLeaderEpoch.
func txnCases(f *authzFixture) []authzCase {
	initProducerID := func(txnID *string) *kmsg.InitProducerIDRequest {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = txnID, 300000
		req.ProducerID, req.ProducerEpoch = -1, -1
		return req
	}
	checkProducerID := func(t *testing.T, ph *authzPhase, resp kmsg.Response) {
		t.Helper()
		r := resp.(*kmsg.InitProducerIDResponse)
		if ph.denied {
			wantCode(t, "InitProducerId", r.ErrorCode, ph.code)
			if r.ProducerID != -1 || r.ProducerEpoch != -1 {
				t.Errorf("denied answer hands out producer %d epoch %d", r.ProducerID, r.ProducerEpoch)
			}
			return
		}
		wantCode(t, "InitProducerId", r.ErrorCode, 0)
		if r.ProducerID < 0 {
			t.Errorf("producer id %d", r.ProducerID)
		}
	}
	offsetForLeaderEpoch := func(replica int32) *kmsg.OffsetForLeaderEpochRequest {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = replica
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "orders"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.CurrentLeaderEpoch, rp.LeaderEpoch = -1, 0
		rt.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{rp}
		req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{rt}
		return req
	}
	checkEpochEnd := func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
		t.Helper()
		sp := resp.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
		if ph.denied {
			wantCode(t, "partition", sp.ErrorCode, ph.code)
			if sp.LeaderEpoch != -1 || sp.EndOffset != -1 {
				t.Errorf("denied answer: epoch %d ends at %d", sp.LeaderEpoch, sp.EndOffset)
			}
			return
		}
		wantCode(t, "partition", sp.ErrorCode, 0)
		if end := e.logEnd(t, "orders"); sp.EndOffset != end || sp.LeaderEpoch != 0 {
			t.Errorf("epoch %d ends at %d, want 0 at %d", sp.LeaderEpoch, sp.EndOffset, end)
		}
	}
	txnStateIs := func(t *testing.T, e *authzEnv, p producer, want string) {
		t.Helper()
		if s := e.txnState(t, p.txnID); s.State != want {
			t.Errorf("transaction %s is %s, want %s", p.txnID, s.State, want)
		}
	}
	return []authzCase{
		{
			// An idempotent producer: IDEMPOTENT_WRITE on the cluster or,
			// since KIP-679, WRITE on any topic.
			name: "InitProducerId/idempotent", key: 22, version: 5,
			acls:  []aclSpec{clusterACL(opIdempotentWrite)},
			codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{
				{topicACL(opWrite, "orders")},
				{topicACL(opWrite, "no-such-topic-").prefixed()},
				{topicACL(kmsg.ACLOperationAll, "*")},
			},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opRead, "orders"), topicACL(opDescribe, "*")}, clusterDenied},
				{[]aclSpec{clusterACL(opWrite)}, clusterDenied},
				{[]aclSpec{topicACL(opWrite, "orders"), topicACL(opWrite, "orders").denial()}, clusterDenied},
				{[]aclSpec{topicACL(opWrite, "orders"), topicACL(opWrite, "*").denial()}, clusterDenied},
				{[]aclSpec{txnACL(opWrite, "*")}, clusterDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return initProducerID(nil)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkProducerID(t, ph, resp)
			},
		},
		{
			name: "InitProducerId/transactional", key: 22, version: 5,
			acls:  []aclSpec{txnACL(opWrite, "init-tx")},
			codes: []int16{txnDenied},
			notEnough: []authzShortfall{
				{[]aclSpec{txnACL(opDescribe, "init-tx")}, txnDenied},
				{[]aclSpec{clusterACL(opIdempotentWrite), topicACL(opWrite, "*")}, txnDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return initProducerID(strp("init-tx"))
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkProducerID(t, ph, resp)
			},
		},
		{
			// A consumer checking for truncation: DESCRIBE on the topic, or
			// CLUSTER_ACTION.
			name: "OffsetForLeaderEpoch/consumer", key: 23, version: 4,
			acls:         []aclSpec{topicACL(opDescribe, "orders")},
			codes:        []int16{topicDenied},
			alternatives: [][]aclSpec{{clusterACL(opClusterAction)}, {topicACL(opRead, "orders")}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribe)}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return offsetForLeaderEpoch(-1)
			},
			check: checkEpochEnd,
		},
		{
			// The same from a follower: Kafka does not look at the replica
			// id here.
			name: "OffsetForLeaderEpoch/follower", key: 23, version: 4,
			acls:         []aclSpec{clusterACL(opClusterAction)},
			codes:        []int16{topicDenied},
			alternatives: [][]aclSpec{{topicACL(opDescribe, "orders")}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opAlter)}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return offsetForLeaderEpoch(0)
			},
			check: checkEpochEnd,
		},
		{
			// A client's (v0-3) AddPartitionsToTxn: WRITE on the id and on
			// each topic.
			name: "AddPartitionsToTxn/client", key: 24, version: 3,
			acls:  []aclSpec{txnACL(opWrite, "apt-").prefixed(), topicACL(opWrite, "orders")},
			codes: []int16{txnDenied, topicDenied},
			notEnough: []authzShortfall{
				{[]aclSpec{txnACL(opWrite, "apt-").prefixed(), topicACL(opRead, "orders"), clusterACL(opClusterAction)}, topicDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.p = e.initProducer(t, "apt-"+ph.tag)
				if !ph.denied {
					ph.cleanup = func(t *testing.T) { e.endTxn(t, ph.p, false) }
				}
				return addPartitionsRequest(ph.p, "orders")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.AddPartitionsToTxnResponse)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				code := r.Topics[0].Partitions[0].ErrorCode
				if ph.denied {
					wantCode(t, "partition", code, ph.code)
					txnStateIs(t, e, ph.p, "Empty")
					return
				}
				wantCode(t, "partition", code, 0)
				txnStateIs(t, e, ph.p, "Ongoing")
			},
		},
		{
			name: "AddOffsetsToTxn", key: 25, version: 4,
			acls:  []aclSpec{txnACL(opWrite, "aot-").prefixed(), groupACL(opRead, "txn-group")},
			codes: []int16{txnDenied, groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.p = e.initProducer(t, "aot-"+ph.tag)
				if !ph.denied {
					ph.cleanup = func(t *testing.T) { e.endTxn(t, ph.p, false) }
				}
				req := kmsg.NewPtrAddOffsetsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = ph.p.txnID, ph.p.id, ph.p.epoch, "txn-group"
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				code := resp.(*kmsg.AddOffsetsToTxnResponse).ErrorCode
				if ph.denied {
					wantCode(t, "AddOffsetsToTxn", code, ph.code)
					txnStateIs(t, e, ph.p, "Empty")
					return
				}
				wantCode(t, "AddOffsetsToTxn", code, 0)
				txnStateIs(t, e, ph.p, "Ongoing")
			},
		},
		{
			name: "EndTxn", key: 26, version: 4,
			acls:      []aclSpec{txnACL(opWrite, "end-").prefixed()},
			codes:     []int16{txnDenied},
			notEnough: []authzShortfall{{[]aclSpec{txnACL(opDescribe, "end-").prefixed()}, txnDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.p = e.initProducer(t, "end-"+ph.tag)
				e.beginTxn(t, ph.p, "orders")
				if ph.denied {
					ph.cleanup = func(t *testing.T) { e.endTxn(t, ph.p, false) }
				}
				req := kmsg.NewPtrEndTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = ph.p.txnID, ph.p.id, ph.p.epoch, true
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				code := resp.(*kmsg.EndTxnResponse).ErrorCode
				if ph.denied {
					wantCode(t, "EndTxn", code, ph.code)
					txnStateIs(t, e, ph.p, "Ongoing")
					return
				}
				wantCode(t, "EndTxn", code, 0)
				eventually(t, "commit", func() string {
					if s := e.txnState(t, ph.p.txnID).State; s != "CompleteCommit" {
						return s
					}
					return ""
				})
			},
		},
		{
			name: "TxnOffsetCommit", key: 28, version: 4,
			acls:  []aclSpec{txnACL(opWrite, "toc-").prefixed(), groupACL(opRead, "toc-group"), topicACL(opRead, "orders")},
			codes: []int16{txnDenied, groupDenied, topicDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.p = e.initProducer(t, "toc-"+ph.tag)
				add := kmsg.NewPtrAddOffsetsToTxnRequest()
				add.SetVersion(4)
				add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = ph.p.txnID, ph.p.id, ph.p.epoch, "toc-group"
				if code := e.admin(t, add).(*kmsg.AddOffsetsToTxnResponse).ErrorCode; code != 0 {
					t.Fatalf("AddOffsetsToTxn: %s", errName(code))
				}
				ph.cleanup = func(t *testing.T) { e.endTxn(t, ph.p, false) }
				req := kmsg.NewPtrTxnOffsetCommitRequest()
				req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = ph.p.txnID, "toc-group", ph.p.id, ph.p.epoch
				req.Generation = -1
				rt := kmsg.NewTxnOffsetCommitRequestTopic()
				rt.Topic = "orders"
				rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
				rp.Offset = 1
				rt.Partitions = []kmsg.TxnOffsetCommitRequestTopicPartition{rp}
				req.Topics = []kmsg.TxnOffsetCommitRequestTopic{rt}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.TxnOffsetCommitResponse)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				code := r.Topics[0].Partitions[0].ErrorCode
				if ph.denied {
					wantCode(t, "partition", code, ph.code)
					return
				}
				wantCode(t, "partition", code, 0)
			},
		},
		{
			// DESCRIBE on the id; the partitions of topics the principal
			// may not describe are left out.
			name: "DescribeTransactions", key: 65, version: 0,
			acls:         []aclSpec{txnACL(opDescribe, "ongoing"), topicACL(opDescribe, "orders")},
			codes:        []int16{txnDenied, 0},
			alternatives: [][]aclSpec{{txnACL(opWrite, "ongoing"), topicACL(opRead, "orders")}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeTransactionsRequest()
				req.TransactionalIDs = []string{"ongoing"}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				s := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates[0]
				if s.TransactionalID != "ongoing" {
					t.Fatalf("transaction %q", s.TransactionalID)
				}
				topic := func(t kmsg.DescribeTransactionsResponseTransactionStateTopic) string { return t.Topic }
				switch {
				case ph.denied && ph.code == txnDenied:
					wantCode(t, "transaction", s.ErrorCode, ph.code)
					if s.State != "" || s.ProducerID != 0 || s.ProducerEpoch != 0 || s.TimeoutMillis != 0 || s.StartTimestamp != 0 || len(s.Topics) != 0 {
						t.Errorf("denied transaction leaks %+v", s)
					}
				case ph.denied:
					wantCode(t, "transaction", s.ErrorCode, 0)
					wantTopics(t, "topics", s.Topics, topic)
				default:
					wantCode(t, "transaction", s.ErrorCode, 0)
					if s.State != "Ongoing" || s.ProducerID != f.ongoing.id {
						t.Errorf("transaction %+v", s)
					}
					wantTopics(t, "topics", s.Topics, topic, "orders")
				}
			},
		},
		{
			// Only the transactional ids the principal may describe.
			name: "ListTransactions", key: 66, version: 1,
			acls:         []aclSpec{txnACL(opDescribe, "ongoing")},
			codes:        []int16{0},
			alternatives: [][]aclSpec{{txnACL(opWrite, "ong").prefixed()}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return kmsg.NewPtrListTransactionsRequest()
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ListTransactionsResponse)
				wantCode(t, "ListTransactions", r.ErrorCode, 0)
				id := func(s kmsg.ListTransactionsResponseTransactionState) string { return s.TransactionalID }
				switch {
				case ph.denied:
					wantTopics(t, "transactions", r.TransactionStates, id)
				case ph.super:
					if !has(r.TransactionStates, id, "ongoing") || !has(r.TransactionStates, id, "warm-up") {
						t.Errorf("super user sees %+v", r.TransactionStates)
					}
				default:
					wantTopics(t, "transactions", r.TransactionStates, id, "ongoing")
				}
			},
		},
	}
}

// TestAuthorizeAddPartitionsToTxnInternalTopic: a client may not add an
// internal topic to its transaction, whatever its ACLs, super users
// included (Kafka leaves internal topics out of the topics it authorizes);
// the other partitions are not attempted.
func TestAuthorizeAddPartitionsToTxnInternalTopic(t *testing.T) {
	e := startAuthzBroker(t)
	e.awaitCoordinators(t)
	e.createTopic(t, "orders", 1)
	const alice = "User:alice"
	e.grant(t, alice, txnACL(kmsg.ACLOperationAll, "*"), topicACL(kmsg.ACLOperationAll, "*"), clusterACL(kmsg.ACLOperationAll))
	for _, principal := range []string{alice, authzSuper} {
		p := e.initProducer(t, "internal-"+principal)
		req := addPartitionsRequest(p, "orders")
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = offsetsTopic, []int32{0}
		req.Topics = append(req.Topics, rt)
		resp := e.send(t, principal, authzHost, req).(*kmsg.AddPartitionsToTxnResponse)
		want := map[string]int16{"orders": kerr.OperationNotAttempted.Code, offsetsTopic: topicDenied}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				wantCode(t, principal+" "+rt.Topic, rp.ErrorCode, want[rt.Topic])
			}
			delete(want, rt.Topic)
		}
		if len(want) != 0 {
			t.Errorf("%s: no answer for %v", principal, want)
		}
		if s := e.txnState(t, p.txnID).State; s != "Empty" {
			t.Errorf("%s: transaction %s", principal, s)
		}
	}
}

// adminCases: topics, records, configs, log dirs, elections and
// reassignments.
func adminCases(f *authzFixture) []authzCase {
	createTopics := func(name string) *kmsg.CreateTopicsRequest {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		req.Topics, req.TimeoutMillis = []kmsg.CreateTopicsRequestTopic{rt}, 10000
		return req
	}
	checkCreated := func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response, name string, configsVisible bool) {
		t.Helper()
		st := resp.(*kmsg.CreateTopicsResponse).Topics[0]
		if ph.denied {
			wantCode(t, "topic", st.ErrorCode, ph.code)
			if stringOr(st.ErrorMessage) != "Authorization failed." {
				t.Errorf("message %v", st.ErrorMessage)
			}
			// Nor may it see the configs it would have had, unless it may
			// describe them.
			configCode := topicDenied
			if ph.allows(opDescribeConfigs) || ph.allows(opAlterConfigs) {
				configCode = 0
			}
			wantCode(t, "topic configs", st.ConfigErrorCode, configCode)
			if st.NumPartitions != -1 || st.ReplicationFactor != -1 || st.TopicID != ([16]byte{}) || len(st.Configs) != 0 {
				t.Errorf("denied answer: %+v", st)
			}
			if e.b.topic(name) != nil {
				t.Error("created although denied")
			}
			return
		}
		wantCode(t, "topic", st.ErrorCode, 0)
		if configsVisible {
			wantCode(t, "topic configs", st.ConfigErrorCode, 0)
			if st.NumPartitions != 1 || st.ReplicationFactor != 1 || st.TopicID == ([16]byte{}) || len(st.Configs) == 0 {
				t.Errorf("answer without the topic's configs: %+v", st)
			}
		} else {
			// CREATE without DESCRIBE_CONFIGS: Kafka's ZkAdminManager
			// fills in neither the configs nor the partition count,
			// replication factor and id.
			wantCode(t, "topic configs", st.ConfigErrorCode, topicDenied)
			if st.NumPartitions != -1 || st.ReplicationFactor != -1 || st.TopicID != ([16]byte{}) || len(st.Configs) != 0 {
				t.Errorf("answer shows what DESCRIBE_CONFIGS would: %+v", st)
			}
		}
		eventually(t, "created topic", func() string {
			if e.b.topic(name) == nil {
				return "not created"
			}
			return ""
		})
	}
	deleteTopics := func(e *authzEnv, name string, id [16]byte) *kmsg.DeleteTopicsRequest {
		req := kmsg.NewPtrDeleteTopicsRequest()
		rt := kmsg.NewDeleteTopicsRequestTopic()
		if name != "" {
			rt.Topic = strp(name)
		}
		rt.TopicID = id
		req.Topics, req.TimeoutMillis = []kmsg.DeleteTopicsRequestTopic{rt}, 10000
		return req
	}
	checkDeleted := func(t *testing.T, e *authzEnv, ph *authzPhase, st kmsg.DeleteTopicsResponseTopic, name string) {
		t.Helper()
		if ph.denied {
			wantCode(t, "topic", st.ErrorCode, ph.code)
			if st.ErrorMessage != nil {
				t.Errorf("message %q", *st.ErrorMessage)
			}
			if e.b.topic(name) == nil {
				t.Error("deleted although denied")
			}
			return
		}
		wantCode(t, "topic", st.ErrorCode, 0)
		if e.b.topic(name) != nil {
			t.Error("not deleted")
		}
	}
	retention := func(ph *authzPhase) string {
		return fmt.Sprint(3600000 + len(ph.tag)*1000 + int(ph.tag[len(ph.tag)-1]))
	}
	checkAltered := func(t *testing.T, e *authzEnv, ph *authzPhase, code int16, msg *string, typ kmsg.ConfigResourceType) {
		t.Helper()
		if ph.denied {
			wantCode(t, "resource", code, ph.code)
			// Kafka's configsAuthorizationApiError has no message.
			if msg != nil {
				t.Errorf("message %q", *msg)
			}
		} else {
			wantCode(t, "resource", code, 0)
		}
		if typ != kmsg.ConfigResourceTypeTopic {
			return
		}
		got := e.b.topicSetting(e.b.topic("cfg"), "retention.ms")
		if changed := got == retention(ph); changed == ph.denied {
			t.Errorf("retention.ms %s after the request (asked for %s)", got, retention(ph))
		}
	}
	alterConfigs := func(ph *authzPhase, typ kmsg.ConfigResourceType, name string) *kmsg.AlterConfigsRequest {
		req := kmsg.NewPtrAlterConfigsRequest()
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = typ, name
		if typ == kmsg.ConfigResourceTypeTopic {
			rr.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: strp(retention(ph))}}
		}
		req.Resources = []kmsg.AlterConfigsRequestResource{rr}
		return req
	}
	incrementalAlterConfigs := func(ph *authzPhase, typ kmsg.ConfigResourceType, name string) *kmsg.IncrementalAlterConfigsRequest {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = typ, name
		if typ == kmsg.ConfigResourceTypeTopic {
			rr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpSet, Value: strp(retention(ph))}}
		}
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{rr}
		return req
	}
	describeConfigs := func(typ kmsg.ConfigResourceType, name string) *kmsg.DescribeConfigsRequest {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: typ, ResourceName: name}}
		return req
	}
	checkDescribed := func(t *testing.T, ph *authzPhase, resp kmsg.Response, msg string) {
		t.Helper()
		rr := resp.(*kmsg.DescribeConfigsResponse).Resources[0]
		if ph.denied {
			wantCode(t, "resource", rr.ErrorCode, ph.code)
			if stringOr(rr.ErrorMessage) != msg || len(rr.Configs) != 0 {
				t.Errorf("denied answer: message %v, %d configs", rr.ErrorMessage, len(rr.Configs))
			}
			return
		}
		wantCode(t, "resource", rr.ErrorCode, 0)
		if len(rr.Configs) == 0 {
			t.Error("no configs")
		}
	}
	electLeaders := func(topics ...string) *kmsg.ElectLeadersRequest {
		req := kmsg.NewPtrElectLeadersRequest()
		req.TimeoutMillis = 10000
		if topics == nil {
			req.Topics = nil
		}
		for _, n := range topics {
			req.Topics = append(req.Topics, kmsg.ElectLeadersRequestTopic{Topic: n, Partitions: []int32{0}})
		}
		return req
	}
	clusterDescribe := []aclSpec{clusterACL(opDescribe)}
	clusterAlter := []aclSpec{clusterACL(opAlter)}
	return []authzCase{
		{
			// CREATE on the cluster or on the topic; without
			// DESCRIBE_CONFIGS the answer leaves the topic's configs out.
			name: "CreateTopics", key: 19, version: 7,
			acls:         []aclSpec{topicACL(opCreate, "new-").prefixed()},
			codes:        []int16{topicDenied},
			alternatives: [][]aclSpec{{clusterACL(opCreate)}},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opAlter, "new-").prefixed(), topicACL(opDescribeConfigs, "new-").prefixed()}, topicDenied},
				{[]aclSpec{clusterACL(opAlter)}, topicDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return createTopics("new-" + ph.tag)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkCreated(t, e, ph, resp, "new-"+ph.tag, ph.super)
			},
		},
		{
			name: "CreateTopics/with DESCRIBE_CONFIGS", key: 19, version: 7,
			acls:  []aclSpec{topicACL(opCreate, "newc-").prefixed(), topicACL(opDescribeConfigs, "newc-").prefixed()},
			codes: []int16{topicDenied, notRequired},
			alternatives: [][]aclSpec{
				{clusterACL(opCreate), topicACL(opAlterConfigs, "newc-").prefixed()},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return createTopics("newc-" + ph.tag)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkCreated(t, e, ph, resp, "newc-"+ph.tag, true)
			},
		},
		{
			name: "DeleteTopics", key: 20, version: 6,
			acls:      []aclSpec{topicACL(opDelete, "doomed-").prefixed()},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribe, "doomed-").prefixed(), topicACL(opAlter, "doomed-").prefixed()}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.createTopic(t, "doomed-"+ph.tag, 1)
				return deleteTopics(e, "doomed-"+ph.tag, [16]byte{})
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				st := resp.(*kmsg.DeleteTopicsResponse).Topics[0]
				checkDeleted(t, e, ph, st, "doomed-"+ph.tag)
			},
		},
		{
			// By id: the name only to a principal that may describe the
			// topic.
			name: "DeleteTopics/by topic id", key: 20, version: 6,
			acls:      []aclSpec{topicACL(opDelete, "doomid-").prefixed()},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribe, "doomid-").prefixed()}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.createTopic(t, "doomid-"+ph.tag, 1)
				return deleteTopics(e, "", e.b.topic("doomid-"+ph.tag).ID)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				st := resp.(*kmsg.DeleteTopicsResponse).Topics[0]
				name := "doomid-" + ph.tag
				// DELETE implies DESCRIBE: only the principal with no
				// ACL at all may not learn the name.
				wantName := ph.kind != "none"
				if wantName != (stringOr(st.Topic) == name) {
					t.Errorf("topic name %v (shown: want %v)", st.Topic, wantName)
				}
				checkDeleted(t, e, ph, st, name)
			},
		},
		{
			name: "DeleteRecords", key: 21, version: 2,
			acls:      []aclSpec{topicACL(opDelete, "trim")},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opWrite, "trim"), topicACL(opAlter, "trim")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.produce(t, "trim", plainOpts(), 1, nil)
				ph.saved = e.b.topic("trim").Partitions[0].LogStartOffset()
				req := kmsg.NewPtrDeleteRecordsRequest()
				req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "trim", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: -1}}}}
				req.TimeoutMillis = 10000
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
				start := e.b.topic("trim").Partitions[0].LogStartOffset()
				if ph.denied {
					wantCode(t, "partition", sp.ErrorCode, ph.code)
					if sp.LowWatermark != -1 || start != ph.saved {
						t.Errorf("denied: low watermark %d, log start %d (was %d)", sp.LowWatermark, start, ph.saved)
					}
					return
				}
				wantCode(t, "partition", sp.ErrorCode, 0)
				if end := e.logEnd(t, "trim"); sp.LowWatermark != end || start != end {
					t.Errorf("low watermark %d, log start %d, want %d", sp.LowWatermark, start, end)
				}
			},
		},
		{
			name: "CreatePartitions", key: 37, version: 3,
			acls:      []aclSpec{topicACL(opAlter, "grow-").prefixed()},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opCreate, "grow-").prefixed(), clusterACL(opCreate)}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.createTopic(t, "grow-"+ph.tag, 1)
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "grow-" + ph.tag, Count: 2}}
				req.TimeoutMillis = 10000
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				st := resp.(*kmsg.CreatePartitionsResponse).Topics[0]
				name := "grow-" + ph.tag
				if ph.denied {
					wantCode(t, "topic", st.ErrorCode, ph.code)
					if stringOr(st.ErrorMessage) != "The topic authorization is failed." {
						t.Errorf("message %v", st.ErrorMessage)
					}
					if n := len(e.b.topic(name).Partitions); n != 1 {
						t.Errorf("denied: %d partitions", n)
					}
					return
				}
				wantCode(t, "topic", st.ErrorCode, 0)
				eventually(t, "new partition", func() string {
					if n := len(e.b.topic(name).Partitions); n != 2 {
						return fmt.Sprintf("%d partitions", n)
					}
					return ""
				})
			},
		},
		{
			// DESCRIBE_CONFIGS, implied by ALTER_CONFIGS; the ACL is for
			// the tests' host only.
			name: "DescribeConfigs/topic", key: 32, version: 4,
			acls:         []aclSpec{topicACL(opDescribeConfigs, "orders").onHost(authzHost)},
			codes:        []int16{topicDenied},
			alternatives: [][]aclSpec{{topicACL(opAlterConfigs, "orders")}},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opDescribe, "orders"), topicACL(opAlter, "orders")}, topicDenied},
				{[]aclSpec{clusterACL(opDescribeConfigs)}, topicDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return describeConfigs(kmsg.ConfigResourceTypeTopic, "orders")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkDescribed(t, ph, resp, "Topic authorization failed.")
			},
		},
		{
			name: "DescribeConfigs/broker", key: 32, version: 4,
			acls:         []aclSpec{clusterACL(opDescribeConfigs)},
			codes:        []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlterConfigs)}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribe), topicACL(opDescribeConfigs, "*")}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return describeConfigs(kmsg.ConfigResourceTypeBroker, "0")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkDescribed(t, ph, resp, "Cluster authorization failed.")
			},
		},
		{
			name: "AlterConfigs/topic", key: 33, version: 2,
			acls:      []aclSpec{topicACL(opAlterConfigs, "cfg")},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribeConfigs, "cfg"), topicACL(opAlter, "cfg")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return alterConfigs(ph, kmsg.ConfigResourceTypeTopic, "cfg")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				rr := resp.(*kmsg.AlterConfigsResponse).Resources[0]
				checkAltered(t, e, ph, rr.ErrorCode, rr.ErrorMessage, kmsg.ConfigResourceTypeTopic)
			},
		},
		{
			// No change: kbroker has no dynamic broker configs.
			name: "AlterConfigs/broker", key: 33, version: 2,
			acls:      []aclSpec{clusterACL(opAlterConfigs)},
			codes:     []int16{clusterDenied},
			notEnough: []authzShortfall{{[]aclSpec{clusterACL(opAlter), clusterACL(opDescribeConfigs)}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return alterConfigs(ph, kmsg.ConfigResourceTypeBroker, "0")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				rr := resp.(*kmsg.AlterConfigsResponse).Resources[0]
				checkAltered(t, e, ph, rr.ErrorCode, rr.ErrorMessage, kmsg.ConfigResourceTypeBroker)
			},
		},
		{
			name: "IncrementalAlterConfigs/topic", key: 44, version: 1,
			acls:      []aclSpec{topicACL(opAlterConfigs, "cfg")},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribeConfigs, "cfg")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return incrementalAlterConfigs(ph, kmsg.ConfigResourceTypeTopic, "cfg")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				rr := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
				checkAltered(t, e, ph, rr.ErrorCode, rr.ErrorMessage, kmsg.ConfigResourceTypeTopic)
			},
		},
		{
			name: "IncrementalAlterConfigs/broker", key: 44, version: 1,
			acls:  []aclSpec{clusterACL(opAlterConfigs)},
			codes: []int16{clusterDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return incrementalAlterConfigs(ph, kmsg.ConfigResourceTypeBroker, "0")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				rr := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
				checkAltered(t, e, ph, rr.ErrorCode, rr.ErrorMessage, kmsg.ConfigResourceTypeBroker)
			},
		},
		{
			name: "DescribeLogDirs", key: 35, version: 4,
			acls: clusterDescribe, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribeConfigs), topicACL(opDescribe, "*")}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeLogDirsRequest()
				req.Topics = nil
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeLogDirsResponse)
				if ph.denied {
					wantCode(t, "DescribeLogDirs", r.ErrorCode, ph.code)
					if len(r.Dirs) != 0 {
						t.Errorf("denied answer lists %d dirs", len(r.Dirs))
					}
					return
				}
				wantCode(t, "DescribeLogDirs", r.ErrorCode, 0)
				if len(r.Dirs) != 1 || !has(r.Dirs[0].Topics, func(t kmsg.DescribeLogDirsResponseDirTopic) string { return t.Topic }, "secret") {
					t.Errorf("dirs %+v", r.Dirs)
				}
			},
		},
		{
			name: "ElectLeaders", key: 43, version: 2,
			acls: clusterAlter, codes: []int16{clusterDenied},
			notEnough: []authzShortfall{{[]aclSpec{clusterACL(opClusterAction), topicACL(opAlter, "orders")}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return electLeaders("orders")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ElectLeadersResponse)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				p := r.Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "ElectLeaders", r.ErrorCode, ph.code)
					wantCode(t, "partition", p.ErrorCode, ph.code)
					if p.ErrorMessage != nil {
						t.Errorf("message %q", *p.ErrorMessage)
					}
					return
				}
				wantCode(t, "ElectLeaders", r.ErrorCode, 0)
				wantCode(t, "partition", p.ErrorCode, kerr.ElectionNotNeeded.Code)
			},
		},
		{
			// An election of every partition: denied, it names none.
			name: "ElectLeaders/all partitions", key: 43, version: 2,
			acls: clusterAlter, codes: []int16{clusterDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return electLeaders()
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ElectLeadersResponse)
				if ph.denied {
					wantCode(t, "ElectLeaders", r.ErrorCode, ph.code)
				} else {
					wantCode(t, "ElectLeaders", r.ErrorCode, 0)
				}
				// Allowed, no partition needs an election.
				if len(r.Topics) != 0 {
					t.Errorf("answer names %+v", r.Topics)
				}
			},
		},
		{
			name: "AlterPartitionReassignments", key: 45, version: 0,
			acls: clusterAlter, codes: []int16{clusterDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opAlter, "orders"), clusterACL(opDescribe)}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				// Cancels a reassignment orders-0 does not have.
				req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
				req.TimeoutMillis = 10000
				req.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "orders", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0}}}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.AlterPartitionAssignmentsResponse)
				if ph.denied {
					wantCode(t, "AlterPartitionReassignments", r.ErrorCode, ph.code)
					if len(r.Topics) != 0 {
						t.Errorf("denied answer names %+v", r.Topics)
					}
					return
				}
				wantCode(t, "AlterPartitionReassignments", r.ErrorCode, 0)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				wantCode(t, "partition", r.Topics[0].Partitions[0].ErrorCode, kerr.NoReassignmentInProgress.Code)
			},
		},
		{
			name: "ListPartitionReassignments", key: 46, version: 0,
			acls: clusterDescribe, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrListPartitionReassignmentsRequest()
				req.TimeoutMillis, req.Topics = 10000, nil
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ListPartitionReassignmentsResponse)
				if ph.denied {
					wantCode(t, "ListPartitionReassignments", r.ErrorCode, ph.code)
				} else {
					wantCode(t, "ListPartitionReassignments", r.ErrorCode, 0)
				}
				if len(r.Topics) != 0 {
					t.Errorf("topics %+v", r.Topics)
				}
			},
		},
		{
			// DescribeCluster itself is not authorized; the cluster's
			// operations are 0 without DESCRIBE on it.
			name: "DescribeCluster", key: 60, version: 1,
			acls: clusterDescribe, codes: []int16{0},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}, {clusterACL(kmsg.ACLOperationAll)}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeClusterRequest()
				req.IncludeClusterAuthorizedOperations = true
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeClusterResponse)
				wantCode(t, "DescribeCluster", r.ErrorCode, 0)
				if len(r.Brokers) != 1 || r.ClusterID == "" {
					t.Errorf("brokers %+v, cluster id %q", r.Brokers, r.ClusterID)
				}
				want := opsBits(opDescribe)
				switch {
				case ph.denied:
					want = 0
				case ph.super || ph.allows(kmsg.ACLOperationAll):
					want = allClusterOps
				case ph.allows(opAlter):
					want = opsBits(opAlter, opDescribe)
				}
				if r.ClusterAuthorizedOperations != want {
					t.Errorf("cluster operations %b, want %b", r.ClusterAuthorizedOperations, want)
				}
			},
		},
		{
			name: "DescribeProducers", key: 61, version: 0,
			acls:      []aclSpec{topicACL(opRead, "orders")},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribe, "orders"), topicACL(opWrite, "orders")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeProducersRequest()
				req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "orders", Partitions: []int32{0}}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", sp.ErrorCode, ph.code)
					if stringOr(sp.ErrorMessage) != "Topic authorization failed." || len(sp.ActiveProducers) != 0 {
						t.Errorf("denied answer: message %v, %d producers", sp.ErrorMessage, len(sp.ActiveProducers))
					}
					return
				}
				wantCode(t, "partition", sp.ErrorCode, 0)
				if len(sp.ActiveProducers) == 0 {
					t.Error("no active producers")
				}
			},
		},
	}
}

// securityCases: the ACL and SCRAM credential APIs, and the APIs Kafka
// does not authorize at all.
func securityCases(f *authzFixture) []authzCase {
	victim := func(ph *authzPhase) string { return "User:victim-" + ph.tag }
	describeACLs := func(principal *string) *kmsg.DescribeACLsRequest {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType, req.Principal = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny, principal
		return req
	}
	aclsOf := func(t *testing.T, e *authzEnv, principal string) int {
		t.Helper()
		r := e.admin(t, describeACLs(&principal)).(*kmsg.DescribeACLsResponse)
		n := 0
		for _, res := range r.Resources {
			n += len(res.ACLs)
		}
		return n
	}
	clusterAlter := []aclSpec{clusterACL(opAlter)}
	notAlter := []authzShortfall{{[]aclSpec{clusterACL(opDescribe), clusterACL(opAlterConfigs), clusterACL(opCreate)}, clusterDenied}}
	return []authzCase{
		{
			name: "DescribeAcls", key: 29, version: 3,
			acls: []aclSpec{clusterACL(opDescribe)}, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribeConfigs), topicACL(opDescribe, "*")}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return describeACLs(nil)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeACLsResponse)
				if ph.denied {
					wantCode(t, "DescribeAcls", r.ErrorCode, ph.code)
					if len(r.Resources) != 0 {
						t.Errorf("denied answer lists the ACLs of %d resources", len(r.Resources))
					}
					return
				}
				wantCode(t, "DescribeAcls", r.ErrorCode, 0)
				if len(r.Resources) < 10 {
					t.Errorf("the ACLs of %d resources", len(r.Resources))
				}
			},
		},
		{
			name: "CreateAcls", key: 30, version: 3,
			acls: clusterAlter, codes: []int16{clusterDenied}, notEnough: notAlter,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrCreateACLsRequest()
				c := kmsg.NewCreateACLsRequestCreation()
				c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral
				c.Principal, c.Host, c.Operation, c.PermissionType = victim(ph), "*", opRead, kmsg.ACLPermissionTypeAllow
				req.Creations = []kmsg.CreateACLsRequestCreation{c}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.CreateACLsResponse).Results[0]
				n := aclsOf(t, e, victim(ph))
				if ph.denied {
					wantCode(t, "creation", r.ErrorCode, ph.code)
					if n != 0 {
						t.Errorf("denied creation stored %d ACLs", n)
					}
					return
				}
				wantCode(t, "creation", r.ErrorCode, 0)
				if n != 1 {
					t.Errorf("%d ACLs stored", n)
				}
			},
		},
		{
			name: "DeleteAcls", key: 31, version: 3,
			acls: clusterAlter, codes: []int16{clusterDenied}, notEnough: notAlter,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.grant(t, victim(ph), topicACL(opRead, "orders"))
				req := kmsg.NewPtrDeleteACLsRequest()
				fl := kmsg.NewDeleteACLsRequestFilter()
				fl.ResourceType, fl.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
				fl.Operation, fl.PermissionType, fl.Principal = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny, strp(victim(ph))
				req.Filters = []kmsg.DeleteACLsRequestFilter{fl}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DeleteACLsResponse).Results[0]
				n := aclsOf(t, e, victim(ph))
				if ph.denied {
					wantCode(t, "filter", r.ErrorCode, ph.code)
					if len(r.MatchingACLs) != 0 || n != 1 {
						t.Errorf("denied deletion: %d ACLs named, %d left", len(r.MatchingACLs), n)
					}
					return
				}
				wantCode(t, "filter", r.ErrorCode, 0)
				if len(r.MatchingACLs) != 1 || r.MatchingACLs[0].Principal != victim(ph) || n != 0 {
					t.Errorf("deleted %+v, %d left", r.MatchingACLs, n)
				}
			},
		},
		{
			// A user without credentials: RESOURCE_NOT_FOUND once allowed.
			name: "DescribeUserScramCredentials", key: 50, version: 0,
			acls: []aclSpec{clusterACL(opDescribe)}, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribeConfigs)}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
				req.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "scram-user"}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeUserSCRAMCredentialsResponse)
				if len(r.Results) != 1 {
					t.Fatalf("results %+v", r.Results)
				}
				res := r.Results[0]
				if ph.denied {
					// Kafka's getErrorResponse: one result per user asked
					// for, without its name; no message (it is the
					// error's own).
					wantCode(t, "DescribeUserScramCredentials", r.ErrorCode, ph.code)
					wantCode(t, "result", res.ErrorCode, ph.code)
					if r.ErrorMessage != nil || res.ErrorMessage != nil || res.User != "" || len(res.CredentialInfos) != 0 {
						t.Errorf("denied answer %+v", r)
					}
					return
				}
				wantCode(t, "DescribeUserScramCredentials", r.ErrorCode, 0)
				wantCode(t, "result", res.ErrorCode, kerr.ResourceNotFound.Code)
				if res.User != "scram-user" {
					t.Errorf("user %q", res.User)
				}
			},
		},
		{
			// Deleting a credential: once allowed, the answer is the
			// validation's (the SCRAM tests cover it).
			name: "AlterUserScramCredentials", key: 51, version: 0,
			acls: clusterAlter, codes: []int16{clusterDenied}, notEnough: notAlter,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
				req.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "scram-user", Mechanism: 1}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.AlterUserSCRAMCredentialsResponse)
				if len(r.Results) != 1 || r.Results[0].User != "scram-user" {
					t.Fatalf("results %+v", r.Results)
				}
				res := r.Results[0]
				if ph.denied {
					wantCode(t, "result", res.ErrorCode, ph.code)
					if res.ErrorMessage != nil {
						t.Errorf("message %q", *res.ErrorMessage)
					}
					return
				}
				if res.ErrorCode == clusterDenied {
					t.Errorf("allowed principal answered %s", errName(res.ErrorCode))
				}
			},
		},
		{
			name: "SaslHandshake", key: 17, version: 1,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrSASLHandshakeRequest()
				req.Mechanism = "PLAIN"
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				// A listener without SASL: Kafka's answer to everyone.
				wantCode(t, "SaslHandshake", resp.(*kmsg.SASLHandshakeResponse).ErrorCode, kerr.IllegalSaslState.Code)
			},
		},
		{
			name: "SaslAuthenticate", key: 36, version: 2,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return kmsg.NewPtrSASLAuthenticateRequest()
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				wantCode(t, "SaslAuthenticate", resp.(*kmsg.SASLAuthenticateResponse).ErrorCode, kerr.IllegalSaslState.Code)
			},
		},
		{
			name: "ApiVersions", key: 18, version: 4,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrApiVersionsRequest()
				req.ClientSoftwareName, req.ClientSoftwareVersion = "authz-test", "1"
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ApiVersionsResponse)
				wantCode(t, "ApiVersions", r.ErrorCode, 0)
				if len(r.ApiKeys) != len(supportedAPIs()) {
					t.Errorf("%d API keys, want %d", len(r.ApiKeys), len(supportedAPIs()))
				}
			},
		},
	}
}

// TestAuthorizationComesAfterRequestChecks: what Kafka's KafkaApis refuses
// before it authorizes anything, a principal without ACLs is refused the
// same way, learning nothing it could not learn anyway.
func TestAuthorizationComesAfterRequestChecks(t *testing.T) {
	e := startAuthzBroker(t)
	const nobody = "User:nobody"
	cases := []struct {
		name    string
		req     func() kmsg.Request
		version int16
		code    func(kmsg.Response) int16
		want    int16
	}{
		{
			name: "SyncGroup v5 without protocol", version: 5,
			req: func() kmsg.Request {
				req := kmsg.NewPtrSyncGroupRequest()
				req.Group, req.Generation, req.MemberID = "g", 1, "m"
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.SyncGroupResponse).ErrorCode },
			want: kerr.InconsistentGroupProtocol.Code,
		},
		{
			name: "AlterConfigs of another broker", version: 2,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAlterConfigsRequest()
				req.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "7"}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode },
			want: kerr.InvalidRequest.Code,
		},
		{
			name: "IncrementalAlterConfigs of a static broker config", version: 1,
			req: func() kmsg.Request {
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "0",
					Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "log.dirs", Op: kmsg.IncrementalAlterConfigOpSet, Value: strp("/x")}}}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode },
			want: kerr.InvalidRequest.Code,
		},
		{
			name: "IncrementalAlterConfigs with a null value", version: 1,
			req: func() kmsg.Request {
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t",
					Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpSet}}}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode },
			want: kerr.InvalidRequest.Code,
		},
		{
			name: "DescribeProducers of an invalid topic name", version: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeProducersRequest()
				req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "no/slashes", Partitions: []int32{0}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode
			},
			want: kerr.InvalidTopicException.Code,
		},
	}
	for _, c := range cases {
		req := c.req()
		req.SetVersion(c.version)
		wantCode(t, c.name, c.code(e.send(t, nobody, authzHost, req)), c.want)
	}
}
