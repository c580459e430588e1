package logstore

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/kbroker/kbroker/logstore/producerstate"
)

// MemLog is FileLog's in-memory twin, for logstore's own tests: the same
// segment rolling, retention, truncation, epoch and compaction rules, with
// batches held in memory. The conformance suite runs on both, and the
// differential tests check that FileLog does what this model does. Other
// packages' tests use a real FileLog through logstore/logtest.
type MemLog struct {
	mu             sync.RWMutex
	cfg            Config
	segments       []*memSegment
	logStartOffset int64
	recoveryPoint  int64
	epochs         EpochCache
	closed         bool
	highWatermark  int64
	now            func() time.Time
	// producers is rebuilt from the batches themselves after a
	// truncation: a MemLog keeps no snapshots.
	producers producerTable
}

type memSegment struct {
	baseOffset       int64
	nextOffset       int64
	batches          []Batch
	size             int64
	maxTimestamp     int64
	offsetOfMax      int64
	rollingTimestamp int64
	created          time.Time
	// aborted is the segment's transaction index.
	aborted []AbortedTxn
}

var (
	_ Log                 = (*MemLog)(nil)
	_ HighWatermarkSetter = (*MemLog)(nil)
)

// NewMemLog returns an empty log starting at offset 0.
func NewMemLog(cfg Config) *MemLog {
	l := &MemLog{cfg: normalizeConfig(cfg), now: time.Now, highWatermark: noHighWatermark, producers: newProducerTable(0)}
	l.segments = []*memSegment{l.newSegment(0)}
	return l
}

// SetClock replaces time.Now (tests of segment.ms).
func (l *MemLog) SetClock(now func() time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now = now
}

func (l *MemLog) newSegment(base int64) *memSegment {
	return &memSegment{baseOffset: base, nextOffset: base, maxTimestamp: -1, offsetOfMax: -1, rollingTimestamp: -1, created: l.now()}
}

func (l *MemLog) active() *memSegment { return l.segments[len(l.segments)-1] }

func (l *MemLog) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.logStartOffset
}

func (l *MemLog) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.active().nextOffset
}

func (l *MemLog) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, s := range l.segments {
		n += s.size
	}
	return n
}

func (l *MemLog) RecoveryPoint() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.recoveryPoint
}

func (l *MemLog) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

func (l *MemLog) SetConfig(cfg Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg = normalizeConfig(cfg)
}

// SegmentBaseOffsets lists the segments' base offsets.
func (l *MemLog) SegmentBaseOffsets() []int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]int64, len(l.segments))
	for i, s := range l.segments {
		out[i] = s.baseOffset
	}
	return out
}

func (l *MemLog) LeaderEpochEntries() []EpochEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.Entries()
}

func (l *MemLog) AssignLeaderEpoch(epoch int32, startOffset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.epochs.Latest(); ok && e.Epoch >= epoch {
		return nil
	}
	l.epochs.Assign(epoch, startOffset)
	return nil
}

func (l *MemLog) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.EndOffsetFor(epoch, l.active().nextOffset)
}

func (l *MemLog) AppendAsLeader(batches []Batch, leaderEpoch int32, logAppendTime int64) (AppendInfo, error) {
	return l.AppendAsLeaderFrom(batches, leaderEpoch, logAppendTime, OriginClient)
}

func (l *MemLog) AppendMarkerAsLeader(m Marker, leaderEpoch int32, timestamp int64) (AppendInfo, error) {
	b, err := markerBatch(m, timestamp)
	if err != nil {
		return AppendInfo{}, err
	}
	return l.AppendAsLeaderFrom([]Batch{b}, leaderEpoch, -1, OriginCoordinator)
}

func (l *MemLog) LastStableOffset(highWatermark int64) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return lastStableOffset(l.producers, l.logStartOffset, highWatermark)
}

func (l *MemLog) HasOngoingTransaction(producerID int64) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.producers.hasOngoingTransaction(producerID)
}

func (l *MemLog) AbortedTransactions(fetchOffset, upperBoundOffset int64) ([]AbortedTxn, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var out []AbortedTxn
	first := 0
	for i, s := range l.segments {
		if s.baseOffset <= fetchOffset {
			first = i
		}
	}
	for _, s := range l.segments[first:] {
		x := txnIndex{entries: s.aborted}
		var done bool
		if out, done = x.collect(out, fetchOffset, upperBoundOffset); done {
			break
		}
	}
	return out, nil
}

func (l *MemLog) AppendAsLeaderFrom(batches []Batch, leaderEpoch int32, logAppendTime int64, origin AppendOrigin) (AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return AppendInfo{}, ErrClosed
	}
	orig, dup, err := l.producers.checkAsLeader(batches, origin)
	if err != nil {
		return AppendInfo{}, err
	}
	if dup {
		return duplicateInfo(orig), nil
	}
	return l.appendLocked(batches, stampAsLeader(batches, l.active().nextOffset, leaderEpoch, logAppendTime))
}

