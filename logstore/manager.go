package logstore

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// ManagerOptions configure OpenManagerWithOptions.
type ManagerOptions struct {
	Dirs     []string
	Defaults Config
	Logger   *slog.Logger
	// BrokerID is checked against (or written to) meta.properties; < 0
	// takes the stored one, or 0 when there is none (standalone mode).
	BrokerID int32
	// ClusterID is checked against meta.properties; "" takes the stored
	// one, or generates one once (standalone mode).
	ClusterID string
	// RetentionCheckInterval is log.retention.check.interval.ms (5 min).
	RetentionCheckInterval time.Duration
	// FlushCheckInterval is how often flush.ms is evaluated (1 s).
	FlushCheckInterval time.Duration
	// CheckpointInterval is log.flush.offset.checkpoint.interval.ms (60 s).
	CheckpointInterval time.Duration
	// RecoveryThreads is num.recovery.threads.per.data.dir: how many logs
	// of a dir open at once at start-up (at least 1).
	RecoveryThreads int
	// ProducerIDExpiration is producer.id.expiration.ms (one day).
	ProducerIDExpiration time.Duration
	// OnDirFailure hears of each log dir going offline after a storage
	// failure, once per dir, on a goroutine of its own (dir_failure.go).
	OnDirFailure func(DirFailure)
}

// PartitionLog is one hosted partition.
type PartitionLog struct {
	Topic     string
	Partition int32
	TopicID   [16]byte // zero when partition.metadata is absent
	Dir       string   // the log dir holding it
	Log       Log
}

type logDir struct {
	path          string
	lock          *os.File
	cleanShutdown bool
	// offline is set, under Manager.mu, once a storage failure took the
	// dir offline; it stays offline until the next start.
	offline bool
}

type partitionKey struct {
	topic     string
	partition int32
}

type managedLog struct {
	dir     *logDir
	topicID [16]byte
	log     *FileLog
}

// Manager owns the log dirs of a broker and every partition log in them.
// See doc.go for its locking.
type Manager struct {
	opts   ManagerOptions
	logger *slog.Logger

	mu   sync.Mutex
	dirs []*logDir
	logs map[partitionKey]*managedLog
	// offlineLogs are the logs of offline dirs, by the dir: they may not
	// be created again elsewhere, which would hide the data they hold.
	offlineLogs map[partitionKey]string
	meta        MetaProperties
	// generatedClusterID: no dir had a cluster id and none was given, so
	// SetMeta may still replace the one made up at open.
	generatedClusterID bool
	closed             bool
}

// OpenManager opens dirs in standalone mode (broker and cluster ids from
// meta.properties or generated).
func OpenManager(dirs []string, defaults Config, logger *slog.Logger) (*Manager, error) {
	return OpenManagerWithOptions(ManagerOptions{Dirs: dirs, Defaults: defaults, Logger: logger, BrokerID: -1})
}

// OpenManagerWithOptions locks every log dir, validates meta.properties and
// opens every partition log, recovering them after an unclean shutdown.
func OpenManagerWithOptions(opts ManagerOptions) (*Manager, error) {
	if len(opts.Dirs) == 0 {
		return nil, errors.New("no log dirs")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RetentionCheckInterval <= 0 {
		opts.RetentionCheckInterval = 5 * time.Minute
	}
	if opts.FlushCheckInterval <= 0 {
		opts.FlushCheckInterval = time.Second
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = time.Minute
	}
	opts.Defaults = normalizeConfig(opts.Defaults)
	m := &Manager{opts: opts, logger: opts.Logger.With("component", "logmanager"), logs: map[partitionKey]*managedLog{}, offlineLogs: map[partitionKey]string{}}
	if err := m.open(); err != nil {
		m.unlockDirs()
		for _, ml := range m.logs {
			ml.log.Close()
		}
		return nil, err
	}
	return m, nil
}

func (m *Manager) open() error {
	for _, p := range m.opts.Dirs {
		d, err := lockDir(p)
		if err != nil {
			return err
		}
		m.dirs = append(m.dirs, d)
	}
	if err := m.initMeta(); err != nil {
		return err
	}
	for _, d := range m.dirs {
		if err := m.loadDir(d); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) ClusterID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.meta.ClusterID
}

func (m *Manager) BrokerID() int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.meta.BrokerID
}

func (m *Manager) Dirs() []string {
	out := make([]string, len(m.dirs))
	for i, d := range m.dirs {
		out[i] = d.path
	}
	return out
}

func (m *Manager) Get(topic string, partition int32) (Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ml, ok := m.logs[partitionKey{topic, partition}]
	if !ok {
		return nil, false
	}
	return ml.log, true
}

