package server

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/controller"
	"github.com/kbroker/kbroker/replica"
)

// In cluster mode (zookeeper.connect set) a broker learns everything about
// topics from the controller, as Kafka's ZooKeeper-mode brokers do:
// UpdateMetadata fills the metadata cache (live brokers, every partition's
// leader and ISR), LeaderAndIsr makes this broker a partition's leader or
// follower, StopReplica removes a replica. The topic table that the API
// handlers read (Broker.topics) is rebuilt from the cache and the hosted
// replicas after each of them.

// ClusterControl is what the broker needs from the ZooKeeper side: the
// controller's admin operations (CreateTopics and friends are served by
// the controller broker, which writes the znodes) and the identity of the
// controller. zkbroker.Node implements it.
type ClusterControl interface {
	IsController() bool
	ControllerID() int32
	BrokerEpoch() int64
	CreateTopic(ctx context.Context, req ClusterTopicRequest) error
	// AutoCreateTopic creates a topic from any broker (auto-creation).
	AutoCreateTopic(ctx context.Context, req ClusterTopicRequest) error
	DeleteTopic(ctx context.Context, name string) error
	CreatePartitions(ctx context.Context, name string, count int32, assignment [][]int32, validateOnly bool) error
	SetTopicConfig(ctx context.Context, name string, configs map[string]string) error
	// TopicConfigs reads a topic's overrides (/config/topics/<t>).
	TopicConfigs(name string) (map[string]string, error)
	// ControlledShutdown moves leadership off a stopping broker and returns
	// the partitions it still leads; brokerEpoch -1 skips the epoch check.
	ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]TopicPartition, error)
	// AllocateProducerIDs claims the next producer id block for a broker,
	// as the controller ([start, end)).
	AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (start, end int64, err error)
	// AlterPartition applies partition leaders' ISR changes as the
	// controller (KIP-497); the error is the request's.
	AlterPartition(ctx context.Context, brokerID int32, brokerEpoch int64, version int16, items []controller.AlterPartitionItem) ([]controller.AlterPartitionResult, error)
	// ElectLeaders runs preferred (unclean false) or unclean elections;
	// partitions nil means all. Each partition maps to nil or its error.
	ElectLeaders(ctx context.Context, unclean bool, partitions []TopicPartition) (map[TopicPartition]error, error)
	// AlterPartitionReassignments starts reassignments to the target
	// replicas, or cancels them where the target is nil.
	AlterPartitionReassignments(ctx context.Context, targets map[TopicPartition][]int32) (map[TopicPartition]error, error)
	// ListPartitionReassignments lists ongoing reassignments; partitions
	// nil means all.
	ListPartitionReassignments(ctx context.Context, partitions []TopicPartition) (map[TopicPartition]PartitionReassignment, error)
}

