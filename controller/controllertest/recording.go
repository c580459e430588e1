package controllertest

import (
	"context"
	"sync"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RecordingChannel is the test BrokerChannel: it records every request in
// order and answers success (StopReplica lists its partitions without
// error), unless respond says otherwise.
type RecordingChannel struct {
	Mu      sync.Mutex
	Sent    []SentRequest
	Respond func(broker int32, req kmsg.Request) kmsg.Response
}

// SentRequest is one request a RecordingChannel was asked to send.
type SentRequest struct {
	Broker int32
	Req    kmsg.Request
}

// Send records the request and answers it.
func (r *RecordingChannel) Send(_ context.Context, broker int32, req kmsg.Request) (kmsg.Response, error) {
	r.Mu.Lock()
	r.Sent = append(r.Sent, SentRequest{broker, req})
	respond := r.Respond
	r.Mu.Unlock()
	if respond != nil {
		if resp := respond(broker, req); resp != nil {
			return resp, nil
		}
	}
	return SuccessResponse(req), nil
}

// Take returns and forgets what was sent.
func (r *RecordingChannel) Take() []SentRequest {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	out := r.Sent
	r.Sent = nil
	return out
}

// SuccessResponse is the answer of a broker that did what req asked.
func SuccessResponse(req kmsg.Request) kmsg.Response {
	resp := req.ResponseKind()
	if sr, ok := req.(*kmsg.StopReplicaRequest); ok {
		r := resp.(*kmsg.StopReplicaResponse)
		for _, t := range sr.Topics {
			for _, p := range t.PartitionStates {
				rp := kmsg.NewStopReplicaResponsePartition()
				rp.Topic, rp.Partition = t.Topic, p.Partition
				r.Partitions = append(r.Partitions, rp)
			}
		}
	}
	return resp
}

// LaiView is a partition state as a LeaderAndIsr request carried it.
type LaiView struct {
	Leader, LeaderEpoch, ZkVersion, ControllerEpoch int32
	ISR, Replicas                                   []int32
	IsNew                                           bool
}

// LeaderAndIsrs collects, per broker, the partition states sent in
// LeaderAndIsr requests.
func LeaderAndIsrs(sent []SentRequest) map[int32]map[kafkazk.TopicPartition]LaiView {
	out := map[int32]map[kafkazk.TopicPartition]LaiView{}
	for _, s := range sent {
		r, ok := s.Req.(*kmsg.LeaderAndISRRequest)
		if !ok {
			continue
		}
		if out[s.Broker] == nil {
			out[s.Broker] = map[kafkazk.TopicPartition]LaiView{}
		}
		for _, t := range r.TopicStates {
			for _, p := range t.PartitionStates {
				out[s.Broker][kafkazk.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = LaiView{
					p.Leader, p.LeaderEpoch, p.ZKVersion, p.ControllerEpoch, p.ISR, p.Replicas, p.IsNew}
			}
		}
	}
	return out
}

type umView struct {
	Leader, LeaderEpoch int32
	ISR, Offline        []int32
}

// UpdateMetadatas collects, per broker, the partition states and the live
// brokers of the last UpdateMetadata carrying each.
func UpdateMetadatas(sent []SentRequest) (parts map[int32]map[kafkazk.TopicPartition]umView, live map[int32][]int32) {
	parts, live = map[int32]map[kafkazk.TopicPartition]umView{}, map[int32][]int32{}
	for _, s := range sent {
		r, ok := s.Req.(*kmsg.UpdateMetadataRequest)
		if !ok {
			continue
		}
		if parts[s.Broker] == nil {
			parts[s.Broker] = map[kafkazk.TopicPartition]umView{}
		}
		live[s.Broker] = nil
		for _, b := range r.LiveBrokers {
			live[s.Broker] = append(live[s.Broker], b.ID)
		}
		for _, t := range r.TopicStates {
			for _, p := range t.PartitionStates {
				parts[s.Broker][kafkazk.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = umView{p.Leader, p.LeaderEpoch, p.ISR, p.OfflineReplicas}
			}
		}
	}
	return parts, live
}

// StopReplicas collects, per broker, the partitions sent in StopReplica
// requests and whether each was to be deleted.
func StopReplicas(sent []SentRequest) map[int32]map[kafkazk.TopicPartition]bool {
	out := map[int32]map[kafkazk.TopicPartition]bool{}
	for _, s := range sent {
		r, ok := s.Req.(*kmsg.StopReplicaRequest)
		if !ok {
			continue
		}
		if out[s.Broker] == nil {
			out[s.Broker] = map[kafkazk.TopicPartition]bool{}
		}
		for _, t := range r.Topics {
			for _, p := range t.PartitionStates {
				out[s.Broker][kafkazk.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Delete
			}
		}
	}
	return out
}
