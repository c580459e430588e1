package server

// LeaveGroup, versions 0-5.
//
// v3+ removes several (static) members at once.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.LeaveGroup.Int16(), 0, 5, handleLeaveGroup) }

func handleLeaveGroup(b *Broker, ctx context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.LeaveGroupRequest)
	if !b.authorize(req, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, r.Group) {
		resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Response{Msg: resp}
	}
	return protocol.Response{Msg: b.groups.LeaveGroup(ctx, r)}
}
