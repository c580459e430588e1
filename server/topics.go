package server

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/replica"
)

// Topic is one entry of the topic table.
type Topic struct {
	Name string
	ID   [16]byte
	// Partitions holds this broker's replica of each partition, by index,
	// or nil where it hosts none; States holds the cluster's view of every
	// partition. Both have one entry per partition.
	Partitions []*replica.Partition
	States     []PartitionState
	// Configs holds the topic-level overrides (DescribeConfigs source
	// DYNAMIC_TOPIC_CONFIG); everything else comes from the broker config.
	Configs  map[string]string
	Internal bool
	// stats are the topic's BrokerTopicMetrics, kept across rebuilds of
	// the table while the topic (its id) lives; nil for a topic that is
	// not in the table.
	stats *topicStats
}

const (
	offsetsTopic     = "__consumer_offsets"
	maxTopicNameLen  = 249
	maxPartitionsCap = 100000
)

// PartitionState is what Metadata reports of a partition: its leader and
// leader epoch, assigned replicas, in-sync replicas and offline replicas,
// as the controller's UpdateMetadata requests fill them in.
type PartitionState struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
	Offline        []int32
}

// replicationFactor is the number of replicas of the topic's partitions
// (partition 0's, as Kafka's CreateTopics answer reports it).
func (t *Topic) replicationFactor() int16 {
	if len(t.States) == 0 {
		return -1
	}
	return int16(len(t.States[0].Replicas))
}

// state is partition p's state; false when t is nil or has no such
// partition.
func (t *Topic) state(p int32) (PartitionState, bool) {
	if t == nil || p < 0 || int(p) >= len(t.States) {
		return PartitionState{}, false
	}
	return t.States[p], true
}

// leadershipSuspended reports whether this broker's leadership of
// partition p is suspended (replica.Partition.SuspendLeadership).
func (t *Topic) leadershipSuspended(p int32) bool {
	if p < 0 || int(p) >= len(t.Partitions) || t.Partitions[p] == nil {
		return false
	}
	return t.Partitions[p].LeadershipSuspended()
}

// topic returns the named topic, or nil.
func (b *Broker) topic(name string) *Topic {
	return b.topicsSnap.Load().byName[name]
}

// topicByID returns the topic with that id, or nil.
func (b *Broker) topicByID(id [16]byte) *Topic {
	return b.topicsSnap.Load().byID[id]
}

// topicSnapshot is the topic table. It is never changed once stored:
// writers store a changed copy under b.mu, so the produce and fetch paths,
// which look topics up on every request from every connection, load it
// instead of sharing a lock. Copies cost O(topics), once per topic change.
type topicSnapshot struct {
	byName map[string]*Topic
	byID   map[[16]byte]*Topic
}

// setTopicsLocked makes byName and byID, which the caller no longer
// changes, the topic table. The caller holds b.mu.
func (b *Broker) setTopicsLocked(byName map[string]*Topic, byID map[[16]byte]*Topic) {
	b.topicsSnap.Store(&topicSnapshot{byName: byName, byID: byID})
	b.refreshThrottledReplicas(byName)
}

// putTopicLocked adds t to the table or replaces the topic of its name and
// id. The caller holds b.mu.
func (b *Broker) putTopicLocked(t *Topic) {
	cur := b.topicsSnap.Load()
	byName, byID := maps.Clone(cur.byName), maps.Clone(cur.byID)
	byName[t.Name], byID[t.ID] = t, t
	b.setTopicsLocked(byName, byID)
}

// partition returns the partition if this broker leads it, or nil.
func (b *Broker) partition(topic string, p int32) *replica.Partition {
	lp, _ := b.leaderPartition(b.topic(topic), p)
	return lp
}

