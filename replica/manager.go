package replica

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/internal/clock"
	"github.com/kbroker/kbroker/logstore"
)

// Manager is the broker's replica manager (Kafka's ReplicaManager): the
// partitions this broker hosts, the LeaderAndIsr and StopReplica decisions
// applied to them, the follower fetchers they are handed to, the leaders'
// ISR expiration and the high-watermark checkpoints. The API handlers ask
// it for partitions; it never answers requests itself.
//
// Locks: mu guards hosted. It is taken after the broker's cluster lock
// (which the controller-request handlers hold around their calls) and is
// never held across a partition's own lock being waited on by a write to
// the metadata store.
type Manager struct {
	cfg ManagerConfig

	mu     sync.Mutex
	hosted map[TopicPartition]*Partition
	// checkpointedHW is replication-offset-checkpoint as read at start-up:
	// a replica's first HW.
	checkpointedHW map[TopicPartition]int64
}

// ManagerConfig is what the replica manager is built from.
type ManagerConfig struct {
	BrokerID int32
	Logs     *logstore.Manager
	Fetchers Fetchers
	Logger   *slog.Logger
	// TopicConfigs reads a topic's overrides when one of its replicas is
	// first hosted.
	TopicConfigs func(topic string) map[string]string
	// LogConfig and PartitionOptions turn those overrides into the log's
	// and the replication rules' settings.
	LogConfig        func(topicConfigs map[string]string) logstore.Config
	PartitionOptions func(topicConfigs map[string]string) Options
}

// Fetchers replicate the partitions this broker follows (package fetcher
// implements it). While a partition is followed the fetcher is its log's
// only writer, so the manager unfollows before any change of role.
type Fetchers interface {
	Follow(leaderID int32, leaderAddr string, p *Partition)
	Unfollow(tps ...TopicPartition)
	Close()
}

// HwCheckpointFile is each log dir's high-watermark checkpoint, in Kafka's
// checkpoint format (ReplicaManager's replication-offset-checkpoint).
const HwCheckpointFile = "replication-offset-checkpoint"

// NewManager builds the manager and reads the log dirs' HW checkpoints.
func NewManager(cfg ManagerConfig) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Manager{cfg: cfg, hosted: map[TopicPartition]*Partition{}}
	m.checkpointedHW = m.readHighWatermarks()
	return m
}

// Role is one partition's state from a LeaderAndIsr request.
type Role struct {
	LeaderAndIsr
	Topic     string
	TopicID   [16]byte
	Partition int32
	// LeaderAddr is where a follower fetches from ("" when unknown: it
	// waits for the next LeaderAndIsr).
	LeaderAddr string
}

// BecomeLeaderOrFollower applies one partition's state, as Kafka's
// ReplicaManager.becomeLeaderOrFollower does per partition: a newer leader
// epoch is applied — this broker becomes leader when named, else follower
// — an older or equal one is STALE_CONTROLLER_EPOCH; a broker not among
// the replicas answers UNKNOWN_TOPIC_OR_PARTITION; a log that cannot be
// opened is KAFKA_STORAGE_ERROR. leads reports the role taken.
func (m *Manager) BecomeLeaderOrFollower(r Role) (p *Partition, leads bool, err error) {
	topic := r.Topic
	self := m.cfg.BrokerID
	if !slices.Contains(r.Replicas, self) {
		return nil, false, kerr.UnknownTopicOrPartition
	}
	tp := TopicPartition{topic, r.Partition}
	m.mu.Lock()
	p = m.hosted[tp]
	m.mu.Unlock()
	if p != nil && p.Offline() {
		// Checked first, as Kafka does: the controller learns from this
		// answer that the replica is offline, whatever the epochs say.
		return p, false, kerr.KafkaStorageError
	}
	if p != nil && r.LeaderEpoch <= p.LeaderEpoch() {
		if r.LeaderEpoch == p.LeaderEpoch() && r.Leader != self && !p.IsLeader() && p.LeaderID() == r.Leader {
			// The state this replica already follows. It may have taken it
			// from the state znode when it knew no endpoint for the leader
			// (server/cluster_deposed_leader.go), so it is not fetching
			// yet: the controller's request brings the endpoint.
			m.follow(p, r)
		}
		return p, false, kerr.StaleControllerEpoch
	}
	leads = r.Leader == self
	if p == nil {
		configs := m.cfg.TopicConfigs(topic)
		l, err := m.cfg.Logs.GetOrCreate(topic, r.Partition, r.TopicID, m.cfg.LogConfig(configs))
		if err != nil {
			m.cfg.Logger.Error("cannot open a partition log", "topic", topic, "partition", r.Partition, "err", err)
			return nil, false, kerr.KafkaStorageError
		}
		m.mu.Lock()
		hw := m.checkpointedHW[tp] // 0 when never checkpointed; New clamps it to the log
		p = New(topic, r.Partition, r.TopicID, l, hw, m.cfg.PartitionOptions(configs))
		m.hosted[tp] = p
		m.mu.Unlock()
	}
	m.cfg.Fetchers.Unfollow(tp)
	var applied bool
	if leads {
		applied = p.BecomeLeader(r.LeaderAndIsr)
	} else {
		applied = p.BecomeFollower(r.Leader, r.LeaderEpoch)
	}
	if !applied {
		if !leads && p.LeaderID() == r.Leader {
			// Still following the same leader: keep fetching.
			m.follow(p, r)
		}
		return p, false, kerr.StaleControllerEpoch
	}
	if !leads {
		m.follow(p, r)
	}
	m.cfg.Logger.Info("partition state applied", "topic", topic, "partition", r.Partition,
		"leader", r.Leader, "leader_epoch", r.LeaderEpoch, "isr", r.Isr, "role", map[bool]string{true: "leader", false: "follower"}[leads])
	return p, leads, nil
}

