package logstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func lockDir(path string) (*logDir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(path, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("log dir %s is in use by another process: %w", path, err)
	}
	return &logDir{path: path, lock: f}, nil
}

func (m *Manager) unlockDirs() {
	for _, d := range m.dirs {
		syscall.Flock(int(d.lock.Fd()), syscall.LOCK_UN)
		d.lock.Close()
	}
}

// initMeta makes every dir agree on broker.id and cluster.id, writing
// meta.properties where it is missing.
func (m *Manager) initMeta() error {
	want := MetaProperties{BrokerID: m.opts.BrokerID, ClusterID: m.opts.ClusterID}
	var missing []string
	for _, d := range m.dirs {
		path := filepath.Join(d.path, metaPropertiesFile)
		got, ok, err := readMetaProperties(path)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, path)
			continue
		}
		if want.BrokerID < 0 {
			want.BrokerID = got.BrokerID
		} else if got.BrokerID != want.BrokerID {
			return fmt.Errorf("%s: broker.id %d does not match %d", path, got.BrokerID, want.BrokerID)
		}
		if want.ClusterID == "" {
			want.ClusterID = got.ClusterID
		} else if got.ClusterID != "" && got.ClusterID != want.ClusterID {
			return fmt.Errorf("%s: cluster.id %s does not match %s", path, got.ClusterID, want.ClusterID)
		}
	}
	if want.BrokerID < 0 {
		want.BrokerID = 0
	}
	if want.ClusterID == "" {
		u := NewUUID()
		want.ClusterID = UUIDString(u)
		m.generatedClusterID = true
	}
	m.meta = want
	for _, path := range missing {
		if err := writeMetaProperties(path, want, time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// SetMeta records broker and cluster ids learnt after opening (a cluster id
// read from ZooKeeper). A dir already bound to another cluster or broker is
// an error, as Kafka's InconsistentClusterIdException, unless the ids in
// the dirs were made up by this very open (fresh dirs).
func (m *Manager) SetMeta(brokerID int32, clusterID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.dirs {
		path := filepath.Join(d.path, metaPropertiesFile)
		got, ok, err := readMetaProperties(path)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if got.ClusterID != "" && got.ClusterID != clusterID && !m.generatedClusterID {
			return fmt.Errorf("%s: cluster.id %s does not match %s", path, got.ClusterID, clusterID)
		}
		if got.BrokerID != brokerID && !m.generatedClusterID {
			return fmt.Errorf("%s: broker.id %d does not match %d", path, got.BrokerID, brokerID)
		}
	}
	m.meta = MetaProperties{BrokerID: brokerID, ClusterID: clusterID}
	m.generatedClusterID = false
	for _, d := range m.dirs {
		if err := writeMetaProperties(filepath.Join(d.path, metaPropertiesFile), m.meta, time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// loadDir reads the dir's clean-shutdown marker and checkpoints, then
// opens every partition directory in it.
func (m *Manager) loadDir(d *logDir) error {
	marker := filepath.Join(d.path, cleanShutdownFile)
	if _, err := os.Stat(marker); err == nil {
		d.cleanShutdown = true
		if err := os.Remove(marker); err != nil {
			return err
		}
	}
	rp, err := checkpointMap(filepath.Join(d.path, recoveryCheckpointFile))
	if err != nil {
		return err
	}
	ls, err := checkpointMap(filepath.Join(d.path, logStartCheckpointFile))
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return err
	}
	type opening struct {
		key partitionKey
		dir string
		log *FileLog
		err error
	}
	var todo []*opening
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		if strings.HasSuffix(name, "-delete") {
			// A topic deletion that did not finish before the shutdown.
			if err := os.RemoveAll(filepath.Join(d.path, name)); err != nil {
				return err
			}
			continue
		}
		topic, part, ok := parsePartitionDir(name)
		if !ok {
			continue
		}
		key := partitionKey{topic, part}
		if prev, dup := m.logs[key]; dup {
			return fmt.Errorf("partition %s-%d is in both %s and %s", topic, part, prev.dir.path, d.path)
		}
		todo = append(todo, &opening{key: key, dir: filepath.Join(d.path, name)})
	}
	// After an unclean shutdown each log re-reads its unflushed segments;
	// num.recovery.threads.per.data.dir logs are opened at a time, as in
	// Kafka's LogManager.loadLogs.
	next := make(chan *opening)
	var wg sync.WaitGroup
	for range max(m.opts.RecoveryThreads, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range next {
				o.log, o.err = OpenFileLog(o.dir, m.opts.Defaults, FileLogOptions{
					RecoveryPoint:  rp[o.key],
					LogStartOffset: ls[o.key],
					CleanShutdown:  d.cleanShutdown,
					Logger:         m.opts.Logger,

					OnStorageFailure:     m.logFailed(d),
					ProducerIDExpiration: m.opts.ProducerIDExpiration,
				})
			}
		}()
	}
	for _, o := range todo {
		next <- o
	}
	close(next)
	wg.Wait()
	for _, o := range todo {
		if o.err != nil {
			return o.err
		}
	}
	for _, o := range todo {
		id, _, err := readPartitionMetadata(o.dir)
		if err != nil {
			m.logger.Warn("unreadable partition.metadata", "dir", o.dir, "err", err)
		}
		m.logs[o.key] = &managedLog{dir: d, topicID: id, log: o.log}
	}
	m.logger.Info("loaded log dir", "dir", d.path, "partitions", len(m.logs), "clean_shutdown", d.cleanShutdown)
	return nil
}

func checkpointMap(path string) (map[partitionKey]int64, error) {
	entries, err := ReadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	out := make(map[partitionKey]int64, len(entries))
	for _, e := range entries {
		out[partitionKey{e.Topic, e.Partition}] = e.Offset
	}
	return out, nil
}

// parsePartitionDir splits `<topic>-<partition>`; topics may contain '-'.
func parsePartitionDir(name string) (string, int32, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return "", 0, false
	}
	return name[:i], int32(p), true
}
