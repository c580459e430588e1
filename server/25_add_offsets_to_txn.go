package server

// AddOffsetsToTxn, versions 0-4: the transaction will commit offsets of a
// group, so the group's __consumer_offsets partition joins the
// transaction and receives its marker.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AddOffsetsToTxn.Int16(), 0, 4, handleAddOffsetsToTxn) }

func handleAddOffsetsToTxn(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AddOffsetsToTxnRequest)
	code := int16(0)
	switch {
	case !b.authorizeTxnID(req, r.TransactionalID):
		code = kerr.TransactionalIDAuthorizationFailed.Code
	case !b.authorize(req, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, r.Group):
		code = kerr.GroupAuthorizationFailed.Code
	}
	if code != 0 {
		resp := r.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.txns.AddOffsetsToTxn(ctx, r, b.groups.PartitionFor(r.Group))}
	}}
}
