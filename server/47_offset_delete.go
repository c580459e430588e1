package server

// OffsetDelete, versions 0-0.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.OffsetDelete.Int16(), 0, 0, handleOffsetDelete) }

func handleOffsetDelete(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.OffsetDeleteRequest)
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.groups.OffsetDelete(ctx, r)}
	}}
}
