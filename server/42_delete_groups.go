package server

// DeleteGroups, versions 0-2.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DeleteGroups.Int16(), 0, 2, handleDeleteGroups) }

func handleDeleteGroups(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DeleteGroupsRequest)
	// DELETE on each group; the denied ones are answered
	// GROUP_AUTHORIZATION_FAILED and the others deleted.
	var denied []kmsg.DeleteGroupsResponseGroup
	if b.authorizer != nil {
		allowed := *r
		allowed.Groups = nil
		for _, g := range r.Groups {
			if b.authorize(req, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeGroup, g) {
				allowed.Groups = append(allowed.Groups, g)
				continue
			}
			d := kmsg.NewDeleteGroupsResponseGroup()
			d.Group, d.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			denied = append(denied, d)
		}
		if len(allowed.Groups) == 0 {
			resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
			resp.Groups = denied
			return protocol.Response{Msg: resp}
		}
		r = &allowed
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		resp := b.groups.DeleteGroups(ctx, r)
		resp.Groups = append(resp.Groups, denied...)
		return protocol.Response{Msg: resp}
	}}
}
