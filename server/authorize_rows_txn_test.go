package server

// Rows of the authorization matrix: producer ids and transactions.

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

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
