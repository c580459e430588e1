package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

// The group coordinator (server/group) knows nothing of principals: the
// handlers check what Kafka's KafkaApis checks before handing a request
// over, and fill in the answers for what the principal may not touch.

// topicAllowed reports op on the topic.
func (b *Broker) topicAllowed(req *protocol.Request, op kmsg.ACLOperation, topic string) bool {
	return b.authorize(req, op, kmsg.ACLResourceTypeTopic, topic)
}

// offsetCommitDenied answers every partition of r with code.
func offsetCommitDenied(r *kmsg.OffsetCommitRequest, code int16) *kmsg.OffsetCommitResponse {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, rt := range r.Topics {
		resp.Topics = append(resp.Topics, offsetCommitTopicError(rt, code))
	}
	return resp
}

func offsetCommitTopicError(rt kmsg.OffsetCommitRequestTopic, code int16) kmsg.OffsetCommitResponseTopic {
	st := kmsg.NewOffsetCommitResponseTopic()
	st.Topic = rt.Topic
	for _, rp := range rt.Partitions {
		sp := kmsg.NewOffsetCommitResponseTopicPartition()
		sp.Partition, sp.ErrorCode = rp.Partition, code
		st.Partitions = append(st.Partitions, sp)
	}
	return st
}

// filterOffsetFetch removes or fails, in a coordinator's OffsetFetch
// answer, what the principal may not see: a group without DESCRIBE
// answers GROUP_AUTHORIZATION_FAILED with no offsets; a topic without
// DESCRIBE is dropped from an all-topics answer and answered
// TOPIC_AUTHORIZATION_FAILED when named (offset -1, metadata "": the
// defaults of Kafka's OffsetFetchResponse).
func (b *Broker) filterOffsetFetch(req *protocol.Request, r *kmsg.OffsetFetchRequest, resp *kmsg.OffsetFetchResponse) {
	if b.authorizer == nil {
		return
	}
	if req.Version < 8 {
		if !b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, r.Group) {
			resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Topics = []kmsg.OffsetFetchResponseTopic{}
			return
		}
		kept := resp.Topics[:0]
		for _, t := range resp.Topics {
			if !b.topicAllowed(req, kmsg.ACLOperationDescribe, t.Topic) {
				if r.Topics == nil {
					continue
				}
				for i := range t.Partitions {
					p := &t.Partitions[i]
					p.ErrorCode, p.Offset, p.LeaderEpoch, p.Metadata = kerr.TopicAuthorizationFailed.Code, -1, -1, nullableString("")
				}
			}
			kept = append(kept, t)
		}
		resp.Topics = kept
		return
	}
	requested := map[string]bool{}
	for _, g := range r.Groups {
		requested[g.Group] = g.Topics != nil
	}
	for gi := range resp.Groups {
		g := &resp.Groups[gi]
		if !b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, g.Group) {
			g.ErrorCode = kerr.GroupAuthorizationFailed.Code
			g.Topics = []kmsg.OffsetFetchResponseGroupTopic{}
			continue
		}
		kept := g.Topics[:0]
		for _, t := range g.Topics {
			if !b.topicAllowed(req, kmsg.ACLOperationDescribe, t.Topic) {
				if !requested[g.Group] {
					continue
				}
				for i := range t.Partitions {
					p := &t.Partitions[i]
					p.ErrorCode, p.Offset, p.LeaderEpoch, p.Metadata = kerr.TopicAuthorizationFailed.Code, -1, -1, nullableString("")
				}
			}
			kept = append(kept, t)
		}
		g.Topics = kept
	}
}

// filterDescribeGroups fails the groups the principal may not describe
// and fills in the authorized operations of the others when asked.
func (b *Broker) filterDescribeGroups(req *protocol.Request, r *kmsg.DescribeGroupsRequest, resp *kmsg.DescribeGroupsResponse) {
	for i := range resp.Groups {
		g := &resp.Groups[i]
		if !b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, g.Group) {
			denied := kmsg.NewDescribeGroupsResponseGroup()
			denied.Group, denied.ErrorCode = g.Group, kerr.GroupAuthorizationFailed.Code
			denied.Members = []kmsg.DescribeGroupsResponseGroupMember{}
			*g = denied
			continue
		}
		if r.IncludeAuthorizedOperations && g.ErrorCode == 0 {
			g.AuthorizedOperations = b.authorizedOperations(req, kmsg.ACLResourceTypeGroup, g.Group, groupOperations)
		}
	}
}

// filterListGroups keeps the groups the principal may describe, unless
// it may describe the cluster (then it sees them all, as in Kafka).
func (b *Broker) filterListGroups(req *protocol.Request, resp *kmsg.ListGroupsResponse) {
	if b.authorizer == nil || b.authorizeCluster(req, kmsg.ACLOperationDescribe) {
		return
	}
	kept := resp.Groups[:0]
	for _, g := range resp.Groups {
		if b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, g.Group) {
			kept = append(kept, g)
		}
	}
	resp.Groups = kept
}
