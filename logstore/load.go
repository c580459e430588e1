package logstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// load is Kafka's LogLoader (LogLoader.java): clean up temporary files,
// open segments, recover what may be torn, then fix up the log start
// offset, the epoch cache and the recovery point.
func (l *FileLog) load(opts FileLogOptions) error {
	bases, err := l.cleanDir()
	if err != nil {
		return err
	}
	interval := int64(l.cfg.IndexIntervalBytes)
	now := l.now()
	missingIndex := map[int64]bool{}
	for _, base := range bases {
		for _, suffix := range []string{".index", ".timeindex"} {
			if _, err := os.Stat(segmentName(l.dir, base, suffix)); errors.Is(err, fs.ErrNotExist) {
				missingIndex[base] = true
			}
		}
		s, err := openSegmentFiles(l.dir, base, l.cfg, now)
		if err != nil {
			return err
		}
		l.segments = append(l.segments, s)
	}
	epochs, err := readEpochCheckpoint(filepath.Join(l.dir, epochCheckpointFile))
	if err != nil {
		l.logger.Warn("unreadable leader-epoch-checkpoint, rebuilding", "err", err)
		epochs = nil
	}
	l.epochs.entries = epochs
	// markers: the segment being recovered holds a transaction marker,
	// so its transaction index (reset by the recovery) needs rebuilding.
	markers := false
	onBatch := func(h *BatchHeader) {
		l.epochs.assignFromBatch(h)
		markers = markers || h.IsControl()
	}
	for i := 0; i < len(l.segments); i++ {
		s := l.segments[i]
		// A segment may hold unflushed data when it holds the recovery
		// point or anything after it.
		unflushed := i == len(l.segments)-1 || l.segments[i+1].baseOffset > opts.RecoveryPoint
		needRecover := !opts.CleanShutdown && unflushed || missingIndex[s.baseOffset]
		if !needRecover {
			ok, err := s.load(interval)
			if err != nil {
				return err
			}
			if !ok {
				l.logger.Info("rebuilding index", "segment", s.baseOffset)
				needRecover = true
			}
		}
		if !needRecover {
			continue
		}
		markers = false
		truncated, err := s.recover(interval, onBatch)
		if err != nil {
			return err
		}
		// Only an abort marker puts an entry in a segment's transaction
		// index: without markers it stays empty, and the replay that
		// rebuilds it (a second walk of the segment) is skipped.
		if markers {
			if l.txnRebuild == nil {
				l.txnRebuild = map[*segment]bool{}
			}
			l.txnRebuild[s] = true
		}
		if truncated {
			l.logger.Warn("truncated torn segment tail", "segment", s.baseOffset, "next_offset", s.nextOffset)
			for _, later := range l.segments[i+1:] {
				if err := later.deleteFiles(); err != nil {
					return err
				}
			}
			l.segments = l.segments[:i+1]
		}
	}
	lso := max(opts.LogStartOffset, 0)
	if len(l.segments) == 0 {
		s, err := newSegment(l.dir, lso, l.cfg, now)
		if err != nil {
			return err
		}
		l.segments = []*segment{s}
	}
	if l.logEndOffset() < lso {
		// Everything below the checkpointed log start is gone: start over
		// there (testLogEndLessThanStartAfterReopen).
		for _, s := range l.segments {
			if err := s.deleteFiles(); err != nil {
				return err
			}
		}
		s, err := newSegment(l.dir, lso, l.cfg, now)
		if err != nil {
			return err
		}
		l.segments = []*segment{s}
	}
	l.logStartOffset = max(lso, l.segments[0].baseOffset)
	// Recovered segments rebuilt their indexes in memory; write them now
	// rather than at the first flush.
	for _, s := range l.segments {
		if err := s.writeIndexes(); err != nil {
			return err
		}
	}
	if err := l.active().makeActive(); err != nil {
		return err
	}
	l.epochs.TruncateFromEnd(l.logEndOffset())
	l.epochs.TruncateFromStart(l.logStartOffset)
	if len(l.epochs.entries) > 0 || len(epochs) > 0 {
		if err := l.writeEpochs(); err != nil {
			return err
		}
	}
	if opts.CleanShutdown {
		l.recoveryPoint = l.logEndOffset()
	} else {
		l.recoveryPoint = min(max(opts.RecoveryPoint, 0), l.logEndOffset())
	}
	return l.loadProducers()
}

// cleanDir deletes temporary and orphan files, completes interrupted
// compaction swaps, and returns the segment base offsets in order.
func (l *FileLog) cleanDir() ([]int64, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	remove := func(name string) error {
		err := os.Remove(filepath.Join(l.dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	logs := map[int64]bool{}
	var indexes []string
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".deleted"), strings.HasSuffix(name, ".cleaned"),
			strings.HasSuffix(name, ".tmp"):
			if err := remove(name); err != nil {
				return nil, err
			}
		case strings.HasSuffix(name, ".log.swap"):
			// The cleaned segment was complete before the crash: finish the
			// swap; its indexes are rebuilt from it.
			base := strings.TrimSuffix(name, ".log.swap")
			if err := os.Rename(filepath.Join(l.dir, name), filepath.Join(l.dir, base+".log")); err != nil {
				return nil, err
			}
			if err := errors.Join(remove(base+".index"), remove(base+".timeindex")); err != nil {
				return nil, err
			}
			if b, ok := parseBase(base); ok {
				logs[b] = true
			}
		case strings.HasSuffix(name, ".swap"):
			if err := remove(name); err != nil {
				return nil, err
			}
		case strings.HasSuffix(name, ".log"):
			if b, ok := parseBase(strings.TrimSuffix(name, ".log")); ok {
				logs[b] = true
			}
		case strings.HasSuffix(name, ".index"), strings.HasSuffix(name, ".timeindex"), strings.HasSuffix(name, txnIndexSuffix):
			indexes = append(indexes, name)
		}
	}
	for _, name := range indexes {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".index"), ".timeindex"), txnIndexSuffix)
		if b, ok := parseBase(base); !ok || !logs[b] {
			if err := remove(name); err != nil {
				return nil, err
			}
		}
	}
	bases := make([]int64, 0, len(logs))
	for b := range logs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, nil
}

func parseBase(s string) (int64, bool) {
	if len(s) != 20 {
		return 0, false
	}
	b, err := strconv.ParseInt(s, 10, 64)
	return b, err == nil && b >= 0
}
