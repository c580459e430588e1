package server

// JoinGroup, versions 2-9.
//
// The answer waits for the join phase: the initial rebalance delay for a new group, then until every member rejoined or the rebalance timeout passed.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/server/group"
)

func init() { register(kmsg.JoinGroup.Int16(), 2, 9, handleJoinGroup) }

func handleJoinGroup(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.JoinGroupRequest)
	if !b.authorize(req, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, r.Group) {
		// Kafka's JoinGroupRequest.getErrorResponse: no member id, not
		// even the one the client sent; no protocol (null from v7).
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = kerr.GroupAuthorizationFailed.Code, -1
		if req.Version < 7 {
			resp.Protocol = nullableString("")
		}
		return protocol.Response{Msg: resp}
	}
	ci := group.ClientInfo{ClientHost: "/" + remoteIP(req.Conn)}
	if req.ClientID != nil {
		ci.ClientID = *req.ClientID
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.groups.JoinGroup(group.WithClientInfo(ctx, ci), r)}
	}}
}
