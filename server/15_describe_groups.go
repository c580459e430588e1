package server

// DescribeGroups, versions 0-5.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DescribeGroups.Int16(), 0, 5, handleDescribeGroups) }

func handleDescribeGroups(b *Broker, ctx context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	resp := b.groups.DescribeGroups(ctx, r)
	b.filterDescribeGroups(req, r, resp)
	return protocol.Response{Msg: resp}
}
