package server

// Rows of the authorization matrix: requests only brokers send.

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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
			// Broker 7 does not exist: once authorized, the controller
			// answers that its epoch is stale.
			name: "AlterPartition", key: 56, version: 3,
			acls: clusterAction, codes: []int16{clusterDenied}, notEnough: notEnough,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrAlterPartitionRequest()
				req.BrokerID, req.BrokerEpoch = 7, 70
				rt := kmsg.NewAlterPartitionRequestTopic()
				rt.TopicID = [16]byte{7}
				rp := kmsg.NewAlterPartitionRequestTopicPartition()
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.AlterPartitionResponse)
				if ph.denied {
					wantCode(t, "AlterPartition", r.ErrorCode, ph.code)
					if len(r.Topics) != 0 {
						t.Errorf("denied answer lists %d topics", len(r.Topics))
					}
					return
				}
				wantCode(t, "AlterPartition", r.ErrorCode, kerr.StaleBrokerEpoch.Code)
			},
		},
		{
			// Broker 7 does not exist: once authorized, the controller
			// answers that it is not registered, and hands out no ids.
			name: "AllocateProducerIds", key: 67, version: 0,
			acls: clusterAction, codes: []int16{clusterDenied}, notEnough: notEnough,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrAllocateProducerIDsRequest()
				req.BrokerID, req.BrokerEpoch = 7, 70
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.AllocateProducerIDsResponse)
				if r.ProducerIDLen != 0 {
					t.Errorf("%d producer ids handed out", r.ProducerIDLen)
				}
				if ph.denied {
					wantCode(t, "AllocateProducerIds", r.ErrorCode, ph.code)
					return
				}
				wantCode(t, "AllocateProducerIds", r.ErrorCode, kerr.BrokerIDNotRegistered.Code)
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
