package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/protocol"
)

// authzEnv is a standalone broker running Kafka's ACL authorizer, driven
// in-process through Broker.Handle: every request is encoded and decoded
// at its version on the way in and its answer on the way out, so that a
// test sees exactly what the wire would carry, and it arrives on a
// connection that authenticated as the principal the test names.
type authzEnv struct {
	b *Broker
}

const (
	// authzSuper is the broker's one super user.
	authzSuper = "User:admin"
	// authzHost is where the tests' clients connect from.
	authzHost = "127.0.0.1"
)

// startAuthzBroker starts the broker; it stops when the test ends.
func startAuthzBroker(t *testing.T) *authzEnv {
	t.Helper()
	raw := map[string]string{
		"broker.id":                            "0",
		"listeners":                            "PLAINTEXT://127.0.0.1:0",
		"log.dirs":                             filepath.Join(t.TempDir(), "logs"),
		"offsets.topic.num.partitions":         "1",
		"transaction.state.log.num.partitions": "1",
		"group.initial.rebalance.delay.ms":     "0",
		"authorizer.class.name":                "kafka.security.authorizer.AclAuthorizer",
		"super.users":                          authzSuper,
	}
	cfg, _, err := config.FromMap(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("broker run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("broker did not stop within 20s")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for b.Addr() == "" {
		if time.Now().After(deadline) {
			t.Fatal("broker did not serve within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &authzEnv{b: b}
}

// send delivers req as principal connecting from host and returns the
// decoded answer. A request the broker answers by closing the connection
// or not at all fails the test.
func (e *authzEnv) send(t *testing.T, principal, host string, req kmsg.Request) kmsg.Response {
	t.Helper()
	v := req.GetVersion()
	decoded := kmsg.RequestForKey(req.Key())
	decoded.SetVersion(v)
	if err := decoded.ReadFrom(req.AppendTo(nil)); err != nil {
		t.Fatalf("%s v%d: decoding the request: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	conn := &protocol.ConnInfo{Listener: "PLAINTEXT", RemoteAddr: &net.TCPAddr{IP: net.ParseIP(host), Port: 40000}}
	conn.SetPrincipal(principal)
	clientID := "authz-test"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp := e.b.Handle(ctx, &protocol.Request{
		Key: req.Key(), Version: v, RequestedVersion: v, ClientID: &clientID, Body: decoded, Conn: conn,
	})
	for i := 0; resp.Wait != nil && i < 3; i++ {
		resp = resp.Wait(ctx)
	}
	var body []byte
	switch {
	case resp.Msg != nil:
		resp.Msg.SetVersion(v)
		body = resp.Msg.AppendTo(nil)
	case resp.Frame != nil:
		var buf bytes.Buffer
		if _, err := resp.Frame.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		body = buf.Bytes()
	default:
		t.Fatalf("%s v%d: no answer (close %v, none %v)", kmsg.NameForKey(req.Key()), v, resp.Close, resp.None)
	}
	out := req.ResponseKind()
	out.SetVersion(v)
	if err := out.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d: decoding the answer: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	return out
}

// admin sends req as the super user.
func (e *authzEnv) admin(t *testing.T, req kmsg.Request) kmsg.Response {
	t.Helper()
	return e.send(t, authzSuper, authzHost, req)
}

// aclSpec is one ACL of a principal.
type aclSpec struct {
	typ     kmsg.ACLResourceType
	name    string
	pattern kmsg.ACLResourcePatternType // 0: LITERAL
	op      kmsg.ACLOperation
	host    string // "": every host
	deny    bool
}

func topicACL(op kmsg.ACLOperation, name string) aclSpec {
	return aclSpec{typ: kmsg.ACLResourceTypeTopic, name: name, op: op}
}

func groupACL(op kmsg.ACLOperation, name string) aclSpec {
	return aclSpec{typ: kmsg.ACLResourceTypeGroup, name: name, op: op}
}

func txnACL(op kmsg.ACLOperation, name string) aclSpec {
	return aclSpec{typ: kmsg.ACLResourceTypeTransactionalId, name: name, op: op}
}

func clusterACL(op kmsg.ACLOperation) aclSpec {
	return aclSpec{typ: kmsg.ACLResourceTypeCluster, name: clusterResourceName, op: op}
}

// prefixed turns a into a PREFIXED pattern.
func (a aclSpec) prefixed() aclSpec {
	a.pattern = kmsg.ACLResourcePatternTypePrefixed
	return a
}

// onHost restricts a to one client address.
func (a aclSpec) onHost(host string) aclSpec {
	a.host = host
	return a
}

// denial is a's DENY twin.
func (a aclSpec) denial() aclSpec {
	a.deny = true
	return a
}

func (a aclSpec) String() string {
	perm := "ALLOW"
	if a.deny {
		perm = "DENY"
	}
	pattern := "LITERAL"
	if a.pattern == kmsg.ACLResourcePatternTypePrefixed {
		pattern = "PREFIXED"
	}
	host := a.host
	if host == "" {
		host = "*"
	}
	return fmt.Sprintf("%s %s on %s:%s:%s from %s", perm, a.op, a.typ, pattern, a.name, host)
}

// grant adds acls for principal through CreateAcls as the super user.
func (e *authzEnv) grant(t *testing.T, principal string, acls ...aclSpec) {
	t.Helper()
	if len(acls) == 0 {
		return
	}
	req := kmsg.NewPtrCreateACLsRequest()
	req.SetVersion(3)
	for _, a := range acls {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.Principal, c.Operation = a.typ, a.name, principal, a.op
		c.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
		if a.pattern != 0 {
			c.ResourcePatternType = a.pattern
		}
		c.Host = "*"
		if a.host != "" {
			c.Host = a.host
		}
		c.PermissionType = kmsg.ACLPermissionTypeAllow
		if a.deny {
			c.PermissionType = kmsg.ACLPermissionTypeDeny
		}
		req.Creations = append(req.Creations, c)
	}
	resp := e.admin(t, req).(*kmsg.CreateACLsResponse)
	for i, r := range resp.Results {
		if r.ErrorCode != 0 {
			t.Fatalf("CreateAcls %s for %s: %s %v", acls[i], principal, errName(r.ErrorCode), r.ErrorMessage)
		}
	}
}

// eventually retries fn every 20ms for at most 10s until it returns "".
func eventually(t *testing.T, what string, fn func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg := fn()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s after 10s", what, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// createTopic creates a topic through CreateTopics as the super user.
func (e *authzEnv) createTopic(t *testing.T, name string, partitions int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
	req.Topics = []kmsg.CreateTopicsRequestTopic{rt}
	req.TimeoutMillis = 10000
	if code := e.admin(t, req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
		t.Fatalf("create %s: %s", name, errName(code))
	}
	eventually(t, "topic "+name+" led here", func() string {
		tp := e.b.topic(name)
		if tp == nil || len(tp.Partitions) != int(partitions) {
			return "not in the topic table"
		}
		for _, p := range tp.Partitions {
			if p == nil || !p.IsLeader() {
				return "a partition without its leader"
			}
		}
		return ""
	})
}

// produce appends one batch to topic's partition 0 as the super user and
// returns its base offset.
func (e *authzEnv) produce(t *testing.T, topic string, opts logstore.BatchOptions, records int, txnID *string) int64 {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, 5000, txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = rawBatch(t, opts, records, time.Now().UnixMilli())
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	sp := e.admin(t, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if sp.ErrorCode != 0 {
		t.Fatalf("produce to %s: %s", topic, errName(sp.ErrorCode))
	}
	return sp.BaseOffset
}

// logEnd is the log end offset of topic's partition 0.
func (e *authzEnv) logEnd(t *testing.T, topic string) int64 {
	t.Helper()
	tp := e.b.topic(topic)
	if tp == nil || tp.Partitions[0] == nil {
		t.Fatalf("no partition %s-0", topic)
	}
	return tp.Partitions[0].LogEndOffset()
}

// commitOffset commits a simple (generation -1) offset as the super user.
func (e *authzEnv) commitOffset(t *testing.T, group, topic string, offset int64) {
	t.Helper()
	if code := e.offsetCommit(t, authzSuper, group, topic, offset); code != 0 {
		t.Fatalf("commit %s %s: %s", group, topic, errName(code))
	}
}

func offsetCommitRequest(group, topic string, offset int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.SetVersion(9)
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{rp}
	req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
	return req
}

func (e *authzEnv) offsetCommit(t *testing.T, principal, group, topic string, offset int64) int16 {
	t.Helper()
	resp := e.send(t, principal, authzHost, offsetCommitRequest(group, topic, offset)).(*kmsg.OffsetCommitResponse)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// committed is the group's committed offset of topic's partition 0, -1 for
// none.
func (e *authzEnv) committed(t *testing.T, group, topic string) int64 {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.SetVersion(9)
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{rt}
	req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
	g := e.admin(t, req).(*kmsg.OffsetFetchResponse).Groups[0]
	if g.ErrorCode != 0 {
		t.Fatalf("OffsetFetch %s: %s", group, errName(g.ErrorCode))
	}
	return g.Topics[0].Partitions[0].Offset
}

// groupState is the group's state as DescribeGroups reports it to the
// super user.
func (e *authzEnv) groupState(t *testing.T, group string) kmsg.DescribeGroupsResponseGroup {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.SetVersion(5)
	req.Groups = []string{group}
	return e.admin(t, req).(*kmsg.DescribeGroupsResponse).Groups[0]
}

// groupMember is a static member the super user joined and synced.
type groupMember struct {
	group, memberID, instanceID string
	generation                  int32
}

// joinGroup makes instance a static member of group (a new group of one:
// it leads, syncs assignment and is Stable afterwards).
func (e *authzEnv) joinGroup(t *testing.T, group, instance string, assignment []byte) groupMember {
	t.Helper()
	req := kmsg.NewPtrJoinGroupRequest()
	req.SetVersion(9)
	req.Group, req.InstanceID, req.ProtocolType = group, &instance, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 300000, 60000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte("subscription")
	req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
	jr := e.admin(t, req).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != 0 {
		t.Fatalf("join %s: %s", group, errName(jr.ErrorCode))
	}
	m := groupMember{group: group, memberID: jr.MemberID, instanceID: instance, generation: jr.Generation}
	sync := syncGroupRequest(m)
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = m.memberID, assignment
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{a}
	if sr := e.admin(t, sync).(*kmsg.SyncGroupResponse); sr.ErrorCode != 0 {
		t.Fatalf("sync %s: %s", group, errName(sr.ErrorCode))
	}
	return m
}

func syncGroupRequest(m groupMember) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.SetVersion(5)
	req.Group, req.Generation, req.MemberID, req.InstanceID = m.group, m.generation, m.memberID, &m.instanceID
	req.ProtocolType, req.Protocol = strp("consumer"), strp("range")
	return req
}

// producer is a transactional producer the super user initialised.
type producer struct {
	txnID string
	id    int64
	epoch int16
}

// initProducer runs InitProducerId for txnID as the super user.
func (e *authzEnv) initProducer(t *testing.T, txnID string) producer {
	t.Helper()
	var p producer
	eventually(t, "InitProducerId "+txnID, func() string {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.SetVersion(4)
		req.TransactionalID, req.TransactionTimeoutMillis = &txnID, 60000
		resp := e.admin(t, req).(*kmsg.InitProducerIDResponse)
		switch resp.ErrorCode {
		case 0:
			p = producer{txnID: txnID, id: resp.ProducerID, epoch: resp.ProducerEpoch}
			return ""
		case kerr.CoordinatorLoadInProgress.Code, kerr.ConcurrentTransactions.Code, kerr.NotCoordinator.Code:
			return errName(resp.ErrorCode)
		}
		t.Fatalf("InitProducerId %s: %s", txnID, errName(resp.ErrorCode))
		return ""
	})
	return p
}

func addPartitionsRequest(p producer, topic string) *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(3)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = p.txnID, p.id, p.epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{rt}
	return req
}

// beginTxn adds topic's partition 0 to p's transaction as the super user.
func (e *authzEnv) beginTxn(t *testing.T, p producer, topic string) {
	t.Helper()
	resp := e.admin(t, addPartitionsRequest(p, topic)).(*kmsg.AddPartitionsToTxnResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("AddPartitionsToTxn %s: %s", p.txnID, errName(code))
	}
}

// txnState is the transaction's state as DescribeTransactions reports it
// to the super user.
func (e *authzEnv) txnState(t *testing.T, txnID string) kmsg.DescribeTransactionsResponseTransactionState {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{txnID}
	return e.admin(t, req).(*kmsg.DescribeTransactionsResponse).TransactionStates[0]
}

// awaitCoordinators creates the internal topics through FindCoordinator
// and waits until both coordinators have loaded them.
func (e *authzEnv) awaitCoordinators(t *testing.T) {
	t.Helper()
	for _, typ := range []int8{coordinatorGroup, coordinatorTransaction} {
		eventually(t, "coordinator", func() string {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.SetVersion(4)
			req.CoordinatorType, req.CoordinatorKeys = typ, []string{"warm-up"}
			c := e.admin(t, req).(*kmsg.FindCoordinatorResponse).Coordinators[0]
			if c.ErrorCode != 0 {
				return errName(c.ErrorCode)
			}
			return ""
		})
	}
	eventually(t, "group coordinator loaded", func() string {
		if code := e.offsetCommit(t, authzSuper, "warm-up", "__consumer_offsets", 0); code == kerr.CoordinatorLoadInProgress.Code || code == kerr.NotCoordinator.Code {
			return errName(code)
		}
		return ""
	})
	e.initProducer(t, "warm-up")
}

// endTxn ends p's transaction as the super user.
func (e *authzEnv) endTxn(t *testing.T, p producer, commit bool) {
	t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.SetVersion(4)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.txnID, p.id, p.epoch, commit
	eventually(t, "EndTxn "+p.txnID, func() string {
		switch code := e.admin(t, req).(*kmsg.EndTxnResponse).ErrorCode; code {
		case 0:
			return ""
		case kerr.ConcurrentTransactions.Code:
			return errName(code)
		default:
			t.Fatalf("EndTxn %s: %s", p.txnID, errName(code))
		}
		return ""
	})
	// The markers are written once the coordinator completes the
	// transaction; later checks of the logs must not race them.
	eventually(t, "transaction "+p.txnID+" complete", func() string {
		if s := e.txnState(t, p.txnID).State; s != "CompleteCommit" && s != "CompleteAbort" {
			return s
		}
		return ""
	})
}
