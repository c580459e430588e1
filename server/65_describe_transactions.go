package server

// DescribeTransactions, version 0 (kafka-transactions describe): the
// state of transactional ids this broker coordinates.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DescribeTransactions.Int16(), 0, 0, handleDescribeTransactions) }

func handleDescribeTransactions(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	resp := b.txns.DescribeTransactions(req.Body.(*kmsg.DescribeTransactionsRequest))
	if b.authorizer == nil {
		return protocol.Response{Msg: resp}
	}
	// Kafka: DESCRIBE on the transactional id, and only the topics the
	// principal may describe are listed.
	for i := range resp.TransactionStates {
		s := &resp.TransactionStates[i]
		if !b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, s.TransactionalID) {
			denied := kmsg.NewDescribeTransactionsResponseTransactionState()
			denied.TransactionalID, denied.ErrorCode = s.TransactionalID, kerr.TransactionalIDAuthorizationFailed.Code
			*s = denied
			continue
		}
		kept := s.Topics[:0]
		for _, t := range s.Topics {
			if b.topicAllowed(req, kmsg.ACLOperationDescribe, t.Topic) {
				kept = append(kept, t)
			}
		}
		s.Topics = kept
	}
	return protocol.Response{Msg: resp}
}
