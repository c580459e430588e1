package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

// Like the group coordinator, the transaction coordinator (server/txn)
// knows nothing of principals: these are the checks Kafka's KafkaApis
// makes before handing transactional requests over.

// authorizeTxnID reports WRITE on a transactional id.
func (b *Broker) authorizeTxnID(req *protocol.Request, id string) bool {
	return b.authorize(req, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, id)
}

// addPartitionsToTxnDenied answers a client's (v0-3) AddPartitionsToTxn
// that may not go ahead: with the transactional id denied every partition
// fails with that; otherwise denied topics fail with
// TOPIC_AUTHORIZATION_FAILED, unknown ones UNKNOWN_TOPIC_OR_PARTITION and
// the rest OPERATION_NOT_ATTEMPTED, as Kafka answers. nil when everything
// is allowed. An internal topic is denied to everyone, super users and
// brokers without an authorizer too: Kafka's
// handleAddPartitionsToTxnRequest leaves internal topics out of the
// topics it authorizes (only coordinators write them).
func (b *Broker) addPartitionsToTxnDenied(req *protocol.Request, r *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	txnDenied := !b.authorizeTxnID(req, r.TransactionalID)
	codes := map[string]int16{}
	anyDenied := txnDenied
	for _, rt := range r.Topics {
		switch {
		case txnDenied:
			codes[rt.Topic] = kerr.TransactionalIDAuthorizationFailed.Code
		case isInternalTopic(rt.Topic) || !b.topicAllowed(req, kmsg.ACLOperationWrite, rt.Topic):
			codes[rt.Topic] = kerr.TopicAuthorizationFailed.Code
			anyDenied = true
		}
	}
	if !anyDenied {
		return nil
	}
	resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, rt := range r.Topics {
		code, ok := codes[rt.Topic]
		if !ok {
			code = kerr.OperationNotAttempted.Code
			if b.topic(rt.Topic) == nil {
				code = kerr.UnknownTopicOrPartition.Code
			}
		}
		st := kmsg.NewAddPartitionsToTxnResponseTopic()
		st.Topic = rt.Topic
		for _, p := range rt.Partitions {
			sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			sp.Partition, sp.ErrorCode = p, code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// txnOffsetCommitDenied answers a TxnOffsetCommit whose transactional id
// or group is denied (every partition fails with that), or fails the
// denied topics and returns the request with the others; resp is nil when
// the rest may go to the coordinator.
func (b *Broker) txnOffsetCommitDenied(req *protocol.Request, r *kmsg.TxnOffsetCommitRequest) (allowed *kmsg.TxnOffsetCommitRequest, denied []kmsg.TxnOffsetCommitResponseTopic, resp *kmsg.TxnOffsetCommitResponse) {
	if b.authorizer == nil {
		return r, nil, nil
	}
	all := func(code int16) *kmsg.TxnOffsetCommitResponse {
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, rt := range r.Topics {
			resp.Topics = append(resp.Topics, txnOffsetCommitTopicError(rt, code))
		}
		return resp
	}
	switch {
	case !b.authorizeTxnID(req, r.TransactionalID):
		return nil, nil, all(kerr.TransactionalIDAuthorizationFailed.Code)
	case !b.authorize(req, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, r.Group):
		return nil, nil, all(kerr.GroupAuthorizationFailed.Code)
	}
	keep := *r
	keep.Topics = nil
	for _, rt := range r.Topics {
		if b.topicAllowed(req, kmsg.ACLOperationRead, rt.Topic) {
			keep.Topics = append(keep.Topics, rt)
		} else {
			denied = append(denied, txnOffsetCommitTopicError(rt, kerr.TopicAuthorizationFailed.Code))
		}
	}
	if len(keep.Topics) == 0 && len(denied) > 0 {
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = denied
		return nil, nil, resp
	}
	return &keep, denied, nil
}

func txnOffsetCommitTopicError(rt kmsg.TxnOffsetCommitRequestTopic, code int16) kmsg.TxnOffsetCommitResponseTopic {
	st := kmsg.NewTxnOffsetCommitResponseTopic()
	st.Topic = rt.Topic
	for _, rp := range rt.Partitions {
		sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
		sp.Partition, sp.ErrorCode = rp.Partition, code
		st.Partitions = append(st.Partitions, sp)
	}
	return st
}
