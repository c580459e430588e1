package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/controller"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/zkbroker"
	"github.com/kbroker/kbroker/zkstore"
)

// nodeControl adapts zkbroker.Node to what the broker needs of it
// (ClusterControl) and to what a partition leader needs to persist its ISR
// changes (replica.IsrWriter).
type nodeControl struct{ n *zkbroker.Node }

var (
	_ ClusterControl    = nodeControl{}
	_ replica.IsrWriter = nodeControl{}
)

func (c nodeControl) IsController() bool  { return c.n.IsController() }
func (c nodeControl) ControllerID() int32 { return c.n.ControllerID() }
func (c nodeControl) BrokerEpoch() int64  { return c.n.BrokerEpoch() }

func (c nodeControl) CreateTopic(_ context.Context, r ClusterTopicRequest) error {
	_, err := c.n.CreateTopic(r.Name, r.NumPartitions, r.ReplicationFactor, r.Assignment, r.Configs, r.ValidateOnly)
	return err
}

func (c nodeControl) AutoCreateTopic(_ context.Context, r ClusterTopicRequest) error {
	_, err := c.n.AutoCreateTopic(r.Name, r.NumPartitions, r.ReplicationFactor, r.Configs)
	return err
}

func (c nodeControl) DeleteTopic(_ context.Context, name string) error {
	return c.n.DeleteTopic(name)
}

func (c nodeControl) CreatePartitions(_ context.Context, name string, count int32, assignment [][]int32, validateOnly bool) error {
	return c.n.CreatePartitions(name, count, assignment, validateOnly)
}

func (c nodeControl) SetTopicConfig(ctx context.Context, name string, configs map[string]string) error {
	return c.n.SetTopicConfig(ctx, name, configs)
}

func (c nodeControl) TopicConfigs(name string) (map[string]string, error) {
	return c.n.TopicConfigs(name)
}

func (c nodeControl) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]TopicPartition, error) {
	tps, err := c.n.ControlledShutdown(ctx, brokerID, brokerEpoch)
	out := make([]TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
	}
	return out, err
}

func (c nodeControl) AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (int64, int64, error) {
	return c.n.AllocateProducerIDs(ctx, brokerID, brokerEpoch)
}

func (c nodeControl) AlterPartition(ctx context.Context, brokerID int32, brokerEpoch int64, version int16, items []controller.AlterPartitionItem) ([]controller.AlterPartitionResult, error) {
	return c.n.AlterPartition(ctx, brokerID, brokerEpoch, version, items)
}

func (c nodeControl) ElectLeaders(ctx context.Context, unclean bool, partitions []TopicPartition) (map[TopicPartition]error, error) {
	typ := controller.ElectPreferred
	if unclean {
		typ = controller.ElectUnclean
	}
	var tps []zkbroker.TopicPartition
	if partitions != nil {
		tps = make([]zkbroker.TopicPartition, len(partitions))
		for i, tp := range partitions {
			tps[i] = zkbroker.TopicPartition(tp)
		}
	}
	res, err := c.n.ElectLeaders(ctx, typ, tps)
	out := make(map[TopicPartition]error, len(res))
	for tp, e := range res {
		out[TopicPartition(tp)] = e
	}
	return out, err
}

func (c nodeControl) AlterPartitionReassignments(ctx context.Context, targets map[TopicPartition][]int32) (map[TopicPartition]error, error) {
	in := make(map[zkbroker.TopicPartition][]int32, len(targets))
	for tp, rs := range targets {
		in[zkbroker.TopicPartition(tp)] = rs
	}
	res, err := c.n.AlterPartitionReassignments(ctx, in)
	out := make(map[TopicPartition]error, len(res))
	for tp, e := range res {
		out[TopicPartition(tp)] = e
	}
	return out, err
}

func (c nodeControl) ListPartitionReassignments(ctx context.Context, partitions []TopicPartition) (map[TopicPartition]PartitionReassignment, error) {
	var tps []zkbroker.TopicPartition
	if partitions != nil {
		tps = make([]zkbroker.TopicPartition, len(partitions))
		for i, tp := range partitions {
			tps[i] = zkbroker.TopicPartition(tp)
		}
	}
	res, err := c.n.ListPartitionReassignments(ctx, tps)
	out := make(map[TopicPartition]PartitionReassignment, len(res))
	for tp, r := range res {
		out[TopicPartition(tp)] = PartitionReassignment(r)
	}
	return out, err
}

func (c nodeControl) ClaimProducerIDBlock() (int64, int64, error) {
	return c.n.ClaimProducerIDBlock()
}

// claimProducerIDBlock claims producer ids from the cluster's shared
// counter (cluster mode): through the controller (AllocateProducerIds) from
// inter.broker.protocol.version 3.0-IV0, as Kafka's brokers do, and in
// /latest_producer_id_block directly below.
func (b *Broker) claimProducerIDBlock() (int64, int64, error) {
	if b.store == nil && b.cfg.InterBrokerProtocolVersion.AllocateProducerIDs() {
		return b.toController.allocateProducerIDs()
	}
	c, ok := b.cluster.control.(interface {
		ClaimProducerIDBlock() (int64, int64, error)
	})
	if !ok {
		return 0, 0, kerr.CoordinatorNotAvailable
	}
	return c.ClaimProducerIDBlock()
}

