package logstore

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// ErrUnexpectedAppendOffset is returned by AppendAsFollower when the first
// batch does not start at the log end offset.
var ErrUnexpectedAppendOffset = errors.New("unexpected append offset")

const epochCheckpointFile = "leader-epoch-checkpoint"

// noHighWatermark is a log's high watermark before the replica layer sets
// one: it bounds nothing, and completed transactions are kept unstable.
const noHighWatermark = 1<<63 - 1

// FileLogOptions carries what the Manager knows about a log from its log
// dir's checkpoints and clean-shutdown marker.
type FileLogOptions struct {
	// RecoveryPoint is from recovery-point-offset-checkpoint (0 if absent).
	RecoveryPoint int64
	// LogStartOffset is from log-start-offset-checkpoint (0 if absent).
	LogStartOffset int64
	// CleanShutdown is true when .kafka_cleanshutdown was present: then
	// only segments whose indexes are broken are re-read.
	CleanShutdown bool
	Logger        *slog.Logger
	// ProducerIDExpiration is producer.id.expiration.ms; 0 means
	// DefaultProducerIDExpiration.
	ProducerIDExpiration time.Duration
	// Now defaults to time.Now; tests inject a clock for segment.ms.
	Now func() time.Time
	// OnStorageFailure hears of the log's first storage failure (a write
	// the file system refused), on a goroutine of its own; the Manager
	// takes the log's dir offline.
	OnStorageFailure func(error)
}

// FileLog is a partition log in Kafka's on-disk format. See doc.go for its
// locking.
type FileLog struct {
	mu             sync.RWMutex
	dir            string
	cfg            Config
	segments       []*segment // ascending base offsets; the last is active
	logStartOffset int64
	recoveryPoint  int64
	epochs         EpochCache
	closed         bool
	// failed is the storage failure that stopped the log (dir_failure.go).
	failed        error
	onFailure     func(error)
	highWatermark int64 // bounds retention; noHighWatermark until the replica layer sets it
	unflushed     int64 // records appended since the last flush
	lastFlush     time.Time
	buf           []byte // reused to join a multi-batch append into one write
	// producers is the producer table, updated by every append; snapshots
	// are the offsets of its snapshot files on disk, ascending.
	producers producerTable
	snapshots []int64
	// txnRebuild marks, while the log loads, the segments recovery read
	// again that hold transaction markers: the producer-state replay
	// rebuilds their transaction index.
	txnRebuild map[*segment]bool

	flushMu    sync.Mutex // serialises flushes so the recovery point only grows
	maintainMu sync.Mutex // one retention/compaction pass at a time
	bg         sync.WaitGroup

	logger *slog.Logger
	now    func() time.Time
}

var (
	_ Log                 = (*FileLog)(nil)
	_ HighWatermarkSetter = (*FileLog)(nil)
)

// OpenFileLog opens or creates the log in dir, recovering it as Kafka's
// LogLoader does.
func OpenFileLog(dir string, cfg Config, opts FileLogOptions) (*FileLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg = normalizeConfig(cfg)
	l := &FileLog{dir: dir, cfg: cfg, logger: opts.Logger, now: opts.Now, highWatermark: noHighWatermark, onFailure: opts.OnStorageFailure,
		producers: newProducerTable(opts.ProducerIDExpiration)}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.logger = l.logger.With("log", filepath.Base(dir))
	l.lastFlush = l.now()
	if err := l.load(opts); err != nil {
		for _, s := range l.segments {
			s.closeFiles()
		}
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	return l, nil
}

func normalizeConfig(cfg Config) Config {
	d := DefaultConfig()
	if cfg.SegmentBytes <= 0 {
		cfg.SegmentBytes = d.SegmentBytes
	}
	if cfg.SegmentMs <= 0 {
		cfg.SegmentMs = d.SegmentMs
	}
	if cfg.IndexIntervalBytes < 0 {
		cfg.IndexIntervalBytes = d.IndexIntervalBytes
	}
	if cfg.MaxIndexBytes < offsetIndexEntrySize*2 {
		cfg.MaxIndexBytes = d.MaxIndexBytes
	}
	if cfg.FlushMessages <= 0 {
		cfg.FlushMessages = d.FlushMessages
	}
	if cfg.FlushMs <= 0 {
		cfg.FlushMs = d.FlushMs
	}
	if cfg.CleanupPolicy == "" {
		cfg.CleanupPolicy = d.CleanupPolicy
	}
	return cfg
}

func (l *FileLog) Dir() string { return l.dir }

func (l *FileLog) active() *segment { return l.segments[len(l.segments)-1] }

func (l *FileLog) logEndOffset() int64 { return l.active().nextOffset }

func (l *FileLog) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.logStartOffset
}

func (l *FileLog) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.logEndOffset()
}

func (l *FileLog) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, s := range l.segments {
		n += s.size
	}
	return n
}

// NumSegments is the number of segments (Kafka's Log NumLogSegments gauge).
func (l *FileLog) NumSegments() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.segments)
}

// firstSegmentBase is what decides whether log-start-offset-checkpoint needs
// an entry for this log: Kafka writes one only for a log whose start is above
// its first segment's base.
func (l *FileLog) firstSegmentBase() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.segments[0].baseOffset
}

