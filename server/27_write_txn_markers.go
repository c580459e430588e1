package server

// WriteTxnMarkers, versions 0-1 (all Kafka 3.9 has). Sent by a
// transaction coordinator to the leaders of a transaction's partitions,
// to end it there: per marker and partition, a control batch (commit or
// abort) appended as the coordinator (Kafka's AppendOrigin.COORDINATOR:
// epochs checked, no sequence) with acks=-1, answered once the high
// watermark passed it, as KafkaApis.handleWriteTxnMarkersRequest does
// through appendRecords. A partition that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION, one not led here NOT_LEADER_OR_FOLLOWER;
// the coordinator retries both. A stale producer epoch is
// INVALID_PRODUCER_EPOCH and a stale coordinator epoch
// TRANSACTION_COORDINATOR_FENCED (logstore.Log.AppendMarkerAsLeader).
// docs/transactions-log.md describes the markers.
//
// Only transaction coordinators send it: ALTER or CLUSTER_ACTION on the
// cluster (Kafka checks ALTER first), else every partition fails with
// CLUSTER_AUTHORIZATION_FAILED.
//
// Differences from Kafka: the wait is bounded by request.timeout.ms's
// default.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

func init() { register(kmsg.WriteTxnMarkers.Int16(), 0, 1, handleWriteTxnMarkers) }

// markerWrite is one partition's marker: where its answer goes and, once
// appended, the offset its high watermark must pass.
type markerWrite struct {
	slot     *kmsg.WriteTxnMarkersResponseMarkerTopicPartition
	p        *replica.Partition
	required int64
	topic    string
	marker   logstore.Marker
}

func handleWriteTxnMarkers(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.WriteTxnMarkersRequest)
	resp := r.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	resp.Markers = make([]kmsg.WriteTxnMarkersResponseMarker, len(r.Markers))
	var waits []markerWrite
	clusterOK := b.authorizeCluster(req, kmsg.ACLOperationAlter) || b.authorizeCluster(req, kmsg.ACLOperationClusterAction)
	for i, rm := range r.Markers {
		m := logstore.Marker{ProducerID: rm.ProducerID, ProducerEpoch: rm.ProducerEpoch, Commit: rm.Committed, CoordinatorEpoch: rm.CoordinatorEpoch}
		out := &resp.Markers[i]
		*out = kmsg.NewWriteTxnMarkersResponseMarker()
		out.ProducerID = rm.ProducerID
		out.Topics = make([]kmsg.WriteTxnMarkersResponseMarkerTopic, len(rm.Topics))
		for j, rt := range rm.Topics {
			ot := &out.Topics[j]
			*ot = kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			ot.Topic = rt.Topic
			ot.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(rt.Partitions))
			t := b.topic(rt.Topic)
			for k, idx := range rt.Partitions {
				op := &ot.Partitions[k]
				*op = kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				op.Partition = idx
				p, err := b.leaderPartition(t, idx)
				if !clusterOK {
					err = kerr.ClusterAuthorizationFailed
				}
				if err == nil {
					var info logstore.AppendInfo
					if info, err = p.AppendMarkerAsLeader(m, -1); err == nil {
						waits = append(waits, markerWrite{slot: op, p: p, required: info.LastOffset + 1, topic: rt.Topic, marker: m})
					}
				}
				op.ErrorCode = errCode(err)
			}
		}
	}
	if len(waits) == 0 {
		return protocol.Response{Msg: resp}
	}
	// Phase two, off the read loop: every marker waits for its
	// partition's high watermark in one delayed operation, as Kafka's
	// acks=-1 appendRecords does.
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		ps, required := make([]*replica.Partition, len(waits)), make([]int64, len(waits))
		for i, w := range waits {
			ps[i], required[i] = w.p, w.required
		}
		op := awaitReplication(ctx, b.delayed, ps, required, defaultRequestTimeout)
		for i, w := range waits {
			err := op.err(i)
			w.slot.ErrorCode = errCode(err)
			if err == nil {
				b.afterTxnMarker(w.topic, w.p.Index, w.marker)
			}
		}
		return protocol.Response{Msg: resp}
	}}
}

// afterTxnMarker runs after a marker was appended and replicated to
// partition of topic. The log needs nothing more: the marker already ended
// the producer's transaction in the partition's producer state, indexed an
// abort and moves the last stable offset as the high watermark passes it.
// On __consumer_offsets the group coordinator makes the transaction's
// offset commits visible or drops them (Kafka's
// GroupCoordinator.scheduleHandleTxnCompletion), before the coordinator is
// told the marker is written.
func (b *Broker) afterTxnMarker(topic string, partition int32, m logstore.Marker) {
	if topic == offsetsTopic {
		b.groups.CompleteTransaction(partition, m.ProducerID, m.Commit)
	}
}