// PartitionReassignment is an ongoing reassignment (KIP-455): Replicas is
// the union of the origin and target replicas while it runs.
type PartitionReassignment struct {
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// ClusterTopicRequest is a topic creation for the controller.
type ClusterTopicRequest struct {
	Name              string
	NumPartitions     int32
	ReplicationFactor int16
	Assignment        map[int32][]int32
	Configs           map[string]string
	ValidateOnly      bool
}

// liveBroker is one entry of UpdateMetadata's live brokers.
type liveBroker struct {
	ID        int32
	Rack      *string
	Endpoints map[string]brokerEndpoint // by listener name
}

type brokerEndpoint struct {
	Host string
	Port int32
}

// cachedTopic is a topic as UpdateMetadata describes it.
type cachedTopic struct {
	ID     [16]byte
	States map[int32]PartitionState
}

// clusterState is the broker's side of cluster mode. mu guards it and is
// taken before Broker.mu.
type clusterState struct {
	control ClusterControl

	mu              sync.Mutex
	controllerID    int32
	controllerEpoch int32
	brokers         map[int32]liveBroker
	cache           map[string]*cachedTopic
	// told: an UpdateMetadata has been applied since this broker started.
	// Atomic, not under mu: request handlers read it, some with mu held.
	told atomic.Bool
}

func newClusterState(control ClusterControl) *clusterState {
	return &clusterState{
		control:      control,
		controllerID: -1,
		brokers:      map[int32]liveBroker{},
		cache:        map[string]*cachedTopic{},
	}
}

// checkControllerRequest applies Kafka's fencing of controller requests
// (ReplicaManager.scala): an older controller epoch is STALE_CONTROLLER_EPOCH,
// a broker epoch older than ours (a request meant for this broker's
// previous incarnation) is STALE_BROKER_EPOCH. The caller holds mu.
func (c *clusterState) checkControllerRequest(controllerID, controllerEpoch int32, brokerEpoch int64) error {
	if controllerEpoch < c.controllerEpoch {
		return kerr.StaleControllerEpoch
	}
	if brokerEpoch >= 0 && brokerEpoch < c.control.BrokerEpoch() {
		return kerr.StaleBrokerEpoch
	}
	c.controllerEpoch = controllerEpoch
	c.controllerID = controllerID
	return nil
}

// lockForController fences a controller request and, when it passes, locks
// the cluster state for it: the caller defers the returned unlock.
func (b *Broker) lockForController(controllerID, controllerEpoch int32, brokerEpoch int64) (unlock func(), code int16) {
	c := b.cluster
	c.mu.Lock()
	if err := c.checkControllerRequest(controllerID, controllerEpoch, brokerEpoch); err != nil {
		c.mu.Unlock()
		return nil, errCode(err)
	}
	return c.mu.Unlock, 0
}

// rebuildTopics recomputes the topic table from the metadata cache and the
// hosted replicas. The caller holds c.mu.
func (b *Broker) rebuildTopics() {
	c := b.cluster
	topics := make(map[string]*Topic, len(c.cache))
	byID := make(map[[16]byte]*Topic, len(c.cache))
	for name, ct := range c.cache {
		n := int32(0)
		for p := range ct.States {
			if p+1 > n {
				n = p + 1
			}
		}
		t := &Topic{
			Name:       name,
			ID:         ct.ID,
			Internal:   isInternalTopic(name),
			Partitions: make([]*replica.Partition, n),
			States:     make([]PartitionState, n),
		}
		for p := int32(0); p < n; p++ {
			s, ok := ct.States[p]
			if !ok {
				s = PartitionState{Leader: -1, LeaderEpoch: -1, Replicas: []int32{}, ISR: []int32{}, Offline: []int32{}}
			}
			t.States[p] = s
			t.Partitions[p] = b.replicas.Get(name, p)
		}
		if old := b.topic(name); old != nil && old.ID == t.ID {
			t.Configs = old.Configs
			t.stats = old.stats
		}
		if t.stats == nil {
			t.stats = &topicStats{}
		}
		if t.Configs == nil {
			t.Configs = b.clusterTopicConfigs(name)
		}
		topics[name] = t
		byID[t.ID] = t
	}
	b.mu.Lock()
	b.setTopicsLocked(topics, byID)
	b.mu.Unlock()
}

// clusterTopicConfigs reads a topic's overrides from ZooKeeper; a failed
// read leaves the broker defaults in force and is logged.
func (b *Broker) clusterTopicConfigs(name string) map[string]string {
	cfgs, err := b.cluster.control.TopicConfigs(name)
	if err != nil {
		b.logger.Warn("cannot read topic configs; using broker defaults", "topic", name, "err", err)
		return map[string]string{}
	}
	if cfgs == nil {
		cfgs = map[string]string{}
	}
	return cfgs
}

// awaitingMetadata: this broker is part of a cluster and has not yet had
// an UpdateMetadata since it started, so its cache knows no topic at all.
// A topic missing from it is not unknown then, only not known yet: a
// broker restarted within a second of a SIGKILL hears from clients that
// still take it for a leader before the controller has told it anything,
// and a client answered UNKNOWN_TOPIC_OR_PARTITION a few times over (four
// times for franz-go's default UnknownTopicRetries) fails every record it
// holds for the topic. Kafka answers UNKNOWN_TOPIC_OR_PARTITION here.
func (c *clusterState) awaitingMetadata() bool {
	return c.control != nil && !c.told.Load()
}

// liveBrokers returns the live brokers by id order.
func (c *clusterState) liveBrokers() []liveBroker {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]liveBroker, 0, len(c.brokers))
	for _, lb := range c.brokers {
		out = append(out, lb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// controller returns the controller id the last controller request named.
func (c *clusterState) controller() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.controllerID
}

// partitionStateOf converts a controller request's partition state.
func partitionStateOf(leader, leaderEpoch, partitionEpoch int32, replicas, isr, offline []int32) PartitionState {
	if offline == nil {
		offline = []int32{}
	}
	return PartitionState{
		Leader:         leader,
		LeaderEpoch:    leaderEpoch,
		PartitionEpoch: partitionEpoch,
		Replicas:       append([]int32(nil), replicas...),
		ISR:            append([]int32(nil), isr...),
		Offline:        append([]int32(nil), offline...),
	}
}

// leaderDuringDelete is the leader id UpdateMetadata carries for partitions
// of a topic being deleted (LeaderAndIsr.LeaderDuringDelete).
const leaderDuringDelete = -2

// applyUpdateMetadata replaces the live brokers and the listed partitions'
// states in the cache. The caller holds c.mu.
func (b *Broker) applyUpdateMetadata(r *kmsg.UpdateMetadataRequest) {
	c := b.cluster
	brokers := make(map[int32]liveBroker, len(r.LiveBrokers))
	for _, lb := range r.LiveBrokers {
		e := liveBroker{ID: lb.ID, Rack: lb.Rack, Endpoints: map[string]brokerEndpoint{}}
		if r.Version == 0 {
			e.Endpoints["PLAINTEXT"] = brokerEndpoint{Host: lb.Host, Port: lb.Port}
		}
		for _, ep := range lb.Endpoints {
			name := ep.ListenerName
			if r.Version < 3 {
				name = "PLAINTEXT"
			}
			e.Endpoints[name] = brokerEndpoint{Host: ep.Host, Port: ep.Port}
		}
		brokers[lb.ID] = e
	}
	c.brokers = brokers
	c.told.Store(true)

	apply := func(topic string, id [16]byte, p kmsg.UpdateMetadataRequestTopicPartition) {
		ct := c.cache[topic]
		if p.Leader == leaderDuringDelete {
			if ct != nil {
				delete(ct.States, p.Partition)
				if len(ct.States) == 0 {
					delete(c.cache, topic)
				}
			}
			return
		}
		if ct == nil || (id != [16]byte{} && ct.ID != id) {
			ct = &cachedTopic{ID: id, States: map[int32]PartitionState{}}
			c.cache[topic] = ct
		}
		ct.States[p.Partition] = partitionStateOf(p.Leader, p.LeaderEpoch, p.ZKVersion, p.Replicas, p.ISR, p.OfflineReplicas)
	}
	for _, p := range r.PartitionStates {
		apply(p.Topic, [16]byte{}, p)
	}
	for _, ts := range r.TopicStates {
		for _, p := range ts.PartitionStates {
			apply(ts.Topic, ts.TopicID, p)
		}
	}
	b.rebuildTopics()
}

// brokerInfo is a broker as Metadata and DescribeCluster list it.
type brokerInfo struct {
	ID   int32
	Host string
	Port int32
	Rack *string
}

// brokersFor lists the brokers clients should see on a listener: the live
// brokers that have an endpoint for that listener (Kafka's metadata cache
// does the same).
func (b *Broker) brokersFor(listener string) []brokerInfo {
	var out []brokerInfo
	for _, lb := range b.cluster.liveBrokers() {
		if ep, ok := lb.Endpoints[listener]; ok {
			out = append(out, brokerInfo{ID: lb.ID, Host: ep.Host, Port: ep.Port, Rack: lb.Rack})
		}
	}
	return out
}

// controllerID is the controller clients are told about: the one the last
// controller request came from (-1 when none is known yet).
func (b *Broker) controllerID() int32 {
	return b.cluster.controller()
}
