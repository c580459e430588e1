package server

// DescribeTopicPartitions, version 0 (KIP-966; kafka-topics --describe in
// Kafka 4.x uses it).
//
// Topics are answered in name order (all topics for an empty list),
// starting at the cursor. At most ResponsePartitionLimit partitions (capped
// at Kafka's max.request.partition.size.limit, 2000; a limit below 1 means
// the cap) go into one response; NextCursor names the first partition left
// out. With no ELR (KIP-966 eligible leader replicas are a KRaft feature),
// the ELR lists are empty.

import (
	"context"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

// maxRequestPartitionSizeLimit is Kafka's max.request.partition.size.limit.
const maxRequestPartitionSizeLimit = 2000

func init() {
	register(kmsg.DescribeTopicPartitions.Int16(), 0, 0, handleDescribeTopicPartitions)
}

func handleDescribeTopicPartitions(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeTopicPartitionsRequest)
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	resp.SetVersion(req.Version)

	all := len(r.Topics) == 0
	var names []string
	if all {
		// Topics the principal may not describe are left out.
		for _, n := range b.topicNames() {
			if b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, n) {
				names = append(names, n)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, t := range r.Topics {
			if !seen[t.Topic] {
				seen[t.Topic] = true
				names = append(names, t.Topic)
			}
		}
		sort.Strings(names)
	}
	cursorTopic, cursorPartition := "", int32(0)
	if r.Cursor != nil {
		cursorTopic, cursorPartition = r.Cursor.Topic, r.Cursor.Partition
		if !all && !slices.Contains(names, cursorTopic) {
			// Kafka fails the whole request; every topic carries the error.
			for _, n := range names {
				st := kmsg.NewDescribeTopicPartitionsResponseTopic()
				st.Topic, st.ErrorCode = nullableString(n), kerr.InvalidRequest.Code
				resp.Topics = append(resp.Topics, st)
			}
			return protocol.Response{Msg: resp}
		}
	}

	limit := r.ResponsePartitionLimit
	if limit < 1 || limit > maxRequestPartitionSizeLimit {
		limit = maxRequestPartitionSizeLimit
	}
	// Named topics the principal may not describe are answered after the
	// paged ones, whatever the limit, and never named by the cursor
	// (Kafka's DescribeTopicPartitionsRequestHandler).
	var allowed []string
	var denied []kmsg.DescribeTopicPartitionsResponseTopic
	for _, n := range names {
		if n < cursorTopic {
			continue
		}
		// With all topics, names holds the describable ones only.
		if all || b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, n) {
			allowed = append(allowed, n)
			continue
		}
		st := kmsg.NewDescribeTopicPartitionsResponseTopic()
		st.Topic, st.ErrorCode = nullableString(n), kerr.TopicAuthorizationFailed.Code
		st.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
		denied = append(denied, st)
	}
	remaining := int(limit)
	for _, n := range allowed {
		if remaining == 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: n, Partition: 0}
			break
		}
		start := int32(0)
		if n == cursorTopic {
			start = cursorPartition
		}
		st, next := b.describeTopicPartitions(n, start, remaining)
		st.AuthorizedOperations = b.authorizedOperations(req, kmsg.ACLResourceTypeTopic, n, topicOperations)
		remaining -= len(st.Partitions)
		resp.Topics = append(resp.Topics, st)
		if next >= 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: n, Partition: next}
			break
		}
	}
	resp.Topics = append(resp.Topics, denied...)
	return protocol.Response{Msg: resp}
}

// describeTopicPartitions describes at most limit partitions of a topic from
// start on; next is the first partition left out, or -1.
func (b *Broker) describeTopicPartitions(name string, start int32, limit int) (kmsg.DescribeTopicPartitionsResponseTopic, int32) {
	st := kmsg.NewDescribeTopicPartitionsResponseTopic()
	st.Topic = nullableString(name)
	t := b.topic(name)
	if t == nil {
		st.ErrorCode = kerr.UnknownTopicOrPartition.Code
		st.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
		return st, -1
	}
	st.TopicID = t.ID
	st.IsInternal = t.Internal
	st.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	if start < 0 {
		start = 0
	}
	for i := start; i < int32(len(t.Partitions)); i++ {
		if len(st.Partitions) == limit {
			return st, i
		}
		p := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		p.Partition = i
		s := t.States[i]
		p.LeaderID, p.LeaderEpoch = s.Leader, s.LeaderEpoch
		p.Replicas, p.ISR, p.OfflineReplicas = s.Replicas, s.ISR, s.Offline
		if s.Leader < 0 {
			p.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		p.EligibleLeaderReplicas = []int32{}
		p.LastKnownELR = []int32{}
		st.Partitions = append(st.Partitions, p)
	}
	return st, -1
}
