package controller

import (
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
)

// failoverDecision is what a new controller sends once its context is read
// from ZooKeeper (KafkaController.onControllerFailover), before the
// elections, reassignments and deletions it resumes.
type failoverDecision struct {
	// metadata, sent first in a batch of its own: the live brokers to
	// every live broker, which needs them before it can act on a
	// LeaderAndIsr.
	metadata *requestBatch
	// replicas has a LeaderAndIsr for each replica on a live broker; the
	// ISR removals of dead replicas and the elections add to it.
	replicas *requestBatch
	// dead is the replicas on brokers that are not alive, per broker in
	// id order, to go OfflineReplica: without it a broker that died with
	// the old controller would stay in the ISR of every idle partition,
	// since the leader's own ISR expiration keeps a follower whose LEO
	// equals its own.
	dead []brokerReplicas
}

// brokerReplicas is one broker's replicas of some partitions.
type brokerReplicas struct {
	broker int32
	tps    []kafkazk.TopicPartition
}

// decideFailover decides from the context as read at failover.
func decideFailover(ctx *controllerContext) failoverDecision {
	d := failoverDecision{metadata: newRequestBatch(ctx), replicas: newRequestBatch(ctx), dead: deadReplicas(ctx)}
	d.metadata.addUpdateMetadata(ctx.liveBrokerIDs(), nil)
	for _, id := range ctx.liveBrokerIDs() {
		addReplicasOnline(ctx, d.replicas, id, ctx.partitionsOnBroker(id))
	}
	return d
}

// deadReplicas is the replicas, of topics not being deleted, hosted on
// brokers that are not alive, per broker in id order.
func deadReplicas(ctx *controllerContext) []brokerReplicas {
	dead := map[int32][]kafkazk.TopicPartition{}
	for _, tp := range ctx.allPartitions() {
		a, ok := ctx.assignment(tp)
		if !ok || ctx.topicsToDelete[tp.Topic] {
			continue
		}
		for _, r := range a.Replicas {
			if !ctx.isLive(r) {
				dead[r] = append(dead[r], tp)
			}
		}
	}
	out := make([]brokerReplicas, 0, len(dead))
	for id, tps := range dead {
		out = append(out, brokerReplicas{broker: id, tps: tps})
	}
	slices.SortFunc(out, func(a, b brokerReplicas) int { return int(a.broker) - int(b.broker) })
	return out
}

// cachedPartitionStates is every partition's state from the cached state
// znodes: New without one, else Online or Offline by its leader's
// liveness, as refreshPartitionState sets it.
func cachedPartitionStates(ctx *controllerContext) map[kafkazk.TopicPartition]partitionState {
	out := map[kafkazk.TopicPartition]partitionState{}
	for _, tp := range ctx.allPartitions() {
		st, ok := ctx.leadership[tp]
		if !ok {
			out[tp] = partitionNew
			continue
		}
		out[tp] = stateFromLeadership(ctx, tp, st)
	}
	return out
}
