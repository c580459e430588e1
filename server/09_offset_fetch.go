package server

// OffsetFetch, versions 1-9.
//
// v8+ fetches several groups at once; with require_stable (v7+, KIP-447) a
// partition with offsets in an open transaction answers UNSTABLE_OFFSET_COMMIT.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.OffsetFetch.Int16(), 1, 9, handleOffsetFetch) }

func handleOffsetFetch(b *Broker, ctx context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.OffsetFetchRequest)
	resp := b.groups.OffsetFetch(ctx, r)
	b.filterOffsetFetch(req, r, resp)
	return protocol.Response{Msg: resp}
}