func (c nodeControl) WriteIsr(topic string, partition int32, leader int32, ch replica.IsrChange) (int32, error) {
	v, err := c.n.UpdateIsr(topic, partition, leaderAndIsrOf(leader, ch), ch.PartitionEpoch)
	return v, isrWriteError(err)
}

// ShrinkIsrPastController: see zkbroker.Node.ShrinkIsrPastController.
func (c nodeControl) ShrinkIsrPastController(topic string, partition int32, leader int32, ch replica.IsrChange) (int32, error) {
	v, err := c.n.ShrinkIsrPastController(topic, partition, leaderAndIsrOf(leader, ch), ch.PartitionEpoch)
	return v, isrWriteError(err)
}

func leaderAndIsrOf(leader int32, ch replica.IsrChange) kafkazk.LeaderAndIsr {
	return kafkazk.LeaderAndIsr{
		Leader:          leader,
		LeaderEpoch:     ch.LeaderEpoch,
		ISR:             ch.Isr,
		ControllerEpoch: ch.ControllerEpoch,
	}
}

// isrWriteError marks an ISR write that never reached ZooKeeper as unsent.
func isrWriteError(err error) error {
	if errors.Is(err, zkstore.ErrConnectionClosed) || errors.Is(err, zkstore.ErrSessionExpired) || errors.Is(err, zkbroker.ErrNotConnected) {
		return fmt.Errorf("%w: %w", replica.ErrIsrWriteUnsent, err)
	}
	return err
}

func (c nodeControl) RecordIsrChange(topic string, partition int32) {
	c.n.RecordIsrChange(topic, partition)
}

// partitionOptions are the replication settings of a partition hosted in
// cluster mode: min.insync.replicas from the topic's overrides, else the
// broker's.
func (b *Broker) partitionOptions(topicConfigs map[string]string) replica.Options {
	minIsr := int(b.current().MinInsyncReplicas)
	if v, ok := topicConfigs["min.insync.replicas"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			minIsr = n
		}
	}
	opts := replica.Options{
		LocalID:             b.cfg.BrokerID,
		ReplicaLagTimeMax:   b.cfg.ReplicaLagTimeMax,
		FollowerSilenceMax:  b.followerSilenceMax(),
		SilentFollowerGrace: b.silentFollowerGrace(),
		// The followers are brokers of this cluster, configured alike.
		FollowerFetchBackoff: b.cfg.ReplicaFetchBackoff,
		MinInsyncReplicas:    minIsr,
		Now:                  b.now,
		IsrChanged:           b.metrics.isrChanged,
		Delayed:              b.delayedOperations(),

		VerifyTransactions: b.cfg.TransactionPartitionVerificationEnable,
	}
	if w, ok := b.cluster.control.(replica.IsrWriter); ok {
		opts.IsrWriter = w
		if b.store == nil && b.cfg.InterBrokerProtocolVersion.AlterPartition() {
			opts.IsrWriter = b.toController
		}
	}
	return opts
}

func (c nodeControl) WriteLogDirEvent() error { return c.n.WriteLogDirEvent() }

func (c nodeControl) CloseSession() { c.n.CloseSession() }

// followerSilenceMax is how long a follower that is behind may go without
// fetching before it leaves the ISR (replica/isr.go, silent): two fetch
// waits (replica.fetch.wait.max.ms), at least 1 s, at most
// replica.lag.time.max.ms. A live follower that is behind has its parked
// fetch answered as soon as there is data, and fetches again at once, so
// a second of silence is a stopped or cut-off broker, not a slow one; and
// every acks=all write waits out that second. Kafka has no such bound: a
// dead or paused follower stalls every acks=all write until
// replica.lag.time.max.ms (30 s by default) has passed since it was last
// caught up.
func (b *Broker) followerSilenceMax() time.Duration {
	return min(b.cfg.ReplicaLagTimeMax, max(time.Second, 2*b.cfg.ReplicaFetchWaitMax))
}

// silentFollowerGrace: with the controller's probes on, a leader whose
// ISR is down to min.insync.replicas keeps a silent follower 10 s past
// replica.lag.time.max.ms. The probes fence a broker that stopped
// answering in about 2 s (3 s when cut off); the margin covers a loaded
// machine. Without probes, Kafka's lag time alone applies.
func (b *Broker) silentFollowerGrace() time.Duration {
	if b.cfg.BrokerProbeInterval <= 0 || b.cluster.control == nil {
		return 0
	}
	return 10 * time.Second
}

// isrCheckInterval is how often leaders check their ISR: Kafka's
// replica.lag.time.max.ms / 2, or more often, so that a silent follower
// leaves the ISR soon after followerSilenceMax.
func (b *Broker) isrCheckInterval() time.Duration {
	return min(b.cfg.ReplicaLagTimeMax/2, b.followerSilenceMax()/4)
}
