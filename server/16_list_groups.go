package server

// ListGroups, versions 0-5.
//
// v4 filters by state, v5 by type (only "classic" groups exist here).
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.ListGroups.Int16(), 0, 5, handleListGroups) }

func handleListGroups(b *Broker, ctx context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.ListGroupsRequest)
	resp := b.groups.ListGroups(ctx, r)
	b.filterListGroups(req, resp)
	return protocol.Response{Msg: resp}
}