func (l *FileLog) RecoveryPoint() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.recoveryPoint
}

func (l *FileLog) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

func (l *FileLog) SetConfig(cfg Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg = normalizeConfig(cfg)
}

// SegmentBaseOffsets lists the segments' base offsets (tests, tools).
func (l *FileLog) SegmentBaseOffsets() []int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]int64, len(l.segments))
	for i, s := range l.segments {
		out[i] = s.baseOffset
	}
	return out
}

func (l *FileLog) LeaderEpochEntries() []EpochEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.Entries()
}

func (l *FileLog) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.EndOffsetFor(epoch, l.logEndOffset())
}

func (l *FileLog) AssignLeaderEpoch(epoch int32, startOffset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.failedErr(); err != nil {
		return err
	}
	if e, ok := l.epochs.Latest(); ok && e.Epoch >= epoch {
		return nil
	}
	if !l.epochs.Assign(epoch, startOffset) {
		return nil
	}
	return l.failLocked(l.writeEpochs())
}

// writeEpochs persists the epoch cache synchronously, as Kafka does for a
// new entry; truncations rewrite it the same way (simpler than 3.9's
// asynchronous write and never staler).
func (l *FileLog) writeEpochs() error {
	return WriteFileAtomic(filepath.Join(l.dir, epochCheckpointFile), encodeEpochCheckpoint(l.epochs.entries))
}

// segmentFor is the index of the segment holding offset: the last one whose
// base is <= offset (0 when offset is below every base).
func (l *FileLog) segmentFor(offset int64) int {
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].baseOffset > offset })
	if i == 0 {
		return 0
	}
	return i - 1
}

// roll makes a new active segment at base. The old one is trimmed now and
// flushed in the background; the flush then advances the recovery point.
func (l *FileLog) roll(base int64) error {
	old := l.active()
	if err := old.makeInactive(); err != nil {
		return err
	}
	// The table as of the new segment's start, as Kafka's roll takes it:
	// a later load replays from here instead of from the log's start.
	if err := l.takeSnapshotLocked(false); err != nil {
		return err
	}
	s, err := newSegment(l.dir, base, l.cfg, l.now())
	if err != nil {
		return err
	}
	l.segments = append(l.segments, s)
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		if err := l.flushUpTo(base); err != nil {
			l.logger.Warn("flush after roll", "err", l.fail(err))
		}
	}()
	return nil
}

// Flush fsyncs every segment holding offsets at or past the recovery
// point, then advances the recovery point to the log end offset seen before.
func (l *FileLog) Flush() error {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return ErrClosed
	}
	leo := l.logEndOffset()
	l.mu.RUnlock()
	return l.fail(l.flushUpTo(leo))
}

func (l *FileLog) flushUpTo(offset int64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return nil
	}
	var todo []*segment
	var werr error
	for _, s := range l.segments {
		if s.nextOffset > l.recoveryPoint && s.baseOffset < offset {
			todo = append(todo, s)
			// Under the lock: appends add index entries.
			werr = errors.Join(werr, s.writeIndexes())
		}
	}
	l.mu.RUnlock()
	if werr != nil {
		return werr
	}
	for _, s := range todo {
		if err := s.flush(); err != nil && !errors.Is(err, os.ErrClosed) {
			return err
		}
	}
	if err := syncDir(l.dir); err != nil {
		return err
	}
	l.mu.Lock()
	if offset > l.recoveryPoint && offset <= l.logEndOffset() {
		l.recoveryPoint = offset
	}
	l.unflushed = 0
	l.lastFlush = l.now()
	l.mu.Unlock()
	return nil
}

// flushIfDue applies flush.ms (called by the Manager).
func (l *FileLog) flushIfDue(now time.Time) error {
	l.mu.RLock()
	// In milliseconds: the default FlushMs (MaxInt64) overflows a Duration.
	due := l.unflushed > 0 && now.Sub(l.lastFlush).Milliseconds() >= l.cfg.FlushMs
	l.mu.RUnlock()
	if !due {
		return nil
	}
	return l.Flush()
}

func (l *FileLog) Close() error {
	l.bg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	var errs []error
	if err := l.active().makeInactive(); err != nil {
		errs = append(errs, err)
	}
	// A clean shutdown leaves the table at the log end, so the next start
	// reads it instead of replaying.
	if err := l.takeSnapshotLocked(true); err != nil {
		errs = append(errs, err)
	}
	for _, s := range l.segments {
		errs = append(errs, s.writeIndexes(), s.flush())
	}
	if len(errs) == 0 || errors.Join(errs...) == nil {
		l.recoveryPoint = l.logEndOffset()
	}
	for _, s := range l.segments {
		errs = append(errs, s.closeFiles())
	}
	l.closed = true
	return errors.Join(errs...)
}

func (l *FileLog) Delete() error {
	l.bg.Wait()
	l.mu.Lock()
	if !l.closed {
		for _, s := range l.segments {
			s.closeFiles()
		}
		l.closed = true
	}
	l.mu.Unlock()
	return os.RemoveAll(l.dir)
}
