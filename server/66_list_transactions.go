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
	return protocol.Response{Msg: b.txns.ListTransactions(req.Body.(*kmsg.ListTransactionsRequest))}
}
