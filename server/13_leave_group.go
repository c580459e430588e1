package server

// LeaveGroup, versions 0-5.
//
// v3+ removes several (static) members at once.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.LeaveGroup.Int16(), 0, 5, handleLeaveGroup) }

func handleLeaveGroup(b *Broker, ctx context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.LeaveGroupRequest)
	return protocol.Response{Msg: b.groups.LeaveGroup(ctx, r)}
}
