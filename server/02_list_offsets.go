package server

// ListOffsets, versions 1-9.
//
// Special timestamps: -2 earliest (log start offset), -1 latest (for a
// consumer the high watermark, or with isolation_level read_committed the
// last stable offset; the log end offset for a replica), -3 the record
// with the largest timestamp (KIP-734), -4 earliest local (= -2: there is
// no tiered storage), -5 latest tiered (KIP-1005: without tiered storage
// Kafka answers offset -1, and so do we). Any other timestamp finds the
// first record at or after it. A consumer never gets an offset at or
// above that same bound (HW or LSO) from a timestamp or max-timestamp
// lookup: it is answered -1, as Kafka's Partition.fetchOffsetForTimestamp
// with its lastFetchableOffset.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

func init() { register(kmsg.ListOffsets.Int16(), 1, 9, handleListOffsets) }

const (
	listEarliest      = -2
	listLatest        = -1
	listMaxTimestamp  = -3
	listEarliestLocal = -4
	listLatestTiered  = -5
)

func handleListOffsets(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.ListOffsetsRequest)
	resp := kmsg.NewPtrListOffsetsResponse()
	resp.SetVersion(req.Version)
	fromReplica := r.ReplicaID >= 0
	readCommitted := r.IsolationLevel == 1
	for _, rt := range r.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		t := b.topic(rt.Topic)
		// Kafka checks DESCRIBE on the topic.
		describable := b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			p, err := b.leaderPartition(t, rp.Partition)
			if !describable {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			} else if err != nil {
				sp.ErrorCode = errCode(err)
			} else if err := listOffset(p, rp, fromReplica, readCommitted, &sp); err != nil {
				sp.ErrorCode = errCode(err)
				sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Response{Msg: resp}
}

// listOffset answers one partition.
func listOffset(p *replica.Partition, rp kmsg.ListOffsetsRequestTopicPartition, fromReplica, readCommitted bool, sp *kmsg.ListOffsetsResponseTopicPartition) error {
	if err := p.CheckLeaderEpoch(rp.CurrentLeaderEpoch); err != nil {
		return err
	}
	epoch := p.LeaderEpoch()
	// What a consumer may see ends at the high watermark, or the last
	// stable offset for read_committed; a replica reads up to the log end.
	var fetchable int64
	switch {
	case fromReplica:
		fetchable = p.LogEndOffset()
	case readCommitted:
		fetchable = p.LastStableOffset()
	default:
		fetchable = p.HighWatermark()
	}
	found := func(ts, off int64) {
		if off < 0 || (!fromReplica && off >= fetchable) {
			return // stays -1: not found
		}
		sp.Timestamp, sp.Offset, sp.LeaderEpoch = ts, off, epoch
	}
	switch rp.Timestamp {
	case listEarliest, listEarliestLocal:
		sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, p.LogStartOffset(), epoch
	case listLatest:
		sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, fetchable, epoch
	case listLatestTiered:
		// No tiered storage: nothing was ever uploaded.
	case listMaxTimestamp:
		ts, off := p.Log().MaxTimestamp()
		found(ts, off)
	default:
		if rp.Timestamp < 0 {
			return kerr.InvalidRequest
		}
		off, ts, ok, err := p.Log().OffsetForTimestamp(rp.Timestamp)
		if err != nil {
			return err
		}
		if ok {
			found(ts, off)
		}
	}
	return nil
}
