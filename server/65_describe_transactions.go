package server

// DescribeTransactions, version 0 (kafka-transactions describe): the
// state of transactional ids this broker coordinates.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DescribeTransactions.Int16(), 0, 0, handleDescribeTransactions) }

func handleDescribeTransactions(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	return protocol.Response{Msg: b.txns.DescribeTransactions(req.Body.(*kmsg.DescribeTransactionsRequest))}
}
