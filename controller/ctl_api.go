package controller

import "context"

// The controller's operations for the broker that hosts it: each runs on
// the event loop, so it sees and changes the controller context like any
// other event.

// ControlledShutdown is the controller's side of ControlledShutdown: it
// returns the partitions the broker still leads; the broker retries until
// none is left.
func (c *kafkaController) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]topicPartition, error) {
	var out []topicPartition
	err := c.call(ctx, "ControlledShutdown", func() error {
		var err error
		out, err = c.controlledShutdown(brokerID, brokerEpoch)
		return err
	})
	return out, err
}

// ElectLeaders runs preferred or unclean elections (KIP-460); partitions
// nil means all. Each partition maps to nil or its error (kerr or
// *KafkaError).
func (c *kafkaController) ElectLeaders(ctx context.Context, typ ElectionType, partitions []topicPartition) (map[topicPartition]error, error) {
	var out map[topicPartition]error
	err := c.call(ctx, "ElectLeaders", func() error {
		var err error
		out, err = c.electLeadersAPI(typ, partitions)
		return err
	})
	return out, err
}

// AlterPartitionReassignments starts (target replicas) or cancels (nil)
// reassignments (KIP-455). Each partition maps to nil or its error.
func (c *kafkaController) AlterPartitionReassignments(ctx context.Context, reassignments map[topicPartition][]int32) (map[topicPartition]error, error) {
	out := map[topicPartition]error{}
	err := c.call(ctx, "AlterPartitionReassignments", func() error {
		for _, tp := range sortedTopicPartitions(reassignments) {
			e := c.alterPartitionReassignment(topicPartition(tp), reassignments[tp])
			if isFatalZKError(e) {
				return e
			}
			out[tp] = e
		}
		return nil
	})
	return out, err
}

// ListPartitionReassignments lists ongoing reassignments; partitions nil
// means all.
func (c *kafkaController) ListPartitionReassignments(ctx context.Context, partitions []topicPartition) (map[topicPartition]OngoingReassignment, error) {
	var out map[topicPartition]OngoingReassignment
	err := c.call(ctx, "ListPartitionReassignments", func() error {
		out = c.listReassignments(partitions)
		return nil
	})
	return out, err
}

func sortedTopicPartitions[V any](m map[topicPartition]V) []topicPartition {
	tps := make([]topicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, topicPartition(tp))
	}
	sortPartitions(tps)
	out := make([]topicPartition, len(tps))
	for i, tp := range tps {
		out[i] = topicPartition(tp)
	}
	return out
}

// CheckLeaderImbalance queues the automatic preferred-leader election
// (auto.leader.rebalance.enable), the leader-imbalance check's tick.
func (c *kafkaController) CheckLeaderImbalance() {
	c.enqueue(ctlEvent{"AutoPreferredReplicaLeaderElection", c.processAutoPreferredReplicaLeaderElection})
}