// GetOrCreate returns the partition's log, creating it in the dir with the
// fewest partitions. cfg fields left zero take the Manager's defaults; an
// existing log gets cfg applied. A non-zero topicID is written to
// partition.metadata when it differs from the stored one.
func (m *Manager) GetOrCreate(topic string, partition int32, topicID [16]byte, cfg Config) (Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	cfg = mergeConfig(cfg, m.opts.Defaults)
	key := partitionKey{topic, partition}
	if dir, ok := m.offlineLogs[key]; ok {
		return nil, fmt.Errorf("%w: %s-%d is in offline log dir %s", ErrLogDirFailed, topic, partition, dir)
	}
	if ml, ok := m.logs[key]; ok {
		ml.log.SetConfig(cfg)
		if topicID != ([16]byte{}) && topicID != ml.topicID {
			if err := writePartitionMetadata(ml.log.Dir(), topicID); err != nil {
				return nil, err
			}
			ml.topicID = topicID
		}
		return ml.log, nil
	}
	if topic == "" || strings.ContainsAny(topic, "/\\") || topic == "." || topic == ".." {
		return nil, fmt.Errorf("invalid topic name %q", topic)
	}
	d := m.leastLoadedDir()
	if d == nil {
		return nil, fmt.Errorf("%w: every log dir is offline", ErrLogDirFailed)
	}
	dir := filepath.Join(d.path, fmt.Sprintf("%s-%d", topic, partition))
	// A dir failing here goes offline too, reported once m.mu is released.
	// The partition is remembered as offline: it may have left files in
	// the failed dir, which a log created in another dir would clash with
	// at the next start.
	failed := func(err error) error {
		if !isStorageFailure(err) {
			return err
		}
		m.offlineLogs[key] = d.path
		go m.dirFailed(d, err)
		return storageError(err)
	}
	l, err := OpenFileLog(dir, cfg, FileLogOptions{CleanShutdown: true, Logger: m.opts.Logger, ProducerIDExpiration: m.opts.ProducerIDExpiration,
		OnStorageFailure: m.logFailed(d)})
	if err != nil {
		return nil, failed(err)
	}
	if topicID != ([16]byte{}) {
		if err := writePartitionMetadata(dir, topicID); err != nil {
			l.Close()
			return nil, failed(err)
		}
	}
	if err := syncDir(d.path); err != nil {
		l.Close()
		return nil, failed(err)
	}
	m.logs[key] = &managedLog{dir: d, topicID: topicID, log: l}
	return l, nil
}

// leastLoadedDir is the online dir with the fewest partitions, nil when
// every dir is offline.
func (m *Manager) leastLoadedDir() *logDir {
	count := map[*logDir]int{}
	for _, ml := range m.logs {
		count[ml.dir]++
	}
	var best *logDir
	for _, d := range m.dirs {
		if !d.offline && (best == nil || count[d] < count[best]) {
			best = d
		}
	}
	return best
}

// mergeConfig fills cfg's zero fields from defaults.
func mergeConfig(cfg, defaults Config) Config {
	pick := func(v, d int64) int64 {
		if v == 0 {
			return d
		}
		return v
	}
	cfg.SegmentBytes = pick(cfg.SegmentBytes, defaults.SegmentBytes)
	cfg.SegmentMs = pick(cfg.SegmentMs, defaults.SegmentMs)
	cfg.RetentionMs = pick(cfg.RetentionMs, defaults.RetentionMs)
	cfg.RetentionBytes = pick(cfg.RetentionBytes, defaults.RetentionBytes)
	cfg.FlushMessages = pick(cfg.FlushMessages, defaults.FlushMessages)
	cfg.FlushMs = pick(cfg.FlushMs, defaults.FlushMs)
	cfg.DeleteRetentionMs = pick(cfg.DeleteRetentionMs, defaults.DeleteRetentionMs)
	cfg.MinCompactionLagMs = pick(cfg.MinCompactionLagMs, defaults.MinCompactionLagMs)
	cfg.IndexIntervalBytes = int(pick(int64(cfg.IndexIntervalBytes), int64(defaults.IndexIntervalBytes)))
	cfg.MaxIndexBytes = int(pick(int64(cfg.MaxIndexBytes), int64(defaults.MaxIndexBytes)))
	if cfg.CleanupPolicy == "" {
		cfg.CleanupPolicy = defaults.CleanupPolicy
	}
	return cfg
}

// Delete removes a partition: its dir is renamed to
// `<topic>-<p>.<uuid>-delete` first, so a crash mid-delete leaves a dir
// the next start-up removes rather than a half-deleted log.
func (m *Manager) Delete(topic string, partition int32) error {
	m.mu.Lock()
	ml, ok := m.logs[partitionKey{topic, partition}]
	delete(m.logs, partitionKey{topic, partition})
	m.mu.Unlock()
	if !ok {
		return nil
	}
	dir := ml.log.Dir()
	u := NewUUID()
	renamed := fmt.Sprintf("%s.%s-delete", dir, hex.EncodeToString(u[:]))
	if err := ml.log.Close(); err != nil {
		m.logger.Warn("close deleted log", "dir", dir, "err", err)
	}
	if err := os.Rename(dir, renamed); err != nil {
		return err
	}
	return os.RemoveAll(renamed)
}

// All lists the hosted partitions, sorted by topic and partition.
func (m *Manager) All() []PartitionLog {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]PartitionLog, 0, len(m.logs))
	for k, ml := range m.logs {
		out = append(out, PartitionLog{Topic: k.topic, Partition: k.partition, TopicID: ml.topicID, Dir: ml.dir.path, Log: ml.log})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// DirSize is the total size of the partition logs in dir.
func (m *Manager) DirSize(dir string) int64 {
	var n int64
	for _, p := range m.All() {
		if p.Dir == dir {
			n += p.Log.Size()
		}
	}
	return n
}
