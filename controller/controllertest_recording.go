package controller

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// recordingChannel is the test BrokerChannel: it records every request in
// order and answers success (StopReplica lists its partitions without
// error), unless respond says otherwise.
type recordingChannel struct {
	mu      sync.Mutex
	sent    []sentRequest
	respond func(broker int32, req kmsg.Request) kmsg.Response
}

type sentRequest struct {
	broker int32
	req    kmsg.Request
}

func successResponse(req kmsg.Request) kmsg.Response {
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

type laiView struct {
	Leader, LeaderEpoch, ZkVersion, ControllerEpoch int32
	ISR, Replicas                                   []int32
	IsNew                                           bool
}

// leaderAndIsrs collects, per broker, the partition states sent in
// LeaderAndIsr requests.
func leaderAndIsrs(sent []sentRequest) map[int32]map[topicPartition]laiView {
	out := map[int32]map[topicPartition]laiView{}
	for _, s := range sent {
		r, ok := s.req.(*kmsg.LeaderAndISRRequest)
		if !ok {
			continue
		}
		if out[s.broker] == nil {
			out[s.broker] = map[topicPartition]laiView{}
		}
		for _, t := range r.TopicStates {
			for _, p := range t.PartitionStates {
				out[s.broker][topicPartition{t.Topic, p.Partition}] = laiView{
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

// updateMetadatas collects, per broker, the partition states and the live
// brokers of the last UpdateMetadata carrying each.
func updateMetadatas(sent []sentRequest) (parts map[int32]map[topicPartition]umView, live map[int32][]int32) {
	parts, live = map[int32]map[topicPartition]umView{}, map[int32][]int32{}
	for _, s := range sent {
		r, ok := s.req.(*kmsg.UpdateMetadataRequest)
		if !ok {
			continue
		}
		if parts[s.broker] == nil {
			parts[s.broker] = map[topicPartition]umView{}
		}
		live[s.broker] = nil
		for _, b := range r.LiveBrokers {
			live[s.broker] = append(live[s.broker], b.ID)
		}
		for _, t := range r.TopicStates {
			for _, p := range t.PartitionStates {
				parts[s.broker][topicPartition{t.Topic, p.Partition}] = umView{p.Leader, p.LeaderEpoch, p.ISR, p.OfflineReplicas}
			}
		}
	}
	return parts, live
}

func stopReplicas(sent []sentRequest) map[int32]map[topicPartition]bool {
	out := map[int32]map[topicPartition]bool{}
	for _, s := range sent {
		r, ok := s.req.(*kmsg.StopReplicaRequest)
		if !ok {
			continue
		}
		if out[s.broker] == nil {
			out[s.broker] = map[topicPartition]bool{}
		}
		for _, t := range r.Topics {
			for _, p := range t.PartitionStates {
				out[s.broker][topicPartition{t.Topic, p.Partition}] = p.Delete
			}
		}
	}
	return out
}