// leaderPartition returns this broker's replica of partition idx of t when
// it is the leader: only leaders serve produce and fetch (they order writes).
// Otherwise UNKNOWN_TOPIC_OR_PARTITION for a partition that does not
// exist, NOT_LEADER_OR_FOLLOWER for one led elsewhere, KAFKA_STORAGE_ERROR
// for one whose replica here is on a failed log dir (until the controller
// has moved its leadership, a client may still be sent here). Before the
// first UpdateMetadata, nothing is unknown, only led elsewhere
// (awaitingMetadata).
func (b *Broker) leaderPartition(t *Topic, idx int32) (*replica.Partition, error) {
	if t == nil || idx < 0 || int(idx) >= len(t.Partitions) {
		if b.cluster.awaitingMetadata() {
			return nil, kerr.NotLeaderForPartition
		}
		return nil, kerr.UnknownTopicOrPartition
	}
	p := t.Partitions[idx]
	if p != nil && p.Offline() {
		return nil, kerr.KafkaStorageError
	}
	if p == nil || !p.IsLeader() {
		return nil, kerr.NotLeaderForPartition
	}
	return p, nil
}

// sortedTopics returns every topic in name order, all from one snapshot of
// the table.
func (b *Broker) sortedTopics() []*Topic {
	out := slices.Collect(maps.Values(b.topicsSnap.Load().byName))
	slices.SortFunc(out, func(x, y *Topic) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// CreateTopicRequest is what CreateTopics, auto-creation and the internal
// topics ask for.
type CreateTopicRequest struct {
	Name              string
	NumPartitions     int32 // -1 = num.partitions
	ReplicationFactor int16 // -1 = default.replication.factor
	// Assignment, when set, gives the replicas of each partition explicitly.
	Assignment   map[int32][]int32
	Configs      map[string]string
	ValidateOnly bool
	// Auto marks an automatic creation (Metadata, FindCoordinator), which
	// any broker may make; CreateTopics is served by the controller only.
	Auto bool
}

// collidingTopic returns an existing topic whose name differs only by '.'
// versus '_' (they collide in metric names, so Kafka refuses them).
func (b *Broker) collidingTopic(name string) string {
	norm := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	want := norm(name)
	for other := range b.topicsSnap.Load().byName {
		if other != name && norm(other) == want {
			return other
		}
	}
	return ""
}

// createPartitions grows a topic to count partitions.
// Like Kafka's DelayedCreatePartitions, the answer waits until this
// broker's metadata shows the new partitions with leaders.
func (b *Broker) createPartitions(name string, count int32, validateOnly bool) error {
	return b.clusterAdmin(func(ctx context.Context, c ClusterControl) error {
		if err := c.CreatePartitions(ctx, name, count, nil, validateOnly); err != nil || validateOnly {
			return err
		}
		return b.awaitMetadata(ctx, func() bool {
			t := b.topic(name)
			return t == nil || int32(len(t.States)) >= count && allLed(t)
		})
	})
}

// deleteTopic marks a topic for deletion and waits until this broker's
// metadata no longer lists it, as Kafka's DelayedDeleteTopics does: the
// controller drops a topic from every broker's metadata as soon as it
// queues it for deletion, and removes its replicas and znodes after.
// Internal topics are refused: losing __consumer_offsets loses every
// group's offsets, and Kafka's own tools refuse it too.
func (b *Broker) deleteTopic(name string) error {
	t := b.topic(name)
	if t != nil && t.Internal {
		return kerr.TopicAuthorizationFailed
	}
	return b.clusterAdmin(func(ctx context.Context, c ClusterControl) error {
		if err := c.DeleteTopic(ctx, name); err != nil {
			return err
		}
		return b.awaitMetadata(ctx, func() bool {
			cur := b.topic(name)
			return cur == nil || t != nil && cur.ID != t.ID
		})
	})
}

// setTopicConfigs replaces a topic's overrides and applies them to its logs.
func (b *Broker) setTopicConfigs(name string, configs map[string]string) error {
	// Any broker may write a topic's config znodes, as Kafka's
	// ZooKeeper-mode brokers do (AdminZkClient); the others learn of it
	// through /config/changes.
	c := b.cluster.control
	if c == nil {
		return kerr.CoordinatorNotAvailable
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterAdminTimeout)
	err := c.SetTopicConfig(ctx, name, configs)
	cancel()
	if err == nil {
		b.useTopicConfigs(name, configs)
	}
	return err
}

// configError carries a config validation message to CreateTopics and the
// config APIs, which report it as INVALID_CONFIG with the message.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return kerr.InvalidConfig }