func (l *MemLog) AppendAsFollower(batches []Batch) (AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return AppendInfo{}, ErrClosed
	}
	if err := checkFollowerOffsets(batches, l.active().nextOffset); err != nil {
		return AppendInfo{}, err
	}
	info := AppendInfo{LogAppendTime: -1}
	if len(batches) > 0 {
		info.FirstOffset = batches[0].Header.BaseOffset
	}
	return l.appendLocked(batches, info)
}

func (l *MemLog) appendLocked(batches []Batch, info AppendInfo) (AppendInfo, error) {
	if len(batches) == 0 {
		info.LastOffset, info.MaxTimestamp = info.FirstOffset-1, -1
		return info, nil
	}
	total, maxTs := 0, int64(-1)
	for i := range batches {
		if int64(len(batches[i].Raw)) > l.cfg.SegmentBytes {
			return AppendInfo{}, fmt.Errorf("%w: batch of %d bytes, segment.bytes %d", ErrRecordTooLarge, len(batches[i].Raw), l.cfg.SegmentBytes)
		}
		total += len(batches[i].Raw)
		maxTs = max(maxTs, batches[i].Header.MaxTimestamp)
	}
	last := batches[len(batches)-1].Header.LastOffset()
	s := l.active()
	if s.size > 0 {
		waited := l.now().Sub(s.created).Milliseconds()
		if s.rollingTimestamp >= 0 {
			waited = maxTs - s.rollingTimestamp
		}
		if s.size > l.cfg.SegmentBytes-int64(total) || waited > l.cfg.SegmentMs || last-s.baseOffset > 1<<31-1 {
			s = l.newSegment(info.FirstOffset)
			l.segments = append(l.segments, s)
		}
	}
	for i := range batches {
		b := Batch{Header: batches[i].Header, Raw: bytes.Clone(batches[i].Raw)}
		s.add(b)
		l.epochs.assignFromBatch(&b.Header)
		if c, ok := l.producers.updateBatch(&b); ok && c.Aborted {
			s.aborted = append(s.aborted, abortedTxn(c))
		}
	}
	info.LastOffset, info.MaxTimestamp, info.Bytes = last, maxTs, total
	return info, nil
}

func (s *memSegment) add(b Batch) {
	h := &b.Header
	if len(s.batches) == 0 && s.rollingTimestamp < 0 {
		s.rollingTimestamp = h.MaxTimestamp
	}
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMax = h.MaxTimestamp, h.LastOffset()
	}
	s.batches = append(s.batches, b)
	s.size += int64(len(b.Raw))
	s.nextOffset = h.LastOffset() + 1
}

func (l *MemLog) Read(startOffset, maxOffset int64, maxBytes int, minOneBatch bool) (ReadResult, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	leo := l.active().nextOffset
	if startOffset < l.logStartOffset || startOffset > leo {
		return nil, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, startOffset, l.logStartOffset, leo)
	}
	var out []byte
	if maxOffset <= startOffset {
		return memReadResult(out), nil
	}
	remaining := int64(maxBytes)
	for _, s := range l.segments {
		if s.nextOffset <= startOffset {
			continue
		}
		i := sort.Search(len(s.batches), func(i int) bool { return s.batches[i].Header.LastOffset() >= startOffset })
		for ; i < len(s.batches); i++ {
			b := s.batches[i]
			if b.Header.BaseOffset >= maxOffset {
				return memReadResult(out), nil
			}
			size := int64(len(b.Raw))
			if size > remaining && !(minOneBatch && len(out) == 0) {
				return memReadResult(out), nil
			}
			out = append(out, b.Raw...)
			remaining -= size
		}
	}
	return memReadResult(out), nil
}

// memReadResult holds the bytes of a MemLog read.
type memReadResult []byte

func (r memReadResult) Len() int               { return len(r) }
func (r memReadResult) Bytes() ([]byte, error) { return bytes.Clone(r), nil }
func (r memReadResult) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(r)
	return int64(n), err
}

func (l *MemLog) OffsetForTimestamp(ts int64) (int64, int64, bool, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, s := range l.segments {
		if s.maxTimestamp < ts {
			continue
		}
		for _, b := range s.batches {
			if b.Header.MaxTimestamp < ts || b.Header.LastOffset() < l.logStartOffset {
				continue
			}
			off, rts, ok, err := firstRecordAtOrAfter(b, ts, l.logStartOffset)
			if err != nil || ok {
				return off, rts, ok, err
			}
		}
	}
	return -1, -1, false, nil
}

func (l *MemLog) MaxTimestamp() (int64, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var best *memSegment
	for _, s := range l.segments {
		if len(s.batches) > 0 && s.maxTimestamp >= 0 && (best == nil || s.maxTimestamp > best.maxTimestamp) {
			best = s
		}
	}
	if best == nil {
		return -1, -1
	}
	ts, off := best.maxTimestamp, best.offsetOfMax
	for _, b := range best.batches {
		if b.Header.LastOffset() == off {
			if o, _, ok, err := firstRecordAtOrAfter(b, ts, l.logStartOffset); err == nil && ok {
				return ts, o
			}
		}
	}
	return ts, off
}

func (l *MemLog) infos() []segmentInfo {
	out := make([]segmentInfo, len(l.segments))
	for i, s := range l.segments {
		out[i] = segmentInfo{baseOffset: s.baseOffset, size: s.size, maxTimestamp: s.maxTimestamp}
	}
	return out
}

