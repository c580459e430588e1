package controller

import (
	"github.com/kbroker/kbroker/kafkazk"
)

// Replica state transitions (Kafka's ReplicaStateMachine).
// Only the transitions that send requests or write ZooKeeper are modelled;
// the replica states themselves follow from the context.

// addReplicasOnline is → OnlineReplica: each partition's current state
// goes to broker in a LeaderAndIsr. Partitions without a state znode yet
// (New) get theirs when they are initialized. It reads only the context.
func addReplicasOnline(ctx *controllerContext, b *requestBatch, broker int32, tps []kafkazk.TopicPartition) {
	for _, tp := range tps {
		if ctx.topicsToDelete[tp.Topic] {
			continue
		}
		st, ok := ctx.leadership[tp]
		a, known := ctx.assignment(tp)
		if !ok || !known {
			continue
		}
		b.addLeaderAndIsr([]int32{broker}, tp, st, a, false)
	}
}

// replicasOffline is → OfflineReplica: StopReplica (no delete) to the
// broker if it can still hear it (controlled shutdown), then the replica
// leaves the ISRs (removeReplicasFromIsr): the leader becomes -1 if it
// led, the ISR keeps its last member, the leader epoch is bumped, and the
// other replicas get a LeaderAndIsr.
func (c *Controller) replicasOffline(b *requestBatch, broker int32, tps []kafkazk.TopicPartition) error {
	addStopReplicas(c.ctx, b, broker, tps)
	return c.removeReplicaFromIsr(b, broker, tps)
}

func (c *Controller) removeReplicaFromIsr(b *requestBatch, broker int32, tps []kafkazk.TopicPartition) error {
	failed, err := c.updateLeadership(b, tps, func(tp kafkazk.TopicPartition, cur partitionLeadership, _ decisionInputs) decision {
		return decideIsrRemoval(c.ctx, tp, cur, broker)
	})
	for tp, e := range failed {
		c.log.Warn("could not remove replica from ISR", "topic", tp.Topic, "partition", tp.Partition, "replica", broker, "err", e)
	}
	return err
}
