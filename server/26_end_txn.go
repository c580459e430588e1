package server

// EndTxn, versions 0-4: commit or abort. The coordinator answers once the
// PrepareCommit or PrepareAbort state is in __transaction_state; the
// markers follow in the background, and the producer's next transaction
// gets CONCURRENT_TRANSACTIONS until they are written.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.EndTxn.Int16(), 0, 4, handleEndTxn) }

func handleEndTxn(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.EndTxnRequest)
	if !b.authorizeTxnID(req, r.TransactionalID) {
		resp := r.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return protocol.Response{Msg: resp}
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.txns.EndTxn(ctx, r)}
	}}
}
