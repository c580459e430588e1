package server

// AddOffsetsToTxn, versions 0-4: the transaction will commit offsets of a
// group, so the group's __consumer_offsets partition joins the
// transaction and receives its marker.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AddOffsetsToTxn.Int16(), 0, 4, handleAddOffsetsToTxn) }

func handleAddOffsetsToTxn(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AddOffsetsToTxnRequest)
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.txns.AddOffsetsToTxn(ctx, r, b.groups.PartitionFor(r.Group))}
	}}
}
