package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
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
}

const (
	offsetsTopic     = "__consumer_offsets"
	maxTopicNameLen  = 249
	maxPartitionsCap = 100000
)

var legalTopicName = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// validateTopicName applies Kafka's Topic.validate rules.
func validateTopicName(name string) error {
	switch {
	case name == "":
		return kerr.InvalidTopicException
	case name == "." || name == "..":
		return kerr.InvalidTopicException
	case len(name) > maxTopicNameLen:
		return kerr.InvalidTopicException
	case !legalTopicName.MatchString(name):
		return kerr.InvalidTopicException
	}
	return nil
}

// PartitionState is what Metadata reports of a partition: its leader and
// leader epoch, assigned replicas, in-sync replicas and offline replicas.
// Standalone, this broker is all of them; in cluster mode the controller's
// UpdateMetadata requests fill it in.
type PartitionState struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
	Offline        []int32
}

// state is partition p's state; false when t is nil or has no such
// partition.
func (t *Topic) state(p int32) (PartitionState, bool) {
	if t == nil || p < 0 || int(p) >= len(t.States) {
		return PartitionState{}, false
	}
	return t.States[p], true
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
}

// putTopicLocked adds t to the table or replaces the topic of its name and
// id. The caller holds b.mu.
func (b *Broker) putTopicLocked(t *Topic) {
	cur := b.topicsSnap.Load()
	byName, byID := maps.Clone(cur.byName), maps.Clone(cur.byID)
	byName[t.Name], byID[t.ID] = t, t
	b.setTopicsLocked(byName, byID)
}

// removeTopicLocked drops t from the table. The caller holds b.mu.
func (b *Broker) removeTopicLocked(t *Topic) {
	cur := b.topicsSnap.Load()
	byName, byID := maps.Clone(cur.byName), maps.Clone(cur.byID)
	delete(byName, t.Name)
	delete(byID, t.ID)
	b.setTopicsLocked(byName, byID)
}

// partition returns the partition if this broker leads it, or nil.
func (b *Broker) partition(topic string, p int32) *replica.Partition {
	lp, _ := b.leaderPartition(b.topic(topic), p)
	return lp
}

// leaderPartition returns this broker's replica of partition idx of t when
// it is the leader: only leaders serve produce and fetch (SPEC 1).
// Otherwise UNKNOWN_TOPIC_OR_PARTITION for a partition that does not
// exist, NOT_LEADER_OR_FOLLOWER for one led elsewhere.
func (b *Broker) leaderPartition(t *Topic, idx int32) (*replica.Partition, error) {
	if t == nil || idx < 0 || int(idx) >= len(t.Partitions) {
		return nil, kerr.UnknownTopicOrPartition
	}
	p := t.Partitions[idx]
	if p == nil || !p.IsLeader() {
		return nil, kerr.NotLeaderForPartition
	}
	return p, nil
}