// SetHighWatermark bounds retention (see HighWatermarkSetter).
func (l *MemLog) SetHighWatermark(hw int64) {
	l.mu.Lock()
	l.highWatermark = hw
	l.producers.state.OnHighWatermark(hw)
	l.mu.Unlock()
}

func (l *MemLog) Maintain(now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.producers.expire(now)
	n := deletableSegments(l.infos(), l.cfg, now.UnixMilli(), l.logStartOffset, l.active().nextOffset, l.highWatermark)
	if n == len(l.segments) {
		l.segments = append(l.segments, l.newSegment(l.active().nextOffset))
	}
	if n > 0 {
		l.dropLeading(n)
	}
	if isCompacted(l.cfg) {
		return l.compact(now)
	}
	return nil
}

func (l *MemLog) dropLeading(n int) {
	l.segments = append(l.segments[:0:0], l.segments[n:]...)
	if b := l.segments[0].baseOffset; b > l.logStartOffset {
		l.logStartOffset = b
		l.epochs.TruncateFromStart(b)
	}
	l.producers.state.Evict(l.logStartOffset)
}

func (l *MemLog) compact(now time.Time) error {
	stable := cleaningStableOffset(l.producers, l.logStartOffset, l.highWatermark, l.active().nextOffset)
	n := compactableCount(l.infos(), l.cfg, now.UnixMilli(), stable)
	if n == 0 {
		return nil
	}
	var txns []AbortedTxn
	for _, s := range l.segments {
		x := txnIndex{entries: s.aborted}
		txns, _ = x.collect(txns, l.segments[0].baseOffset, l.segments[n].baseOffset)
	}
	aborted := newAbortedSet(txns)
	m := offsetMap{}
	for _, s := range l.segments[:n] {
		for _, b := range s.batches {
			if err := m.addBatch(b, aborted); err != nil {
				return err
			}
		}
	}
	for _, s := range l.segments[:n] {
		drop := now.UnixMilli()-s.maxTimestamp > l.cfg.DeleteRetentionMs
		var kept []Batch
		var size int64
		for _, b := range s.batches {
			nb, keep, err := filterBatch(b, m, aborted, drop)
			if err != nil {
				return err
			}
			if keep {
				kept = append(kept, nb)
				size += int64(len(nb.Raw))
			}
		}
		s.batches, s.size = kept, size
	}
	return nil
}

func (l *MemLog) DeleteRecordsBefore(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if offset > l.active().nextOffset {
		return fmt.Errorf("%w: %d beyond log end offset %d", ErrOffsetOutOfRange, offset, l.active().nextOffset)
	}
	if offset <= l.logStartOffset {
		return nil
	}
	l.logStartOffset = offset
	l.epochs.TruncateFromStart(offset)
	n := 0
	for n < len(l.segments)-1 && l.segments[n+1].baseOffset <= offset {
		n++
	}
	if n > 0 {
		l.dropLeading(n)
	}
	l.producers.state.Evict(l.logStartOffset)
	return nil
}

func (l *MemLog) TruncateTo(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if offset >= l.active().nextOffset {
		return nil
	}
	if offset <= l.logStartOffset || offset <= l.segments[0].baseOffset {
		l.truncateFully(offset)
		return nil
	}
	n := len(l.segments)
	for n > 1 && l.segments[n-1].baseOffset >= offset {
		n--
	}
	l.segments = l.segments[:n]
	old := l.active()
	s := l.newSegment(old.baseOffset)
	s.created = old.created
	for _, b := range old.batches {
		if b.Header.LastOffset() >= offset {
			break
		}
		s.add(b)
	}
	for _, a := range old.aborted {
		if a.LastOffset < offset {
			s.aborted = append(s.aborted, a)
		}
	}
	l.segments[n-1] = s
	l.recoveryPoint = min(l.recoveryPoint, s.nextOffset)
	l.epochs.TruncateFromEnd(s.nextOffset)
	if l.producers.state.Len() > 0 {
		l.producers.state.Clear()
		for _, seg := range l.segments {
			for i := range seg.batches {
				l.producers.updateBatch(&seg.batches[i])
			}
		}
		l.producers.expire(l.now())
		l.producers.state.Evict(l.logStartOffset)
		if l.highWatermark != noHighWatermark {
			l.producers.state.OnHighWatermark(l.highWatermark)
		}
	}
	return nil
}

func (l *MemLog) TruncateFullyAndStartAt(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.truncateFully(offset)
	return nil
}

func (l *MemLog) truncateFully(offset int64) {
	l.segments = []*memSegment{l.newSegment(offset)}
	l.logStartOffset, l.recoveryPoint = offset, offset
	l.epochs.entries = nil
	l.producers.state.Clear()
}

func (l *MemLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recoveryPoint = l.active().nextOffset
	return nil
}

func (l *MemLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return nil
}

func (l *MemLog) Delete() error { return l.Close() }

func (l *MemLog) ActiveProducers() []producerstate.Producer {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.producers.state.Sorted()
}
