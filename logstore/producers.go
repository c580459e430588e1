package logstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kbroker/kbroker/logstore/producerstate"
)

// DefaultProducerIDExpiration is producer.id.expiration.ms's default (one
// day): producers idle longer are forgotten.
const DefaultProducerIDExpiration = 24 * time.Hour

// snapshotSuffix names producer-state snapshot files, `<20-digit
// offset>.snapshot`: the table as of (excluding) that offset.
const snapshotSuffix = ".snapshot"

// producerTable is a log's producer state: Kafka keeps it in the log
// (UnifiedLog's ProducerStateManager), and so do we, so that every append,
// a leader's or a follower's, updates it under the log's lock and a
// follower that becomes leader already knows every producer.
type producerTable struct {
	state      *producerstate.State
	expiration time.Duration
}

func newProducerTable(expiration time.Duration) producerTable {
	if expiration <= 0 {
		expiration = DefaultProducerIDExpiration
	}
	return producerTable{state: producerstate.New(), expiration: expiration}
}

func producerBatch(h *BatchHeader) producerstate.Batch {
	return producerstate.Batch{
		ProducerID:      h.ProducerID,
		ProducerEpoch:   h.ProducerEpoch,
		BaseSequence:    h.BaseSequence,
		LastOffsetDelta: h.LastOffsetDelta,
		MaxTimestamp:    h.MaxTimestamp,
		Transactional:   h.IsTransactional(),
		Control:         h.IsControl(),
	}
}

// errSeveralProducerBatches refuses a leader append of more than one batch
// when one of them carries a producer id: the checks below judge each
// batch against the table as it was before the append. Produce requests
// carry one batch per partition, and the broker's own multi-batch writes
// have no producer id.
var errSeveralProducerBatches = fmt.Errorf("%w: several batches with a producer id in one append", ErrInvalidRecord)

// checkAsLeader validates a leader's batches from origin against the
// table before they are appended (Kafka's
// UnifiedLog.analyzeAndValidateProducerState). A duplicate is answered with
// the original batch's offsets and must not be appended again.
// The original comes back by value: a pointer into the verdict would move
// it to the heap on every append.
func (t *producerTable) checkAsLeader(batches []Batch, origin AppendOrigin) (original producerstate.BatchMetadata, dup bool, err error) {
	for i := range batches {
		h := &batches[i].Header
		if h.ProducerID < 0 {
			continue
		}
		if len(batches) > 1 {
			return original, false, errSeveralProducerBatches
		}
		pb, ok := producerBatchOf(&batches[i])
		if !ok {
			return original, false, fmt.Errorf("%w: control batch without a transaction marker", ErrInvalidRecord)
		}
		v, err := t.state.CheckFrom(pb, origin)
		if err != nil {
			return original, false, err
		}
		if v.Duplicate {
			return v.Original, true, nil
		}
	}
	return original, false, nil
}

// update records appended batches, whose offsets are final, and calls
// aborted for each transaction one of them aborted, in offset order.
func (t *producerTable) update(batches []Batch, aborted func(producerstate.CompletedTxn) error) error {
	var errs []error
	for i := range batches {
		c, ok := t.updateBatch(&batches[i])
		if ok && c.Aborted && aborted != nil {
			errs = append(errs, aborted(c))
		}
	}
	return errors.Join(errs...)
}

// updateBatch records one batch; a control batch without a transaction
// marker changes nothing (Kafka's ProducerAppendInfo.append).
func (t *producerTable) updateBatch(b *Batch) (producerstate.CompletedTxn, bool) {
	h := &b.Header
	if h.ProducerID < 0 {
		return producerstate.CompletedTxn{}, false
	}
	pb, ok := producerBatchOf(b)
	if !ok {
		return producerstate.CompletedTxn{}, false
	}
	return t.state.Update(pb, h.BaseOffset, h.LastOffset())
}

// abortedTxn is the transaction-index entry of an aborted transaction.
func abortedTxn(c producerstate.CompletedTxn) AbortedTxn {
	return AbortedTxn{ProducerID: c.ProducerID, FirstOffset: c.FirstOffset, LastOffset: c.LastOffset, LastStableOffset: c.LastStableOffset}
}

// expire applies producer.id.expiration.ms at now.
func (t *producerTable) expire(now time.Time) {
	t.state.Expire(now.Add(-t.expiration).UnixMilli())
}

// duplicateInfo answers a retried batch with where it went the first time.
func duplicateInfo(m producerstate.BatchMetadata) AppendInfo {
	return AppendInfo{Duplicate: true, FirstOffset: m.FirstOffset, LastOffset: m.LastOffset, LogAppendTime: -1, MaxTimestamp: m.Timestamp}
}

func (l *FileLog) ActiveProducers() []producerstate.Producer {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.producers.state.Sorted()
}

// ProducerSnapshotOffsets lists the offsets of the snapshot files on disk,
// ascending (tests, tools).
func (l *FileLog) ProducerSnapshotOffsets() []int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Clone(l.snapshots)
}

