package server

// AddPartitionsToTxn, versions 0-5: v0-3 from a transactional producer
// adding partitions to its transaction, v4+ batched, also from a partition
// leader verifying that a partition was added (KIP-890 part 1). The
// transaction coordinator (server/txn) does the work.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AddPartitionsToTxn.Int16(), 0, 5, handleAddPartitionsToTxn) }

func handleAddPartitionsToTxn(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AddPartitionsToTxnRequest)
	if req.Version >= 4 {
		// Batches from brokers verifying transactions (KIP-890).
		if !b.authorizeCluster(req, kmsg.ACLOperationClusterAction) {
			resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return protocol.Response{Msg: resp}
		}
	} else if denied := b.addPartitionsToTxnDenied(req, r); denied != nil {
		return protocol.Response{Msg: denied}
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.txns.AddPartitionsToTxn(ctx, r)}
	}}
}
