package logstore

import (
	"errors"
	"fmt"
	"io"
	"time"
)

func (l *FileLog) segmentInfos() []segmentInfo {
	out := make([]segmentInfo, len(l.segments))
	for i, s := range l.segments {
		out[i] = segmentInfo{baseOffset: s.baseOffset, size: s.size, maxTimestamp: s.maxTimestamp}
	}
	return out
}

// SetHighWatermark bounds retention (see HighWatermarkSetter).
// Completed transactions whose marker it passed stop holding the last
// stable offset back.
func (l *FileLog) SetHighWatermark(hw int64) {
	l.mu.Lock()
	l.highWatermark = hw
	l.producers.state.OnHighWatermark(hw)
	l.mu.Unlock()
}

// Maintain applies retention, then compaction for compacted topics.
func (l *FileLog) Maintain(now time.Time) error {
	l.maintainMu.Lock()
	defer l.maintainMu.Unlock()
	if err := l.applyRetention(now); err != nil {
		return err
	}
	if isCompacted(l.Config()) {
		return l.compact(now)
	}
	return nil
}

func (l *FileLog) applyRetention(now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.producers.expire(now)
	n := deletableSegments(l.segmentInfos(), l.cfg, now.UnixMilli(), l.logStartOffset, l.logEndOffset(), l.highWatermark)
	if n == 0 {
		return nil
	}
	if n == len(l.segments) {
		if err := l.roll(l.logEndOffset()); err != nil {
			return err
		}
	}
	return l.deleteLeadingSegments(n)
}

// deleteLeadingSegments drops the first n segments and moves the log start
// offset up to the first remaining one.
func (l *FileLog) deleteLeadingSegments(n int) error {
	var errs []error
	for _, s := range l.segments[:n] {
		l.logger.Info("deleting segment", "base_offset", s.baseOffset, "size", s.size)
		errs = append(errs, s.deleteFiles())
	}
	l.segments = append(l.segments[:0:0], l.segments[n:]...)
	if b := l.segments[0].baseOffset; b > l.logStartOffset {
		l.logStartOffset = b
		if l.epochs.TruncateFromStart(b) {
			errs = append(errs, l.writeEpochs())
		}
	}
	errs = append(errs, l.afterLogStartMovedLocked())
	return errors.Join(errs...)
}

func (l *FileLog) DeleteRecordsBefore(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if offset > l.logEndOffset() {
		return fmt.Errorf("%w: %d beyond log end offset %d", ErrOffsetOutOfRange, offset, l.logEndOffset())
	}
	if offset <= l.logStartOffset {
		return nil
	}
	l.logStartOffset = offset
	var errs []error
	if l.epochs.TruncateFromStart(offset) {
		errs = append(errs, l.writeEpochs())
	}
	n := 0
	for n < len(l.segments)-1 && l.segments[n+1].baseOffset <= offset {
		n++
	}
	if n > 0 {
		errs = append(errs, l.deleteLeadingSegments(n))
	} else {
		errs = append(errs, l.afterLogStartMovedLocked())
	}
	return errors.Join(errs...)
}

func (l *FileLog) TruncateTo(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if offset >= l.logEndOffset() {
		return nil
	}
	if offset <= l.logStartOffset || offset <= l.segments[0].baseOffset {
		return l.truncateFullyLocked(offset)
	}
	n := len(l.segments)
	for n > 1 && l.segments[n-1].baseOffset >= offset {
		n--
	}
	var errs []error
	for _, s := range l.segments[n:] {
		errs = append(errs, s.deleteFiles())
	}
	l.segments = l.segments[:n]
	s := l.active()
	errs = append(errs, s.truncateTo(offset), s.makeActive())
	if err := errors.Join(errs...); err != nil {
		return err
	}
	leo := l.logEndOffset()
	l.recoveryPoint = min(l.recoveryPoint, leo)
	if l.epochs.TruncateFromEnd(leo) {
		if err := l.writeEpochs(); err != nil {
			return err
		}
	}
	return l.truncateProducersLocked()
}

