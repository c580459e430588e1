package server

// AddPartitionsToTxn, versions 0-5: v0-3 from a transactional producer
// adding partitions to its transaction, v4+ batched, also from a partition
// leader verifying that a partition was added (KIP-890 part 1). The
// transaction coordinator (server/txn) does the work.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AddPartitionsToTxn.Int16(), 0, 5, handleAddPartitionsToTxn) }

func handleAddPartitionsToTxn(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AddPartitionsToTxnRequest)
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.txns.AddPartitionsToTxn(ctx, r)}
	}}
}
