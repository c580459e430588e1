package controller

import (
	"cmp"
	"maps"
	"slices"
	"sort"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topic deletion's decisions (TopicDeletionManager); ctl_delete.go
// executes them.

// decideDeletionMarkers sorts the markers read from /admin/delete_topics
// into topics to delete and names of topics the controller does not know,
// whose markers the executor removes.
func decideDeletionMarkers(ctx *controllerContext, names []string) (toDelete, unknown []string) {
	for _, t := range names {
		if _, ok := ctx.assignments[t]; !ok {
			unknown = append(unknown, t)
			continue
		}
		toDelete = append(toDelete, t)
	}
	return toDelete, unknown
}

// deletionStart is a topic whose deletion starts: every replica of it is
// pending (StopReplica with delete not yet sent) and its partitions go
// Offline.
type deletionStart struct {
	topic      string
	pending    map[topicPartitionReplica]bool
	partitions []kafkazk.TopicPartition
}

// deletionDecision is one pass over the topics being deleted.
type deletionDecision struct {
	// started: deletions that start now, in topic order.
	started []deletionStart
	// sent: the replicas whose StopReplica (delete) is in requests, to be
	// marked sent.
	sent []topicPartitionReplica
	// requests: UpdateMetadata of the started topics to the live brokers
	// (built once the partitions are Offline, it carries leader -2) and
	// the StopReplicas.
	requests *requestBatch
	// done: topics with no replica pending, whose znodes go now.
	done []string
}

// decideResumeDeletions starts the deletions not yet started and sends
// again the StopReplicas not delivered, to live replicas only: a replica
// on a dead broker holds the deletion until the broker returns. A topic
// being reassigned waits for the reassignment to finish.
func decideResumeDeletions(ctx *controllerContext) deletionDecision {
	topics := make([]string, 0, len(ctx.topicsToDelete))
	for t := range ctx.topicsToDelete {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	d := deletionDecision{requests: newRequestBatch(ctx)}
	for _, t := range topics {
		if topicBeingReassigned(ctx, t) {
			continue
		}
		pending, started := ctx.deletionPending[t]
		if !started {
			s := deletionStart{topic: t, pending: map[topicPartitionReplica]bool{}, partitions: ctx.partitionsOfTopic(t)}
			for _, tp := range s.partitions {
				a, _ := ctx.assignment(tp)
				for _, r := range a.Replicas {
					s.pending[topicPartitionReplica{tp, r}] = false
				}
			}
			d.started = append(d.started, s)
			d.requests.addUpdateMetadata(ctx.liveBrokerIDs(), s.partitions)
			pending = s.pending
		}
		var sent []topicPartitionReplica
		for r, wasSent := range pending {
			if !wasSent && ctx.isLive(r.Replica) {
				sent = append(sent, r)
				d.requests.addStopReplica([]int32{r.Replica}, r.TopicPartition, true, leaderEpochDuringDelete)
			}
		}
		sortReplicas(sent)
		d.sent = append(d.sent, sent...)
		if len(pending) == 0 {
			d.done = append(d.done, t)
		}
	}
	return d
}

func topicBeingReassigned(ctx *controllerContext, topic string) bool {
	for _, a := range ctx.assignments[topic] {
		if a.isBeingReassigned() {
			return true
		}
	}
	return false
}

func sortReplicas(rs []topicPartitionReplica) {
	slices.SortFunc(rs, func(a, b topicPartitionReplica) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Replica, b.Replica))
	})
}

// pendingChange is one change to a deletion's pending replicas: confirmed
// (the replica is deleted, no longer pending) or back to unsent (its
// StopReplica is sent again when possible).
type pendingChange struct {
	replica   topicPartitionReplica
	confirmed bool
	// err is why a replica went back to unsent, for the log.
	err error
}

// stopReplicaOutcome is what a StopReplica response means for the
// deletions.
type stopReplicaOutcome struct {
	// requestErr: the whole request failed; every replica it was deleting
	// is unsent again.
	requestErr error
	// changes, applied in order.
	changes []pendingChange
	// complete: topics with nothing pending once the changes are applied,
	// in the order they were first confirmed.
	complete []string
}

// decideStopReplicaResponse reads broker's response to a StopReplica.
// Only the partitions the request was deleting, of topics being deleted,
// count.
func decideStopReplicaResponse(ctx *controllerContext, broker int32, req *kmsg.StopReplicaRequest, resp *kmsg.StopReplicaResponse) stopReplicaOutcome {
	var deletingList []kafkazk.TopicPartition
	deleting := map[kafkazk.TopicPartition]bool{}
	for _, t := range req.Topics {
		for _, p := range t.PartitionStates {
			if tp := (kafkazk.TopicPartition{Topic: t.Topic, Partition: p.Partition}); p.Delete && !deleting[tp] {
				deleting[tp] = true
				deletingList = append(deletingList, tp)
			}
		}
	}
	var o stopReplicaOutcome
	if resp.ErrorCode != 0 {
		o.requestErr = kerr.ErrorForCode(resp.ErrorCode)
		sortPartitions(deletingList)
		for _, tp := range deletingList {
			key := topicPartitionReplica{tp, broker}
			if _, ok := ctx.deletionPending[tp.Topic][key]; ok {
				o.changes = append(o.changes, pendingChange{replica: key, err: o.requestErr})
			}
		}
		return o
	}
	// The pending sets as they will be: only those of touched topics are
	// copied.
	after := map[string]map[topicPartitionReplica]bool{}
	var touched []string
	for _, p := range resp.Partitions {
		tp := kafkazk.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		pending := ctx.deletionPending[tp.Topic]
		if !deleting[tp] || pending == nil {
			continue
		}
		if after[tp.Topic] == nil {
			after[tp.Topic] = maps.Clone(pending)
		}
		key := topicPartitionReplica{tp, broker}
		if p.ErrorCode != 0 {
			o.changes = append(o.changes, pendingChange{replica: key, err: kerr.ErrorForCode(p.ErrorCode)})
			after[tp.Topic][key] = false
			continue
		}
		o.changes = append(o.changes, pendingChange{replica: key, confirmed: true})
		delete(after[tp.Topic], key)
		if !slices.Contains(touched, tp.Topic) {
			touched = append(touched, tp.Topic)
		}
	}
	for _, t := range touched {
		if len(after[t]) == 0 {
			o.complete = append(o.complete, t)
		}
	}
	return o
}
