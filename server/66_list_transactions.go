package server

// ListTransactions, versions 0-1 (kafka-transactions list): the
// transactions this broker coordinates, filtered by state, producer id
// and (v1) duration. Admin clients ask every broker and merge.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.ListTransactions.Int16(), 0, 1, handleListTransactions) }

func handleListTransactions(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	resp := b.txns.ListTransactions(req.Body.(*kmsg.ListTransactionsRequest))
	if b.authorizer != nil {
		// Only the transactional ids the principal may describe.
		kept := resp.TransactionStates[:0]
		for _, s := range resp.TransactionStates {
			if b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, s.TransactionalID) {
				kept = append(kept, s)
			}
		}
		resp.TransactionStates = kept
	}
	return protocol.Response{Msg: resp}
}
