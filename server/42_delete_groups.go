package server

// DeleteGroups, versions 0-2.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DeleteGroups.Int16(), 0, 2, handleDeleteGroups) }

func handleDeleteGroups(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DeleteGroupsRequest)
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.groups.DeleteGroups(ctx, r)}
	}}
}
