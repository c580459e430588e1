package controller

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/kafkazk"
)

// The controller's operations for the broker that hosts it: each runs on
// the event loop, so it sees and changes the controller context like any
// other event.

// ControlledShutdown is the controller's side of ControlledShutdown: it
// returns the partitions the broker still leads; the broker retries until
// none is left.
func (c *Controller) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]kafkazk.TopicPartition, error) {
	var out []kafkazk.TopicPartition
	err := c.call(ctx, "ControlledShutdown", func() error {
		var err error
		out, err = c.controlledShutdown(brokerID, brokerEpoch)
		return err
	})
	return out, err
}

// CheckBrokerEpoch reports whether brokerID is registered at brokerEpoch,
// as the controller checks a broker's request before acting on it:
// BROKER_ID_NOT_REGISTERED or STALE_BROKER_EPOCH otherwise.
func (c *Controller) CheckBrokerEpoch(ctx context.Context, brokerID int32, brokerEpoch int64) error {
	return c.call(ctx, "CheckBrokerEpoch", func() error {
		return checkBrokerEpoch(c.ctx, brokerID, brokerEpoch, kerr.BrokerIDNotRegistered)
	})
}

// ElectLeaders runs preferred or unclean elections (KIP-460); partitions
// nil means all. Each partition maps to nil or its error (kerr or
// *KafkaError).
func (c *Controller) ElectLeaders(ctx context.Context, typ ElectionType, partitions []kafkazk.TopicPartition) (map[kafkazk.TopicPartition]error, error) {
	var out map[kafkazk.TopicPartition]error
	err := c.call(ctx, "ElectLeaders", func() error {
		var err error
		out, err = c.electLeadersAPI(typ, partitions)
		return err
	})
	return out, err
}

// AlterPartitionReassignments starts (target replicas) or cancels (nil)
// reassignments (KIP-455). Each partition maps to nil or its error.
func (c *Controller) AlterPartitionReassignments(ctx context.Context, reassignments map[kafkazk.TopicPartition][]int32) (map[kafkazk.TopicPartition]error, error) {
	out := map[kafkazk.TopicPartition]error{}
	err := c.call(ctx, "AlterPartitionReassignments", func() error {
		for _, tp := range sortedTopicPartitions(reassignments) {
			e := c.alterPartitionReassignment(kafkazk.TopicPartition(tp), reassignments[tp])
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
func (c *Controller) ListPartitionReassignments(ctx context.Context, partitions []kafkazk.TopicPartition) (map[kafkazk.TopicPartition]OngoingReassignment, error) {
	var out map[kafkazk.TopicPartition]OngoingReassignment
	err := c.call(ctx, "ListPartitionReassignments", func() error {
		out = c.listReassignments(partitions)
		return nil
	})
	return out, err
}

func sortedTopicPartitions[V any](m map[kafkazk.TopicPartition]V) []kafkazk.TopicPartition {
	tps := make([]kafkazk.TopicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, kafkazk.TopicPartition(tp))
	}
	sortPartitions(tps)
	out := make([]kafkazk.TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = kafkazk.TopicPartition(tp)
	}
	return out
}

// CheckLeaderImbalance queues the automatic preferred-leader election
// (auto.leader.rebalance.enable), the leader-imbalance check's tick.
func (c *Controller) CheckLeaderImbalance() {
	c.enqueue(ctlEvent{"AutoPreferredReplicaLeaderElection", c.processAutoPreferredReplicaLeaderElection})
}

// Epoch is the controller epoch this controller was elected at.
func (c *Controller) Epoch() int32 { return c.epoch }

// EpochZkVersion is the /controller_epoch version this controller was
// elected at; its writes are fenced on it.
func (c *Controller) EpochZkVersion() int32 { return c.epochZkVersion }
