package server

// OffsetCommit, versions 2-9.
//
// Commits are answered only after the records reached __consumer_offsets.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.OffsetCommit.Int16(), 2, 9, handleOffsetCommit) }

func handleOffsetCommit(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.OffsetCommitRequest)
	// Kafka checks READ on the group, then READ on each topic; the
	// topics denied are answered TOPIC_AUTHORIZATION_FAILED and the rest
	// committed.
	if !b.authorize(req, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, r.Group) {
		return protocol.Response{Msg: offsetCommitDenied(r, kerr.GroupAuthorizationFailed.Code)}
	}
	var denied []kmsg.OffsetCommitResponseTopic
	if b.authorizer != nil {
		allowed := *r
		allowed.Topics = nil
		for _, rt := range r.Topics {
			if b.topicAllowed(req, kmsg.ACLOperationRead, rt.Topic) {
				allowed.Topics = append(allowed.Topics, rt)
			} else {
				denied = append(denied, offsetCommitTopicError(rt, kerr.TopicAuthorizationFailed.Code))
			}
		}
		if len(allowed.Topics) == 0 && len(denied) > 0 {
			resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
			resp.Topics = denied
			return protocol.Response{Msg: resp}
		}
		r = &allowed
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		resp := b.groups.OffsetCommit(ctx, r)
		resp.Topics = append(resp.Topics, denied...)
		return protocol.Response{Msg: resp}
	}}
}