// follow hands a follower to the fetcher for its leader; with the leader
// unknown or without an address it waits for the next LeaderAndIsr.
func (m *Manager) follow(p *Partition, r Role) {
	if r.Leader < 0 {
		return
	}
	if r.LeaderAddr == "" {
		m.cfg.Logger.Warn("no endpoint for the leader; not fetching", "topic", p.Topic, "partition", p.Index, "leader", r.Leader)
		return
	}
	m.cfg.Fetchers.Follow(r.Leader, r.LeaderAddr, p)
}

// StopReplica removes one replica from this broker (StopReplica): a
// leader epoch at least the current one, or -1 / -2 (unknown / topic being
// deleted), stops it; an older one is FENCED_LEADER_EPOCH. deleteLog
// removes its data too. It returns the replica stopped, if any.
func (m *Manager) StopReplica(topic string, partition, leaderEpoch int32, deleteLog bool) (*Partition, error) {
	tp := TopicPartition{topic, partition}
	m.mu.Lock()
	p := m.hosted[tp]
	if p != nil && p.Offline() {
		// Its log cannot be touched; it stays known as offline until the
		// broker restarts (Kafka's stopReplicas answers the same).
		m.mu.Unlock()
		return nil, kerr.KafkaStorageError
	}
	if p != nil && leaderEpoch >= 0 && leaderEpoch < p.LeaderEpoch() {
		m.mu.Unlock()
		return nil, kerr.FencedLeaderEpoch
	}
	delete(m.hosted, tp)
	m.mu.Unlock()
	if p != nil {
		// Waiting fetches and produces see the partition go away.
		m.cfg.Fetchers.Unfollow(tp)
		p.Stop()
	}
	if deleteLog {
		if _, ok := m.cfg.Logs.Get(topic, partition); ok {
			if err := m.cfg.Logs.Delete(topic, partition); err != nil {
				m.cfg.Logger.Error("cannot delete a partition log", "topic", topic, "partition", partition, "err", err)
				return p, kerr.KafkaStorageError
			}
		}
	}
	return p, nil
}

// HandleLogDirFailure takes offline this broker's replicas of tps, whose
// log dir failed (Kafka's ReplicaManager.handleLogDirFailure): their
// fetchers stop and each partition is marked offline for good, so that
// clients and the controller get KAFKA_STORAGE_ERROR for them. Replicas
// not hosted yet are left to BecomeLeaderOrFollower, which finds their log
// offline. It returns the replicas taken offline.
func (m *Manager) HandleLogDirFailure(tps []TopicPartition) []*Partition {
	m.cfg.Fetchers.Unfollow(tps...)
	var out []*Partition
	for _, tp := range tps {
		m.mu.Lock()
		p := m.hosted[tp]
		m.mu.Unlock()
		if p == nil {
			continue
		}
		p.MarkOffline()
		out = append(out, p)
	}
	return out
}

// Get is this broker's replica of a partition, or nil.
func (m *Manager) Get(topic string, partition int32) *Partition {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hosted[TopicPartition{topic, partition}]
}

// Partitions lists every hosted replica, leader or follower, by topic and
// partition.
func (m *Manager) Partitions() []*Partition {
	m.mu.Lock()
	out := make([]*Partition, 0, len(m.hosted))
	for _, p := range m.hosted {
		out = append(out, p)
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Index < out[j].Index
	})
	return out
}

// RunIsrExpiration runs the leaders' periodic ISR check (Kafka's
// isr-expiration task, every replica.lag.time.max.ms / 2) until ctx ends.
func (m *Manager) RunIsrExpiration(ctx context.Context, interval time.Duration) {
	var running sync.WaitGroup
	runEvery(ctx, interval, 15*time.Second, func() {
		// A copy, so that the ISR writes happen outside the manager's lock.
		for _, p := range m.Partitions() {
			p.maybeShrinkIsrAside(&running)
		}
	})
	// A check still running may move the HW into its log: it ends before
	// the caller goes on to close the logs.
	running.Wait()
}

// Close stops the fetchers.
func (m *Manager) Close() { m.cfg.Fetchers.Close() }

// runEvery calls fn every interval (fallback when interval is not
// positive) until ctx ends.
func runEvery(ctx context.Context, interval, fallback time.Duration, fn func()) {
	if interval <= 0 {
		interval = fallback
	}
	clock.Every(ctx, interval, fn)
}