// takeSnapshotLocked writes the table as of the log end offset, as Kafka's
// takeSnapshot does at a segment roll and at close, unless a snapshot
// there (or later) exists. sync also fsyncs it: at close, where nothing
// flushes after us. A snapshot lost to a machine crash is only an older
// starting point for the replay at load. The caller holds mu.
func (l *FileLog) takeSnapshotLocked(sync bool) error {
	off := l.logEndOffset()
	last := l.logStartOffset
	if n := len(l.snapshots); n > 0 {
		last = max(last, l.snapshots[n-1])
	}
	if off <= last {
		return nil
	}
	data := producerstate.EncodeSnapshot(l.producers.state.Sorted())
	path := segmentName(l.dir, off, snapshotSuffix)
	if err := writeSnapshotFile(path, data, sync); err != nil {
		return fmt.Errorf("write producer snapshot %s: %w", filepath.Base(path), err)
	}
	l.snapshots = append(l.snapshots, off)
	return nil
}

// writeSnapshotFile writes through a temporary file, so that a reader
// never sees half a snapshot under the final name (load deletes .tmp
// files).
func writeSnapshotFile(path string, data []byte, sync bool) error {
	if sync {
		return WriteFileAtomic(path, data)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (l *FileLog) removeSnapshot(off int64) error {
	err := os.Remove(segmentName(l.dir, off, snapshotSuffix))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return err
}

// deleteSnapshotsWhere removes the snapshots whose offset matches drop.
func (l *FileLog) deleteSnapshotsWhere(drop func(off int64) bool) error {
	var errs []error
	kept := l.snapshots[:0]
	for _, off := range l.snapshots {
		if drop(off) {
			errs = append(errs, l.removeSnapshot(off))
		} else {
			kept = append(kept, off)
		}
	}
	l.snapshots = kept
	return errors.Join(errs...)
}

// afterLogStartMovedLocked follows a log start offset that moved up
// (retention, DeleteRecords): producers whose every batch is now gone are
// forgotten, so that their next batch is accepted with any sequence
// instead of being judged against state the log no longer backs (Kafka's
// evictUnretainedProducers), and snapshots of deleted segments go with
// them. The caller holds mu.
func (l *FileLog) afterLogStartMovedLocked() error {
	l.producers.state.Evict(l.logStartOffset)
	first := l.segments[0].baseOffset
	return l.deleteSnapshotsWhere(func(off int64) bool { return off < first })
}

// listSnapshots finds the snapshot files in the log's directory.
func (l *FileLog) listSnapshots() ([]int64, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, e := range ents {
		if b, ok := parseBase(strings.TrimSuffix(e.Name(), snapshotSuffix)); ok && strings.HasSuffix(e.Name(), snapshotSuffix) {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out, nil
}

// loadProducers builds the table at open: from the latest snapshot at or
// below the log end offset, then the batches after it (Kafka's
// rebuildProducerState). Snapshots past the log end (a crash cut the
// tail) or below the log start are deleted first. Afterwards a snapshot at
// the log end is taken, so the next start replays nothing.
func (l *FileLog) loadProducers() error {
	offs, err := l.listSnapshots()
	if err != nil {
		return err
	}
	l.snapshots = offs
	leo := l.logEndOffset()
	if err := l.deleteSnapshotsWhere(func(off int64) bool { return off > leo || off < l.logStartOffset }); err != nil {
		return err
	}
	err = l.rebuildTxnIndexesLocked()
	l.txnRebuild = nil
	if err != nil {
		return err
	}
	if err := l.reloadProducersLocked(leo); err != nil {
		return err
	}
	return l.takeSnapshotLocked(false)
}

// rebuildTxnIndexesLocked indexes again the aborted transactions of the
// segments recovery read (Kafka rebuilds a segment's transaction index as
// it recovers it, LogSegment.recover). That needs the transactions ongoing
// at the first of them, so a scratch table is loaded from the latest
// readable snapshot at or below its base (the log start when there is
// none) and replayed to the log end; replaySegment appends to the
// recovered segments' indexes as markers complete transactions. The
// log's own table is loaded afterwards, as before.
func (l *FileLog) rebuildTxnIndexesLocked() error {
	var first *segment
	for _, s := range l.segments {
		if l.txnRebuild[s] {
			first = s
			break
		}
	}
	if first == nil {
		return nil
	}
	saved := l.producers
	l.producers = newProducerTable(saved.expiration)
	defer func() { l.producers = saved }()
	from := l.logStartOffset
	for i := len(l.snapshots) - 1; i >= 0; i-- {
		off := l.snapshots[i]
		if off > first.baseOffset {
			continue
		}
		entries, err := l.readSnapshot(off)
		if err != nil {
			continue // an older one; the table's own load deals with this one
		}
		for _, p := range entries {
			l.producers.state.Load(p)
		}
		from = max(off, l.logStartOffset)
		break
	}
	return l.replayProducersLocked(from, l.logEndOffset())
}

// reloadProducersLocked rebuilds the table as of offset, which is the log
// end offset: the latest readable snapshot at or below it, then a replay
// of the batch headers from there. With no snapshot the replay starts at
// the first segment holding a batch younger than producer.id.expiration.ms,
// since a producer last seen before that would be expired anyway. A
// corrupt snapshot is deleted and the one before it tried, as Kafka does.
func (l *FileLog) reloadProducersLocked(offset int64) error {
	t := &l.producers
	t.state.Clear()
	now := l.now()
	from, snapshot := int64(-1), int64(-1)
	for len(l.snapshots) > 0 && from < 0 {
		off := l.snapshots[len(l.snapshots)-1]
		if off > offset {
			if err := l.removeSnapshot(off); err != nil {
				return err
			}
			l.snapshots = l.snapshots[:len(l.snapshots)-1]
			continue
		}
		entries, err := l.readSnapshot(off)
		if err != nil {
			if !errors.Is(err, producerstate.ErrCorruptSnapshot) && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			l.logger.Warn("unusable producer snapshot, trying the previous one", "offset", off, "err", err)
			if err := l.removeSnapshot(off); err != nil {
				return err
			}
			l.snapshots = l.snapshots[:len(l.snapshots)-1]
			continue
		}
		for _, p := range entries {
			t.state.Load(p)
		}
		from, snapshot = off, off
	}
	if from < 0 {
		from = l.logStartOffset
		cutoff := now.Add(-t.expiration).UnixMilli()
		for _, s := range l.segments {
			if s.maxTimestamp >= cutoff || s.nextOffset >= offset {
				from = max(from, s.baseOffset)
				break
			}
		}
	}
	if err := l.replayProducersLocked(from, offset); err != nil {
		return err
	}
	t.expire(now)
	t.state.Evict(l.logStartOffset)
	if l.highWatermark != noHighWatermark {
		t.state.OnHighWatermark(l.highWatermark)
	}
	if offset > from || snapshot >= 0 {
		l.logger.Info("loaded producer state", "snapshot", snapshot, "replayed_from", from, "replayed_to", offset, "producers", t.state.Len())
	}
	return nil
}

// replayProducersLocked feeds the headers of the batches in [from, to) to
// the table; only headers are read, never records.
func (l *FileLog) replayProducersLocked(from, to int64) error {
	for _, s := range l.segments {
		if s.nextOffset <= from || s.baseOffset >= to || s.empty() {
			continue
		}
		pos := int64(0)
		if from > s.baseOffset {
			pos = s.index.lookup(from)
		}
		if err := l.replaySegment(s, pos, from, to); err != nil {
			return err
		}
	}
	return nil
}

// replaySegment feeds the batches of s in [from, to) to the table: their
// headers, and the record of each control batch (its marker). A segment
// being recovered gets its aborted transactions indexed again.
func (l *FileLog) replaySegment(s *segment, pos, from, to int64) error {
	sc := newHeaderScanner(s.log, s.size)
	defer sc.release()
	var buf []byte
	for {
		h, err := sc.header(pos)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("replay producer state from segment %d: %w", s.baseOffset, err)
		}
		if h.BaseOffset >= to {
			return nil
		}
		if h.LastOffset() >= from && h.ProducerID >= 0 {
			b := Batch{Header: h}
			if h.IsControl() {
				if b, buf, err = readBatchAt(s.log, pos, s.size, buf); err != nil {
					return fmt.Errorf("replay producer state from segment %d: %w", s.baseOffset, err)
				}
			}
			if c, ok := l.producers.updateBatch(&b); ok && c.Aborted && l.txnRebuild[s] {
				if err := s.txn.append(abortedTxn(c)); err != nil {
					return err
				}
			}
		}
		pos += int64(h.Size())
	}
}

// truncateProducersLocked follows TruncateTo: snapshots past the new end go
// and the table is rebuilt as of it. An empty table stays empty, since a
// truncation only removes batches (Kafka skips the reload then too).
func (l *FileLog) truncateProducersLocked() error {
	leo := l.logEndOffset()
	if err := l.deleteSnapshotsWhere(func(off int64) bool { return off > leo }); err != nil {
		return err
	}
	if l.producers.state.Len() == 0 {
		return nil
	}
	return l.reloadProducersLocked(leo)
}

// truncateFullyProducersLocked follows TruncateFullyAndStartAt: no batch
// is left, so neither is any producer or snapshot.
func (l *FileLog) truncateFullyProducersLocked() error {
	l.producers.state.Clear()
	return l.deleteSnapshotsWhere(func(int64) bool { return true })
}

// hasOngoingTransaction reports whether the producer's last batch opened
// or continued a transaction no marker has ended yet.
func (t *producerTable) hasOngoingTransaction(producerID int64) bool {
	p := t.state.Producer(producerID)
	return p != nil && p.CurrentTxnFirstOffset != producerstate.NoOffset
}

// readSnapshot reads and decodes the snapshot file at off.
func (l *FileLog) readSnapshot(off int64) ([]producerstate.Producer, error) {
	data, err := os.ReadFile(segmentName(l.dir, off, snapshotSuffix))
	if err != nil {
		return nil, err
	}
	return producerstate.DecodeSnapshot(data)
}