func (l *FileLog) TruncateFullyAndStartAt(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return l.truncateFullyLocked(offset)
}

func (l *FileLog) truncateFullyLocked(offset int64) error {
	var errs []error
	for _, s := range l.segments {
		errs = append(errs, s.deleteFiles())
	}
	s, err := newSegment(l.dir, offset, l.cfg, l.now())
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	l.segments = []*segment{s}
	l.logStartOffset = offset
	l.recoveryPoint = offset
	l.epochs.entries = nil
	errs = append(errs, l.writeEpochs(), l.truncateFullyProducersLocked())
	return errors.Join(errs...)
}

func (l *FileLog) OffsetForTimestamp(ts int64) (int64, int64, bool, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return 0, 0, false, ErrClosed
	}
	for _, s := range l.segments {
		if s.maxTimestamp < ts || s.empty() {
			continue
		}
		// The time index only says where to start scanning; records are
		// filtered by the log start offset, as Kafka's findOffsetByTimestamp.
		from := max(s.timeIndex.lookup(ts), l.logStartOffset)
		off, rts, found, err := s.findTimestamp(ts, from, l.logStartOffset)
		if err != nil || found {
			return off, rts, found, err
		}
	}
	return -1, -1, false, nil
}

// findTimestamp scans batches from the one indexed for from on, for the
// first record at or after ts whose offset is >= minOffset.
func (s *segment) findTimestamp(ts, from, minOffset int64) (int64, int64, bool, error) {
	pos := int64(0)
	if from > s.baseOffset {
		pos = s.index.lookup(from)
	}
	sc := newHeaderScanner(s.log, s.size)
	defer sc.release()
	var buf []byte
	for {
		h, err := sc.header(pos)
		if err == io.EOF {
			return -1, -1, false, nil
		}
		if err != nil {
			return 0, 0, false, err
		}
		if h.MaxTimestamp >= ts && h.LastOffset() >= minOffset {
			var b Batch
			b, buf, err = readBatchAt(s.log, pos, s.size, buf)
			if err != nil {
				return 0, 0, false, err
			}
			if off, rts, ok, err := firstRecordAtOrAfter(b, ts, minOffset); err != nil || ok {
				return off, rts, ok, err
			}
		}
		pos += int64(h.Size())
	}
}

// firstRecordAtOrAfter decodes a batch and returns the first record with
// offset >= from and timestamp >= ts.
func firstRecordAtOrAfter(b Batch, ts, from int64) (int64, int64, bool, error) {
	h := &b.Header
	if h.IsControl() {
		return 0, 0, false, nil
	}
	recs, err := DecodeRecords(b)
	if err != nil {
		return 0, 0, false, err
	}
	for i := range recs {
		off := h.BaseOffset + int64(recs[i].OffsetDelta)
		rts := RecordTimestamp(h, &recs[i])
		if off >= from && rts >= ts {
			return off, rts, true, nil
		}
	}
	return 0, 0, false, nil
}

func (l *FileLog) MaxTimestamp() (int64, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var best *segment
	for _, s := range l.segments {
		if !s.empty() && s.maxTimestamp >= 0 && (best == nil || s.maxTimestamp > best.maxTimestamp) {
			best = s
		}
	}
	if best == nil {
		return -1, -1
	}
	// The segment remembers the batch; ListOffsets wants the record
	// (KIP-734), so find it inside the batch.
	ts, off := best.maxTimestamp, best.offsetOfMaxTimestamp
	pos, err := best.positionOf(off)
	if err != nil {
		return ts, off
	}
	b, _, err := readBatchAt(best.log, pos, best.size, nil)
	if err != nil {
		return ts, off
	}
	if o, _, ok, err := firstRecordAtOrAfter(b, ts, l.logStartOffset); err == nil && ok {
		return ts, o
	}
	return ts, off
}
