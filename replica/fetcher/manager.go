package fetcher

import (
	"log/slog"
	"math"
	"sync"
	"unicode/utf16"

	"github.com/kbroker/kbroker/replica"
)

// Manager is Kafka's ReplicaFetcherManager: it owns the fetchers of this
// broker, NumReplicaFetchers per leader, and assigns each followed
// partition to one of them.
type Manager struct {
	cfg    Config
	dial   Dialer
	logger *slog.Logger
	lag    *lagMetric

	mu       sync.Mutex
	fetchers map[fetcherKey]*fetcher
	owner    map[replica.TopicPartition]fetcherKey
	closed   bool
}

type fetcherKey struct {
	leaderID  int32
	fetcherID int
}

// NewManager returns a manager with no fetchers; they start with the first
// AddPartitions naming their leader.
func NewManager(cfg Config, dial Dialer, logger *slog.Logger) *Manager {
	if logger == nil {
		logger = slog.Default()
	}
	m := &Manager{
		cfg:      cfg.withDefaults(),
		dial:     dial,
		logger:   logger,
		fetchers: map[fetcherKey]*fetcher{},
		owner:    map[replica.TopicPartition]fetcherKey{},
	}
	m.lag = newLagMetric(m.cfg.Registerer, m, logger)
	return m
}

// FetcherID is the fetcher a partition goes to among n per leader, as
// Kafka's getFetcherId: abs(31 * topic.hashCode + partition) mod n in
// Java's int arithmetic, so the spread matches a Kafka broker's.
func FetcherID(topic string, partition int32, n int) int {
	if n <= 1 {
		return 0
	}
	var h int32
	for _, u := range utf16.Encode([]rune(topic)) {
		h = 31*h + int32(u)
	}
	// Kafka's Utils.abs: Math.abs, except that MinInt32 maps to 0.
	v := 31*h + partition
	switch {
	case v == math.MinInt32:
		v = 0
	case v < 0:
		v = -v
	}
	return int(v) % n
}

// AddPartitions makes this broker fetch parts from leader (LeaderAndIsr
// "become follower", ReplicaManager.makeFollowers). A partition already
// fetching from the same leader in the same leader epoch keeps its state;
// otherwise it moves to leader's fetcher and starts over: truncation first,
// then fetching.
func (m *Manager) AddPartitions(leader BrokerEndpoint, parts ...Partition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	for _, p := range parts {
		tp := topicPartitionOf(p)
		key := fetcherKey{leader.ID, FetcherID(tp.Topic, tp.Partition, m.cfg.NumReplicaFetchers)}
		if old, ok := m.owner[tp]; ok && old != key {
			m.removeLocked(tp)
		}
		f := m.fetcherLocked(key, leader)
		f.add(p)
		m.owner[tp] = key
	}
}

// fetcherLocked returns the fetcher for key, starting it if needed. A
// leader that moved to another address gets a new fetcher that takes over
// the old one's partitions, as Kafka does.
func (m *Manager) fetcherLocked(key fetcherKey, leader BrokerEndpoint) *fetcher {
	f, ok := m.fetchers[key]
	if ok && f.leader.Addr == leader.Addr {
		return f
	}
	nf := newFetcher(key.fetcherID, leader, m.cfg, m.dial, m.logger)
	if ok {
		for _, p := range f.stop() {
			nf.add(p)
		}
	}
	m.fetchers[key] = nf
	nf.start()
	return nf
}

// RemovePartitions stops fetching tps (becoming leader, StopReplica, a new
// leader). When it returns, no fetcher writes to their logs any more.
// Fetchers left without partitions are shut down.
func (m *Manager) RemovePartitions(tps ...replica.TopicPartition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, tp := range tps {
		m.removeLocked(tp)
	}
}

func (m *Manager) removeLocked(tp replica.TopicPartition) {
	key, ok := m.owner[tp]
	if !ok {
		return
	}
	delete(m.owner, tp)
	f := m.fetchers[key]
	if f.remove(tp) == 0 {
		f.stop()
		delete(m.fetchers, key)
	}
}

// Close stops every fetcher and waits for their goroutines to end.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for key, f := range m.fetchers {
		f.stop()
		delete(m.fetchers, key)
	}
	clear(m.owner)
	m.lag.unregister()
}

// Resize changes num.replica.fetchers at runtime, as Kafka's
// AbstractFetcherManager.resizeThreadPool: every followed partition is
// assigned again by the new count, so that the hash spread stays what a
// broker started with that count has. A partition that moves to another
// fetcher starts over there (truncation first, then fetching), which is
// always safe.
func (m *Manager) Resize(n int) {
	if n <= 0 {
		n = 1
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || n == m.cfg.NumReplicaFetchers {
		return
	}
	m.logger.Info("resizing replica fetchers", "from", m.cfg.NumReplicaFetchers, "to", n)
	m.cfg.NumReplicaFetchers = n
	type moved struct {
		leader BrokerEndpoint
		parts  []Partition
	}
	var all []moved
	for key, f := range m.fetchers {
		all = append(all, moved{f.leader, f.stop()})
		delete(m.fetchers, key)
	}
	for _, mv := range all {
		for _, p := range mv.parts {
			tp := topicPartitionOf(p)
			key := fetcherKey{mv.leader.ID, FetcherID(tp.Topic, tp.Partition, n)}
			m.fetcherLocked(key, mv.leader).add(p)
			m.owner[tp] = key
		}
	}
}

// MaxLag is Kafka's ReplicaFetcherManager MaxLag: the largest
// leader HW - fetch offset over every partition this broker follows.
func (m *Manager) MaxLag() int64 {
	m.mu.Lock()
	fs := make([]*fetcher, 0, len(m.fetchers))
	for _, f := range m.fetchers {
		fs = append(fs, f)
	}
	m.mu.Unlock()
	var lag int64
	for _, f := range fs {
		lag = max(lag, f.maxLag())
	}
	return lag
}

// eachLag calls fn with every followed partition's lag and the name of
// the fetcher that follows it.
func (m *Manager) eachLag(fn func(clientID, topic string, partition int32, lag int64)) {
	m.mu.Lock()
	fs := make(map[fetcherKey]*fetcher, len(m.fetchers))
	for k, f := range m.fetchers {
		fs[k] = f
	}
	m.mu.Unlock()
	type partLag struct {
		tp  replica.TopicPartition
		lag int64
	}
	var lags []partLag
	for k, f := range fs {
		// Copied out: fn may block on the scrape, which must not hold
		// up the fetcher's next response.
		lags = lags[:0]
		f.mu.Lock()
		for tp, st := range f.parts {
			lags = append(lags, partLag{tp, st.lag})
		}
		f.mu.Unlock()
		name := threadName(k.fetcherID, k.leaderID)
		for _, l := range lags {
			fn(name, l.tp.Topic, l.tp.Partition, l.lag)
		}
	}
}

// Fetching reports the leader and fetcher id a partition is assigned to.
func (m *Manager) Fetching(tp replica.TopicPartition) (leaderID int32, fetcherID int, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key, ok := m.owner[tp]
	return key.leaderID, key.fetcherID, ok
}

// NumFetchers is the number of running fetchers.
func (m *Manager) NumFetchers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.fetchers)
}
