package server

// Produce, versions 0-11 advertised, 3-11 served.
//
// Versions 0-2 (message formats v0/v1) are advertised only because
// librdkafka's feature detection needs Produce v0 in the ApiVersions range
// (KAFKA-18659, as Kafka 4.x does); such requests get UNSUPPORTED_VERSION
// for every partition.
//
// Two phases: Handle validates and appends, partition by partition, in
// request order; an acks=-1 request whose partitions' high watermarks have
// not yet reached the appended offsets (never the case standalone, where
// HW = LEO) waits in the broker's purgatory (delayed_ops.go), answered
// through Response.Wait, until they do, for at most TimeoutMillis (then
// REQUEST_TIMED_OUT). acks=0 sends nothing back, and closes the
// connection on an error so that the producer refreshes its metadata.
//
// Authorization as Kafka's: transactional records need WRITE on the
// request's transactional id (else every partition fails with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, also when there is no id), each
// topic WRITE on the topic.
//
// Differences from Kafka: no recompression to the topic's compression.type
// and no per-record validation (offset deltas, keys on compacted topics)
// beyond the batch header checks; see GAPS.md.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

func init() { register(kmsg.Produce.Int16(), 0, 11, handleProduce) }

// producePending is an appended partition whose acks=-1 answer waits for
// the high watermark to reach requiredOffset.
type producePending struct {
	topic, partition int // indexes into the response
	p                *replica.Partition
	requiredOffset   int64
}

func handleProduce(b *Broker, ctx context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.ProduceRequest)
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(req.Version)

	var topLevelErr error
	switch {
	case req.Version < 3:
		topLevelErr = kerr.UnsupportedVersion
	case hasTransactionalRecords(r) && (r.TransactionID == nil ||
		!b.authorize(req, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *r.TransactionID)):
		// Kafka's handleProduceRequest looks at the records, not at the
		// request's transactional id: transactional batches need WRITE on
		// an id, so without one they fail for everyone; a transactional
		// id on plain records is not checked.
		topLevelErr = kerr.TransactionalIDAuthorizationFailed
	case r.Acks != -1 && r.Acks != 0 && r.Acks != 1:
		topLevelErr = kerr.InvalidRequiredAcks
	}
	var verified map[TopicPartition]verifiedPartition
	if topLevelErr == nil && r.TransactionID != nil && b.cfg.TransactionPartitionVerificationEnable {
		verified = b.verifyProduce(ctx, r, req.Version)
	}
	now := time.Now().UnixMilli()
	var pending []producePending
	failed := false
	resp.Topics = make([]kmsg.ProduceResponseTopic, 0, len(r.Topics))
	for _, rt := range r.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, 0, len(rt.Partitions))
		t := b.topic(rt.Topic)
		topicErr := topLevelErr
		if topicErr == nil && !b.authorize(req, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic, rt.Topic) {
			topicErr = kerr.TopicAuthorizationFailed
		}
		var rules produceRules
		if t != nil && topicErr == nil {
			rules = b.produceRules(t)
		}
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			err := topicErr
			var p *replica.Partition
			if err == nil {
				p, err = b.leaderPartition(t, rp.Partition)
				if err == nil && t.Internal {
					// Only the broker writes its internal topics.
					p, err = nil, kerr.InvalidTopicException
				}
			}
			var guard uint64
			// Partitions that fail verification never reach Kafka's
			// appendToLocalLog, where BrokerTopicMetrics count.
			counted := topicErr == nil && t != nil
			if v, ok := verified[TopicPartition{rt.Topic, rp.Partition}]; ok && err == nil {
				guard, err = v.guard, v.err
				counted = counted && err == nil
			}
			var lastOffset int64
			if err == nil {
				lastOffset, err = b.data.produceToPartition(p, rp.Records, req.Version, r.Acks, rules, guard, now, &sp)
			}
			if counted {
				b.topicStats.producedPartition(t.stats, len(rp.Records), lastOffset-sp.BaseOffset+1, err)
			}
			if err != nil {
				sp.ErrorCode = errCode(err)
				failed = true
			} else if r.Acks == -1 && p.HighWatermark() <= lastOffset {
				pending = append(pending, producePending{
					topic: len(resp.Topics), partition: len(st.Partitions),
					p: p, requiredOffset: lastOffset + 1,
				})
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if r.Acks == 0 {
		if failed {
			return protocol.Response{Close: true}
		}
		return protocol.Response{None: true}
	}
	var hints produceHints
	if req.Conn != nil {
		hints = produceHints{b, req.Conn.Listener}
	}
	if failed && len(pending) == 0 {
		hints.add(resp)
	}
	return produceWait(b.delayed, resp, pending, time.Duration(r.TimeoutMillis)*time.Millisecond, hints)
}

