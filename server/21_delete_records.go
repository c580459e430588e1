package server

// DeleteRecords, versions 0-2.
//
// Offset -1 means the high watermark. An offset above the high watermark
// (or below 0 other than -1) is OFFSET_OUT_OF_RANGE. The answer's low
// watermark is the new log start offset. Standalone the request completes
// at once; with replication Kafka waits until every follower's log start
// passed the offset (a DelayedDeleteRecords), which this handler would
// return as a Wait.

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DeleteRecords.Int16(), 0, 2, handleDeleteRecords) }

func handleDeleteRecords(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DeleteRecordsRequest)
	resp := kmsg.NewPtrDeleteRecordsResponse()
	resp.SetVersion(req.Version)
	for _, rt := range r.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		t := b.topic(rt.Topic)
		deletable := b.topicAllowed(req, kmsg.ACLOperationDelete, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			p, perr := b.leaderPartition(t, rp.Partition)
			switch {
			case !deletable:
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case perr != nil:
				sp.ErrorCode = errCode(perr)
			case !deletableTopic(b, t):
				// Kafka refuses DeleteRecords on compact-only topics.
				sp.ErrorCode = kerr.PolicyViolation.Code
			case rp.Offset < -1:
				sp.ErrorCode = kerr.OffsetOutOfRange.Code
			default:
				low, err := p.DeleteRecordsBefore(rp.Offset)
				if err != nil {
					sp.ErrorCode = errCode(err)
					break
				}
				// The log also forgot the producers whose every batch
				// is now gone, so their next batch is accepted with
				// any sequence.
				sp.LowWatermark = low
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Response{Msg: resp}
}

// deletableTopic: records can be deleted unless cleanup.policy is compact
// without delete.
func deletableTopic(b *Broker, t *Topic) bool {
	return strings.Contains(b.topicSetting(t, "cleanup.policy"), "delete")
}
