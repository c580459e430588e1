package server

// OffsetCommit, versions 2-9.
//
// Commits are answered only after the records reached __consumer_offsets.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.OffsetCommit.Int16(), 2, 9, handleOffsetCommit) }

func handleOffsetCommit(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.OffsetCommitRequest)
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		return protocol.Response{Msg: b.groups.OffsetCommit(ctx, r)}
	}}
}