// produceToPartition validates one partition's records and appends them
// through the partition's one leader write path (min.insync.replicas,
// producer state, append), and fills sp with the outcome. It returns the
// offset of the batch's last record, which an acks=-1 answer waits to see
// committed.
func (d *dataPath) produceToPartition(p *replica.Partition, records []byte, version, acks int16, rules produceRules, guard uint64, now int64, sp *kmsg.ProduceResponseTopicPartition) (int64, error) {
	batches, err := validateProduce(records, version, rules, now)
	if err != nil {
		return -1, err
	}
	lat := int64(-1)
	if rules.logAppendTime {
		lat = now
	}
	info, err := p.AppendAsLeader(batches, acks, replica.AppendRules{LogAppendTime: lat, VerificationGuard: guard})
	if err != nil {
		return -1, err
	}
	if info.Duplicate {
		// A retried batch: answer with where it went the first time.
		sp.BaseOffset = info.FirstOffset
		sp.LogStartOffset = p.LogStartOffset()
		return info.LastOffset, nil
	}
	sp.BaseOffset = info.FirstOffset
	sp.LogAppendTime = info.LogAppendTime
	sp.LogStartOffset = p.LogStartOffset()
	return info.LastOffset, nil
}

// produceWait answers at once when nothing waits for replication, else
// puts the request in the purgatory until every pending partition's high
// watermark passed its appended offsets, or the request's timeout.
// hints adds KIP-951 leader hints to the final answer; a partition whose
// wait ended with NOT_LEADER_OR_FOLLOWER gets one too, as in Kafka, where
// the hints are added by the response callback whatever completed it.
func produceWait(delayed *delayedOps, resp *kmsg.ProduceResponse, pending []producePending, timeout time.Duration, hints produceHints) protocol.Response {
	if len(pending) == 0 {
		return protocol.Response{Msg: resp}
	}
	now := delayed.Now()
	op := newDelayedProduce(len(pending), now.Add(timeout))
	for i, pp := range pending {
		op.set(i, pp.p, pp.requiredOffset)
	}
	d := delayed.TryCompleteElseWatch(op, op.parts, now, op.verdict.Deadline)
	select {
	case <-d.Done():
		return produceAnswer(resp, pending, op, hints)
	default:
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		select {
		case <-d.Done():
		case <-ctx.Done():
			d.ForceComplete()
		}
		return produceAnswer(resp, pending, op, hints)
	}}
}

// produceAnswer fills in the outcome of a completed wait:
// NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
// min.insync.replicas, NOT_LEADER when leadership moved away meanwhile,
// REQUEST_TIMED_OUT for what the timeout found pending.
func produceAnswer(resp *kmsg.ProduceResponse, pending []producePending, op *delayedProduce, hints produceHints) protocol.Response {
	for i, pp := range pending {
		resp.Topics[pp.topic].Partitions[pp.partition].ErrorCode = errCode(op.err(i))
	}
	if anyPartitionFailed(resp) {
		hints.add(resp)
	}
	return protocol.Response{Msg: resp}
}

// produceHints adds KIP-951 leader hints for the connection's listener; the
// zero value (no broker: tests, or no connection) adds nothing. A value, not
// a closure, so the produce path allocates nothing for it.
type produceHints struct {
	b        *Broker
	listener string
}

func (h produceHints) add(resp *kmsg.ProduceResponse) {
	if h.b != nil {
		h.b.addProduceLeaderHints(resp, h.listener)
	}
}

func anyPartitionFailed(resp *kmsg.ProduceResponse) bool {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return true
			}
		}
	}
	return false
}

// hasTransactionalRecords is Kafka's RequestUtils.hasTransactionalRecords:
// the first batch of some partition is transactional.
func hasTransactionalRecords(r *kmsg.ProduceRequest) bool {
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			if h, ok := logstore.PeekBatchHeader(rp.Records); ok && h.IsTransactional() {
				return true
			}
		}
	}
	return false
}
