package controller

import "github.com/twmb/franz-go/pkg/kmsg"

// The controller builds its requests in their newest shape and sends them
// at the version inter.broker.protocol.version gives
// (metadataversion.Version.LeaderAndIsrVersion and the like), capped in
// the channel so that franz-go does not raise it to what the broker
// advertises. Older versions lay some fields out differently; these fit a
// request to its version, as Kafka's request builders do.

// fitLeaderAndIsr: before v2 the partition states are one flat list, each
// naming its topic.
func fitLeaderAndIsr(req *kmsg.LeaderAndISRRequest) {
	if req.Version >= 2 {
		return
	}
	for _, ts := range req.TopicStates {
		for _, ps := range ts.PartitionStates {
			ps.Topic = ts.Topic
			req.PartitionStates = append(req.PartitionStates, ps)
		}
	}
	req.TopicStates = nil
}

// fitUpdateMetadata: before v5 the partition states are one flat list;
// v0 gives each live broker's PLAINTEXT endpoint alone, as host and port.
func fitUpdateMetadata(req *kmsg.UpdateMetadataRequest) {
	if req.Version < 5 {
		for _, ts := range req.TopicStates {
			for _, ps := range ts.PartitionStates {
				ps.Topic = ts.Topic
				req.PartitionStates = append(req.PartitionStates, ps)
			}
		}
		req.TopicStates = nil
	}
	if req.Version == 0 {
		for i := range req.LiveBrokers {
			lb := &req.LiveBrokers[i]
			for _, ep := range lb.Endpoints {
				if ep.ListenerName == "PLAINTEXT" {
					lb.Host, lb.Port = ep.Host, ep.Port
				}
			}
		}
	}
}

// fitStopReplica: before v3 one request carries one delete flag for all
// its partitions, so a batch with both kinds goes out as two requests,
// the deletions first (Kafka's sendStopReplicaRequests), and without
// leader epochs; v0 names each partition with its topic.
func fitStopReplica(req *kmsg.StopReplicaRequest) []*kmsg.StopReplicaRequest {
	if req.Version >= 3 {
		return []*kmsg.StopReplicaRequest{req}
	}
	var out []*kmsg.StopReplicaRequest
	for _, del := range []bool{true, false} {
		r := *req
		r.DeletePartitions, r.Topics = del, nil
		for _, t := range req.Topics {
			r.Topics = append(r.Topics, oldStopReplicaTopics(t, del, req.Version == 0)...)
		}
		if len(r.Topics) > 0 {
			out = append(out, &r)
		}
	}
	return out
}

// oldStopReplicaTopics lays out t's partitions whose delete flag is del as
// StopReplica v1-2 has them (the topic with its partition numbers) or, with
// perPartition, as v0 does (an entry for each partition).
func oldStopReplicaTopics(t kmsg.StopReplicaRequestTopic, del, perPartition bool) []kmsg.StopReplicaRequestTopic {
	var parts []int32
	for _, ps := range t.PartitionStates {
		if ps.Delete == del {
			parts = append(parts, ps.Partition)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if !perPartition {
		nt := kmsg.NewStopReplicaRequestTopic()
		nt.Topic, nt.Partitions = t.Topic, parts
		return []kmsg.StopReplicaRequestTopic{nt}
	}
	out := make([]kmsg.StopReplicaRequestTopic, 0, len(parts))
	for _, p := range parts {
		nt := kmsg.NewStopReplicaRequestTopic()
		nt.Topic, nt.Partition = t.Topic, p
		out = append(out, nt)
	}
	return out
}
