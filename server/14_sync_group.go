package server

// SyncGroup, versions 0-5.
//
// Followers wait until the leader sent the assignment.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.SyncGroup.Int16(), 0, 5, handleSyncGroup) }

func handleSyncGroup(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.SyncGroupRequest)
	// From v5 the protocol type and name are mandatory; Kafka's
	// handleSyncGroupRequest refuses a request without them before it
	// authorizes anything.
	if req.Version >= 5 && (r.ProtocolType == nil || r.Protocol == nil) {
		resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = kerr.InconsistentGroupProtocol.Code
		return protocol.Response{Msg: resp}
	}
	if !b.authorize(req, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, r.Group) {
		resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Response{Msg: resp}
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.groups.SyncGroup(ctx, r)}
	}}
}