// topicNames returns every topic name, sorted.
func (b *Broker) topicNames() []string {
	names := slices.Collect(maps.Keys(b.topicsSnap.Load().byName))
	sort.Strings(names)
	return names
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

// createTopic creates a topic in the local topic table and its partitions'
// logs (standalone) or through the controller (cluster mode). Errors are
// kerr errors suitable for a CreateTopics response.
func (b *Broker) createTopic(req CreateTopicRequest) (*Topic, error) {
	if err := validateTopicName(req.Name); err != nil {
		return nil, err
	}
	if b.cluster != nil {
		return b.createClusterTopic(req)
	}
	n := req.NumPartitions
	if len(req.Assignment) > 0 {
		if n != -1 && n != int32(len(req.Assignment)) {
			return nil, kerr.InvalidRequest
		}
		n = int32(len(req.Assignment))
		for p := int32(0); p < n; p++ {
			if err := b.validReplicas(req.Assignment[p]); err != nil {
				return nil, err
			}
		}
	}
	if n == -1 {
		n = b.cfg.NumPartitions
	}
	if n <= 0 || n > maxPartitionsCap {
		return nil, kerr.InvalidPartitions
	}
	rf := req.ReplicationFactor
	if rf == -1 {
		rf = b.cfg.DefaultReplicationFactor
	}
	if len(req.Assignment) == 0 && (rf <= 0) {
		return nil, kerr.InvalidReplicationFactor
	}
	if len(req.Assignment) == 0 && rf > 1 {
		// Standalone: one broker, so a larger factor cannot be placed.
		return nil, kerr.InvalidReplicationFactor
	}
	if err := b.cfg.ValidateTopicConfigs(req.Configs); err != nil {
		return nil, &configError{err}
	}

	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	if b.topic(req.Name) != nil {
		return nil, kerr.TopicAlreadyExists
	}
	if c := b.collidingTopic(req.Name); c != "" {
		return nil, kerr.InvalidTopicException
	}
	if req.ValidateOnly {
		return &Topic{Name: req.Name, Partitions: make([]*replica.Partition, n), States: make([]PartitionState, n), Configs: req.Configs}, nil
	}
	t := &Topic{Name: req.Name, Configs: req.Configs, Internal: req.Name == offsetsTopic}
	if _, err := rand.Read(t.ID[:]); err != nil {
		return nil, err
	}
	if t.Configs == nil {
		t.Configs = map[string]string{}
	}
	if err := b.topicStore.Save(topicRecordOf(t, n)); err != nil {
		return nil, err
	}
	if err := b.openPartitions(t, 0, n); err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.putTopicLocked(t)
	b.mu.Unlock()
	b.logger.Info("created topic", "topic", t.Name, "partitions", n, "configs", t.Configs)
	return t, nil
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

func (b *Broker) validReplicas(replicas []int32) error {
	if len(replicas) == 0 {
		return kerr.InvalidReplicaAssignment
	}
	for _, r := range replicas {
		if r != b.cfg.BrokerID {
			return kerr.InvalidReplicaAssignment
		}
	}
	if len(replicas) > 1 {
		return kerr.InvalidReplicaAssignment
	}
	return nil
}

// openPartitions opens (creating when needed) the logs of partitions
// [from, to) and appends them to t.Partitions.
func (b *Broker) openPartitions(t *Topic, from, to int32) error {
	lc := b.cfg.TopicLogConfig(t.Configs)
	for p := from; p < to; p++ {
		l, err := b.logs.GetOrCreate(t.Name, p, t.ID, lc)
		if err != nil {
			return fmt.Errorf("open %s-%d: %w", t.Name, p, err)
		}
		t.Partitions = append(t.Partitions, replica.NewLeader(t.Name, p, t.ID, l, 0))
		self := []int32{b.cfg.BrokerID}
		t.States = append(t.States, PartitionState{Leader: b.cfg.BrokerID, Replicas: self, ISR: self, Offline: []int32{}})
	}
	return nil
}

// createPartitions grows a topic to count partitions.
func (b *Broker) createPartitions(name string, count int32, validateOnly bool) error {
	if b.cluster != nil {
		return b.clusterAdmin(func(ctx context.Context, c ClusterControl) error {
			return c.CreatePartitions(ctx, name, count, nil, validateOnly)
		})
	}
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	t := b.topic(name)
	if t == nil {
		return kerr.UnknownTopicOrPartition
	}
	have := int32(len(t.Partitions))
	if count <= have || count > maxPartitionsCap {
		return kerr.InvalidPartitions
	}
	if validateOnly {
		return nil
	}
	grown := &Topic{Name: t.Name, ID: t.ID, Configs: t.Configs, Internal: t.Internal, Partitions: append([]*replica.Partition(nil), t.Partitions...), States: append([]PartitionState(nil), t.States...)}
	if err := b.openPartitions(grown, have, count); err != nil {
		return err
	}
	if err := b.topicStore.Save(topicRecordOf(grown, count)); err != nil {
		return err
	}
	b.mu.Lock()
	b.putTopicLocked(grown)
	b.mu.Unlock()
	return nil
}

// deleteTopic removes a topic and its data.
func (b *Broker) deleteTopic(name string) error {
	if b.cluster != nil {
		return b.clusterAdmin(func(ctx context.Context, c ClusterControl) error {
			return c.DeleteTopic(ctx, name)
		})
	}
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	t := b.topic(name)
	if t == nil {
		return kerr.UnknownTopicOrPartition
	}
	if t.Internal {
		return kerr.TopicAuthorizationFailed
	}
	b.mu.Lock()
	b.removeTopicLocked(t)
	b.mu.Unlock()
	if err := b.topicStore.Delete(name); err != nil {
		return err
	}
	var errs []error
	for _, p := range t.Partitions {
		if err := b.logs.Delete(t.Name, p.Index); err != nil {
			errs = append(errs, err)
		}
	}
	b.logger.Info("deleted topic", "topic", name)
	return errors.Join(errs...)
}

// setTopicConfigs replaces a topic's overrides and applies them to its logs.
func (b *Broker) setTopicConfigs(name string, configs map[string]string) error {
	if b.cluster != nil {
		// Any broker may write a topic's config znodes, as Kafka's
		// ZooKeeper-mode brokers do (AdminZkClient); the others learn of
		// it through /config/changes.
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
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	t := b.topic(name)
	if t == nil {
		return kerr.UnknownTopicOrPartition
	}
	updated := &Topic{Name: t.Name, ID: t.ID, Partitions: t.Partitions, States: t.States, Configs: configs, Internal: t.Internal}
	if err := b.topicStore.Save(topicRecordOf(updated, int32(len(t.Partitions)))); err != nil {
		return err
	}
	lc := b.cfg.TopicLogConfig(configs)
	for _, p := range t.Partitions {
		p.Log().SetConfig(lc)
	}
	b.mu.Lock()
	b.putTopicLocked(updated)
	b.mu.Unlock()
	return nil
}

// configError carries a config validation message to CreateTopics and the
// config APIs, which report it as INVALID_CONFIG with the message.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return kerr.InvalidConfig }
