package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"syscall"
)

// A log directory whose file system refuses a write (full, read-only,
// failing device) goes offline as a whole, as Kafka's log directories do
// (KIP-112, docs/log-dir-failure.md): its logs stop serving at once, the
// Manager forgets them until the next start, and OnDirFailure tells the
// broker so that it can take the replicas offline and tell the
// controller. The other directories keep serving.

// ErrLogDirFailed is the error of any operation on a log whose directory
// failed; the API layer answers it with KAFKA_STORAGE_ERROR.
var ErrLogDirFailed = errors.New("log directory failed")

// DirFailure is what OnDirFailure hears of a directory going offline.
type DirFailure struct {
	Dir string
	// Err is the first error that took it offline.
	Err error
	// Partitions are the logs it held, sorted.
	Partitions []PartitionKey
	// AllFailed is set when no directory is left online.
	AllFailed bool
}

// PartitionKey names one partition log.
type PartitionKey struct {
	Topic     string
	Partition int32
}

// isStorageFailure tells an error of the file system (a failed write,
// fsync, rename, create) from the log's own refusals (offsets, sizes,
// producer state), which leave the directory healthy.
func isStorageFailure(err error) bool {
	if err == nil || errors.Is(err, ErrClosed) {
		return false
	}
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se) || errors.As(err, &errno)
}

// storageError wraps a file system error as ErrLogDirFailed.
func storageError(err error) error {
	return fmt.Errorf("%w: %w", ErrLogDirFailed, err)
}

// failLocked records a storage failure of the log, the first one only,
// and reports it to the Manager; any other error is returned as it is. The
// caller holds l.mu exclusively. The report runs on its own goroutine: the
// Manager takes its lock and then the logs', the reverse of the order here.
func (l *FileLog) failLocked(err error) error {
	if !isStorageFailure(err) {
		return err
	}
	if l.failed == nil {
		l.failed = err
		l.logger.Error("log write failed; its directory goes offline", "err", err)
		if l.onFailure != nil {
			go l.onFailure(err)
		}
	}
	return storageError(err)
}

// fail is failLocked for a caller not holding l.mu.
func (l *FileLog) fail(err error) error {
	if !isStorageFailure(err) {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failLocked(err)
}

// markFailed stops the log because its directory went offline: every
// later operation is refused. Its files stay open, unwritten: reads in
// flight may still hold them, and nothing more may be written to a
// directory that fails (no clean-shutdown snapshot either, so the next
// start recovers the log from its files).
func (l *FileLog) markFailed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed == nil {
		l.failed = err
	}
	l.closed = true
}

// failedErr is the refusal of a log whose directory failed, nil while it
// is healthy. The caller holds l.mu.
func (l *FileLog) failedErr() error {
	if l.failed == nil {
		return nil
	}
	return storageError(l.failed)
}

// MarkDirOffline takes dir offline after a storage failure found outside
// the logs (a checkpoint write); unknown or offline dirs are ignored.
func (m *Manager) MarkDirOffline(dir string, err error) {
	for _, d := range m.dirs {
		if d.path == dir {
			m.dirFailed(d, err)
			return
		}
	}
}

// dirFailed is Kafka's LogManager.handleLogDirFailure: the dir goes
// offline once, its logs are stopped and dropped from the hosted ones,
// and OnDirFailure is told.
func (m *Manager) dirFailed(d *logDir, cause error) {
	m.mu.Lock()
	if d.offline {
		m.mu.Unlock()
		return
	}
	d.offline = true
	var keys []PartitionKey
	for k, ml := range m.logs {
		if ml.dir != d {
			continue
		}
		ml.log.markFailed(cause)
		delete(m.logs, k)
		m.offlineLogs[k] = d.path
		keys = append(keys, PartitionKey{k.topic, k.partition})
	}
	live := 0
	for _, o := range m.dirs {
		if !o.offline {
			live++
		}
	}
	m.mu.Unlock()
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Topic != keys[j].Topic {
			return keys[i].Topic < keys[j].Topic
		}
		return keys[i].Partition < keys[j].Partition
	})
	m.logger.Error("log directory offline", "dir", d.path, "err", cause, "partitions", len(keys), "dirs_online", live)
	if m.opts.OnDirFailure != nil {
		m.opts.OnDirFailure(DirFailure{Dir: d.path, Err: cause, Partitions: keys, AllFailed: live == 0})
	}
}

// logFailed is the hook each log of d reports its storage failure to.
func (m *Manager) logFailed(d *logDir) func(error) {
	return func(err error) { m.dirFailed(d, err) }
}

// OfflineDirs lists the log dirs taken offline since start-up.
func (m *Manager) OfflineDirs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, d := range m.dirs {
		if d.offline {
			out = append(out, d.path)
		}
	}
	return out
}

// DirOffline reports whether dir was taken offline.
func (m *Manager) DirOffline(dir string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.dirs {
		if d.path == dir {
			return d.offline
		}
	}
	return false
}
