package server

// OffsetDelete, versions 0-0.
// The group coordinator (server/group) does the work; this file only routes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.OffsetDelete.Int16(), 0, 0, handleOffsetDelete) }

func handleOffsetDelete(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.OffsetDeleteRequest)
	// DELETE on the group, then READ on each topic (Kafka's
	// handleOffsetDeleteRequest).
	if !b.authorize(req, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeGroup, r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Response{Msg: resp}
	}
	var denied []kmsg.OffsetDeleteResponseTopic
	if b.authorizer != nil {
		allowed := *r
		allowed.Topics = nil
		for _, rt := range r.Topics {
			if b.topicAllowed(req, kmsg.ACLOperationRead, rt.Topic) {
				allowed.Topics = append(allowed.Topics, rt)
				continue
			}
			st := kmsg.NewOffsetDeleteResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetDeleteResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
			}
			denied = append(denied, st)
		}
		r = &allowed
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		resp := b.groups.OffsetDelete(ctx, r)
		resp.Topics = append(resp.Topics, denied...)
		return protocol.Response{Msg: resp}
	}}
}
