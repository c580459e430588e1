package logstore

import (
	"fmt"

	"github.com/kbroker/kbroker/logstore/producerstate"
)

func (l *FileLog) AppendAsLeader(batches []Batch, leaderEpoch int32, logAppendTime int64) (AppendInfo, error) {
	return l.AppendAsLeaderFrom(batches, leaderEpoch, logAppendTime, OriginClient)
}

func (l *FileLog) AppendMarkerAsLeader(m Marker, leaderEpoch int32, timestamp int64) (AppendInfo, error) {
	b, err := markerBatch(m, timestamp)
	if err != nil {
		return AppendInfo{}, err
	}
	return l.AppendAsLeaderFrom([]Batch{b}, leaderEpoch, -1, OriginCoordinator)
}

func (l *FileLog) AppendAsLeaderFrom(batches []Batch, leaderEpoch int32, logAppendTime int64, origin AppendOrigin) (AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.failedErr(); err != nil {
		return AppendInfo{}, err
	}
	if l.closed {
		return AppendInfo{}, ErrClosed
	}
	// Duplicate detection under the log's lock, so that no append of the
	// same producer slips between the check and the write.
	orig, dup, err := l.producers.checkAsLeader(batches, origin)
	if err != nil {
		return AppendInfo{}, err
	}
	if dup {
		return duplicateInfo(orig), nil
	}
	return l.appendLocked(batches, stampAsLeader(batches, l.logEndOffset(), leaderEpoch, logAppendTime))
}

func (l *FileLog) AppendAsFollower(batches []Batch) (AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.failedErr(); err != nil {
		return AppendInfo{}, err
	}
	if l.closed {
		return AppendInfo{}, ErrClosed
	}
	if err := checkFollowerOffsets(batches, l.logEndOffset()); err != nil {
		return AppendInfo{}, err
	}
	info := AppendInfo{LogAppendTime: -1}
	if len(batches) > 0 {
		info.FirstOffset = batches[0].Header.BaseOffset
	}
	return l.appendLocked(batches, info)
}

// checkFollowerOffsets requires the batches to continue the log exactly and
// to have increasing offsets (compaction may leave gaps inside the leader's
// log, never overlaps).
func checkFollowerOffsets(batches []Batch, leo int64) error {
	if len(batches) == 0 {
		return nil
	}
	if b := batches[0].Header.BaseOffset; b != leo {
		return fmt.Errorf("%w: first batch at %d, log end offset %d", ErrUnexpectedAppendOffset, b, leo)
	}
	next := leo
	for i := range batches {
		h := &batches[i].Header
		if h.BaseOffset < next {
			return fmt.Errorf("%w: batch at %d overlaps offset %d", ErrUnexpectedAppendOffset, h.BaseOffset, next-1)
		}
		next = h.LastOffset() + 1
	}
	return nil
}

// appendLocked writes batches whose offsets are final. info.FirstOffset is
// set by the caller.
func (l *FileLog) appendLocked(batches []Batch, info AppendInfo) (AppendInfo, error) {
	if len(batches) == 0 {
		info.LastOffset = info.FirstOffset - 1
		info.MaxTimestamp = -1
		return info, nil
	}
	total := 0
	maxTs := int64(-1)
	var records int64
	for i := range batches {
		h := &batches[i].Header
		if int64(len(batches[i].Raw)) > l.cfg.SegmentBytes {
			return AppendInfo{}, fmt.Errorf("%w: batch of %d bytes, segment.bytes %d", ErrRecordTooLarge, len(batches[i].Raw), l.cfg.SegmentBytes)
		}
		total += len(batches[i].Raw)
		maxTs = max(maxTs, h.MaxTimestamp)
		records += int64(h.NumRecords)
	}
	last := batches[len(batches)-1].Header.LastOffset()
	if l.shouldRoll(int64(total), maxTs, last) {
		if err := l.roll(info.FirstOffset); err != nil {
			return AppendInfo{}, l.failLocked(err)
		}
	}
	data := batches[0].Raw
	if len(batches) > 1 {
		l.buf = l.buf[:0]
		for i := range batches {
			l.buf = append(l.buf, batches[i].Raw...)
		}
		data = l.buf
	}
	seg := l.active()
	if err := seg.appendBatches(data, batches, int64(l.cfg.IndexIntervalBytes)); err != nil {
		// A short write leaves a torn tail; cut it so the log stays valid.
		_ = seg.log.Truncate(seg.size)
		return AppendInfo{}, l.failLocked(err)
	}
	if len(l.buf) > 1<<20 {
		l.buf = nil // do not pin a huge buffer after one large append
	}
	// The marker's segment indexes the transactions it aborted. A failed
	// index write leaves the batch appended (offsets must keep growing,
	// as in Kafka's UnifiedLog.append); recovery rebuilds the index.
	// Either failing also takes the dir offline (the batch stays, as
	// above): the next append is refused.
	if err := l.producers.update(batches, func(c producerstate.CompletedTxn) error { return seg.txn.append(abortedTxn(c)) }); err != nil {
		l.logger.Warn("write transaction index", "segment", seg.baseOffset, "err", l.failLocked(err))
	}
	if l.maybeAssignEpochs(batches) {
		if err := l.writeEpochs(); err != nil {
			l.logger.Warn("write leader-epoch-checkpoint", "err", l.failLocked(err))
		}
	}
	info.LastOffset = last
	info.MaxTimestamp = maxTs
	info.Bytes = total
	l.unflushed += records
	if l.unflushed >= l.cfg.FlushMessages {
		l.mu.Unlock()
		err := l.Flush()
		l.mu.Lock()
		if err != nil {
			return info, err
		}
	}
	return info, nil
}

// maybeAssignEpochs adds an epoch-cache entry for each batch whose leader
// epoch is newer than the latest one.
func (l *FileLog) maybeAssignEpochs(batches []Batch) bool {
	changed := false
	for i := range batches {
		changed = l.epochs.assignFromBatch(&batches[i].Header) || changed
	}
	return changed
}

// shouldRoll follows Kafka's LogSegment.shouldRoll: the batches would not
// fit segment.bytes, segment.ms passed since the segment's first batch
// timestamp (measured against the incoming max timestamp, or against the
// creation time when timestamps are absent), an index is full, or an offset
// would not fit the 32-bit relative offset.
func (l *FileLog) shouldRoll(size, maxTs, lastOffset int64) bool {
	s := l.active()
	if s.empty() {
		return false
	}
	var waited int64
	if s.rollingTimestamp >= 0 {
		waited = maxTs - s.rollingTimestamp
	} else {
		waited = l.now().Sub(s.created).Milliseconds()
	}
	return s.size > l.cfg.SegmentBytes-size ||
		waited > l.cfg.SegmentMs ||
		s.index.full() || s.timeIndex.full() ||
		lastOffset-s.baseOffset > 1<<31-1
}

// stampAsLeader is the leader's part of an append, shared by FileLog and the
// test model MemLog: offsets from next on, the leader epoch, and
// LogAppendTime when logAppendTime >= 0. It returns the append's info so far.
func stampAsLeader(batches []Batch, next int64, leaderEpoch int32, logAppendTime int64) AppendInfo {
	info := AppendInfo{FirstOffset: next, LogAppendTime: -1}
	for i := range batches {
		b := &batches[i]
		b.setBaseOffset(next)
		b.setLeaderEpoch(leaderEpoch)
		if logAppendTime >= 0 {
			b.setLogAppendTime(logAppendTime)
		}
		next = b.Header.LastOffset() + 1
	}
	if logAppendTime >= 0 {
		info.LogAppendTime = logAppendTime
	}
	return info
}
