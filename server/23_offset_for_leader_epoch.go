package server

// OffsetForLeaderEpoch, versions 0-4. A follower asks the leader where its
// latest leader epoch ends, and truncates its log there (KIP-101, KIP-279);
// consumers use it to detect log truncation (KIP-320). Answered from the
// log's leader-epoch cache by the leader; a request with replica id -2
// (debugging, v3+) is answered by any replica, as Kafka does.
// current_leader_epoch (v2+) is checked like Fetch's: FENCED_LEADER_EPOCH /
// UNKNOWN_LEADER_EPOCH.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

func init() { register(kmsg.OffsetForLeaderEpoch.Int16(), 0, 4, handleOffsetForLeaderEpoch) }

// debuggingReplicaID marks a request any replica may answer.
const debuggingReplicaID = -2

func handleOffsetForLeaderEpoch(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	// Kafka's handleOffsetForLeaderEpochRequest: CLUSTER_ACTION on the
	// cluster (followers) or DESCRIBE on the topic (consumers, KIP-320),
	// whoever the replica id says sent it.
	clusterOK := b.authorizeCluster(req, kmsg.ACLOperationClusterAction)
	for _, rt := range r.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		t := b.topic(rt.Topic)
		allowed := clusterOK || b.topicAllowed(req, kmsg.ACLOperationDescribe, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LeaderEpoch, sp.EndOffset = -1, -1
			p, err := b.epochReplica(t, rp.Partition, r.ReplicaID == debuggingReplicaID && req.Version >= 3)
			if !allowed {
				err = kerr.TopicAuthorizationFailed
			}
			if err == nil && req.Version >= 2 {
				err = p.CheckLeaderEpoch(rp.CurrentLeaderEpoch)
			}
			if err != nil {
				sp.ErrorCode = errCode(err)
			} else {
				sp.LeaderEpoch, sp.EndOffset = p.EndOffsetForEpoch(rp.LeaderEpoch)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Response{Msg: resp}
}

// epochReplica is the leader's replica, or with anyReplica any hosted one.
func (b *Broker) epochReplica(t *Topic, partition int32, anyReplica bool) (*replica.Partition, error) {
	if !anyReplica {
		return b.leaderPartition(t, partition)
	}
	if t == nil || partition < 0 || int(partition) >= len(t.Partitions) {
		return nil, kerr.UnknownTopicOrPartition
	}
	if p := t.Partitions[partition]; p != nil {
		return p, nil
	}
	return nil, kerr.NotLeaderForPartition
}
