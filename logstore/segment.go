package logstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// segmentCloseDelay keeps a deleted segment's files open a while so that
// ReadResults handed out before the deletion can still be written
// (Kafka's log.segment.delete.delay.ms).
var segmentCloseDelay = 60 * time.Second

// segment is one `<base>.log` with its `.index` and `.timeindex`. Only the
// last segment of a log (the active one) changes; the log's lock guards
// every field.
type segment struct {
	dir        string
	baseOffset int64
	log        *os.File
	index      offsetIndex
	timeIndex  timeIndex
	// txn is the aborted-transaction index (.txnindex), in memory and,
	// once it has an entry, on disk.
	txn txnIndex

	size       int64 // bytes of the .log that hold whole batches
	nextOffset int64 // one past the last offset in the segment

	bytesSinceIndex int64
	// maxTimestamp and offsetOfMaxTimestamp track the largest batch
	// maxTimestamp and the last offset of its batch (the time index's
	// "shallow" offset).
	maxTimestamp         int64
	offsetOfMaxTimestamp int64
	// rollingTimestamp is the first batch's maxTimestamp, what segment.ms
	// is measured from (Kafka's rollingBasedTimestamp); -1 when unknown.
	rollingTimestamp int64
	created          time.Time
}

func segmentName(dir string, base int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, suffix))
}

func (s *segment) empty() bool { return s.size == 0 }

// openSegmentFiles opens (creating if needed) the three files of a segment.
func openSegmentFiles(dir string, base int64, cfg Config, now time.Time) (*segment, error) {
	return openSegmentFilesWithSuffix(dir, base, cfg, now, "")
}

// openSegmentFilesWithSuffix opens `<base>.log<suffix>` and its indexes
// with the same suffix (the cleaner writes `.cleaned` files).
func openSegmentFilesWithSuffix(dir string, base int64, cfg Config, now time.Time, suffix string) (*segment, error) {
	lf, err := os.OpenFile(segmentName(dir, base, ".log"+suffix), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	xf, err := os.OpenFile(segmentName(dir, base, ".index"+suffix), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		lf.Close()
		return nil, err
	}
	tf, err := os.OpenFile(segmentName(dir, base, ".timeindex"+suffix), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		lf.Close()
		xf.Close()
		return nil, err
	}
	s := &segment{
		dir:                  dir,
		baseOffset:           base,
		log:                  lf,
		index:                offsetIndex{f: xf, baseOffset: base, maxEntries: indexEntries(cfg.MaxIndexBytes, offsetIndexEntrySize)},
		timeIndex:            timeIndex{f: tf, baseOffset: base, maxEntries: indexEntries(cfg.MaxIndexBytes, timeIndexEntrySize)},
		txn:                  newTxnIndex(dir, base, suffix),
		nextOffset:           base,
		maxTimestamp:         -1,
		offsetOfMaxTimestamp: -1,
		rollingTimestamp:     -1,
		created:              now,
	}
	return s, nil
}

// newSegment creates an empty active segment.
func newSegment(dir string, base int64, cfg Config, now time.Time) (*segment, error) {
	s, err := openSegmentFiles(dir, base, cfg, now)
	if err != nil {
		return nil, err
	}
	if err := s.log.Truncate(0); err != nil {
		s.closeFiles()
		return nil, err
	}
	if err := errors.Join(s.resetIndexes(), s.txn.reset()); err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, s.makeActive()
}

// makeActive preallocates the indexes so appends only write entries.
func (s *segment) makeActive() error {
	if err := s.index.preallocate(); err != nil {
		return err
	}
	return s.timeIndex.preallocate()
}

// makeInactive closes the time index with the segment's max timestamp and
// trims both indexes to their entries, as Kafka does on roll and close.
func (s *segment) makeInactive() error {
	if err := s.timeIndex.maybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp, true); err != nil {
		return err
	}
	if err := s.index.trim(); err != nil {
		return err
	}
	return s.timeIndex.trim()
}

func (s *segment) resetIndexes() error {
	s.index.rel, s.index.pos, s.index.written = nil, nil, 0
	s.timeIndex.ts, s.timeIndex.rel, s.timeIndex.written = nil, nil, 0
	s.bytesSinceIndex = 0
	if err := s.index.f.Truncate(0); err != nil {
		return err
	}
	return s.timeIndex.f.Truncate(0)
}

// appendBatches writes data (the raw bytes of batches, back to back) at the
// end of the log with one write, then indexes the batches.
func (s *segment) appendBatches(data []byte, batches []Batch, indexInterval int64) error {
	if _, err := s.log.WriteAt(data, s.size); err != nil {
		return err
	}
	pos := s.size
	for i := range batches {
		s.indexBatch(&batches[i].Header, pos, indexInterval)
		pos += int64(len(batches[i].Raw))
	}
	s.size = pos
	return nil
}

// indexBatch updates the segment's bookkeeping for a batch at pos: Kafka's
// LogSegment.append loop (an index entry once more than
// log.index.interval.bytes were written since the last one).
func (s *segment) indexBatch(h *BatchHeader, pos int64, indexInterval int64) {
	last := h.LastOffset()
	if s.rollingTimestamp < 0 && s.size == 0 && pos == 0 {
		s.rollingTimestamp = h.MaxTimestamp
	}
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = h.MaxTimestamp, last
	}
	if s.bytesSinceIndex > indexInterval && !s.index.full() && !s.timeIndex.full() {
		// Write errors leave the index short, which only makes lookups
		// scan further; the index is rebuilt after a crash anyway.
		_ = s.index.append(last, pos)
		_ = s.timeIndex.maybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp, false)
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += int64(h.Size())
	s.nextOffset = last + 1
}

// recover re-reads the segment from its start, validating every batch (size,
// CRC, offsets) and rebuilding both indexes, as LogSegment.recover does. At
// the first invalid batch the log is truncated there; truncated reports
// whether that happened. onBatch sees every valid batch (epoch cache
// rebuild).
func (s *segment) recover(indexInterval int64, onBatch func(h *BatchHeader)) (truncated bool, err error) {
	st, err := s.log.Stat()
	if err != nil {
		return false, err
	}
	end := st.Size()
	// The transaction index is rebuilt by the producer-state replay that
	// follows (load.go), which knows the transactions ongoing here.
	if err := errors.Join(s.resetIndexes(), s.txn.reset()); err != nil {
		return false, err
	}
	s.size, s.nextOffset = 0, s.baseOffset
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingTimestamp = -1, -1, -1
	sc := newHeaderScanner(s.log, end)
	defer sc.release()
	var big []byte
	pos := int64(0)
	for pos < end {
		var b Batch
		b, big, err = sc.batch(pos, big)
		if err == nil {
			h := &b.Header
			if h.BaseOffset < s.nextOffset || h.LastOffset()-s.baseOffset > 1<<31-1 || h.NumRecords < 0 {
				err = fmt.Errorf("%w: offsets %d..%d out of place", ErrCorruptMessage, h.BaseOffset, h.LastOffset())
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorruptMessage) && !errors.Is(err, ErrUnsupportedMagic) && !errors.Is(err, io.EOF) {
				return false, err
			}
			break
		}
		s.indexBatch(&b.Header, pos, indexInterval)
		pos += int64(len(b.Raw))
		s.size = pos
		if onBatch != nil {
			onBatch(&b.Header)
		}
	}
	if pos < end {
		if err := s.log.Truncate(pos); err != nil {
			return true, err
		}
		return true, nil
	}
	return false, nil
}

// load opens an existing segment trusting its indexes when they are sane;
// ok is false when they are not and the caller must recover the segment.
func (s *segment) load(indexInterval int64) (ok bool, err error) {
	st, err := s.log.Stat()
	if err != nil {
		return false, err
	}
	s.size = st.Size()
	xdata, err := os.ReadFile(segmentName(s.dir, s.baseOffset, ".index"))
	if err != nil {
		return false, err
	}
	rel, pos, ok := loadOffsetIndex(xdata, s.baseOffset, s.size)
	if !ok {
		return false, nil
	}
	s.index.rel, s.index.pos, s.index.written = rel, pos, len(rel)
	// Walk the tail after the last index entry to find the next offset.
	start := int64(0)
	if n := len(pos); n > 0 {
		start = int64(pos[n-1])
	}
	sc := newHeaderScanner(s.log, s.size)
	defer sc.release()
	s.nextOffset = s.baseOffset
	if n := len(rel); n > 0 {
		s.nextOffset = s.baseOffset + int64(rel[n-1])
	}
	tailMaxTs, tailMaxOff := int64(-1), int64(-1)
	for p := start; ; {
		h, err := sc.header(p)
		if err == io.EOF {
			break
		}
		if err != nil || h.Magic != 2 || h.LastOffset() < s.nextOffset-1 {
			return false, nil
		}
		if h.MaxTimestamp > tailMaxTs {
			tailMaxTs, tailMaxOff = h.MaxTimestamp, h.LastOffset()
		}
		s.nextOffset = h.LastOffset() + 1
		p += int64(h.Size())
	}
	tdata, err := os.ReadFile(segmentName(s.dir, s.baseOffset, ".timeindex"))
	if err != nil {
		return false, err
	}
	ts, trel, ok := loadTimeIndex(tdata, s.nextOffset, s.baseOffset)
	if !ok {
		return false, nil
	}
	s.timeIndex.ts, s.timeIndex.rel, s.timeIndex.written = ts, trel, len(ts)
	if n := len(ts); n > 0 {
		s.maxTimestamp, s.offsetOfMaxTimestamp = ts[n-1], s.baseOffset+int64(trel[n-1])
	}
	if tailMaxTs > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = tailMaxTs, tailMaxOff
	}
	if s.size > 0 {
		if h, err := sc.header(0); err == nil {
			s.rollingTimestamp = h.MaxTimestamp
		}
	}
	if err := s.txn.load(s.baseOffset); err != nil {
		if errors.Is(err, ErrCorruptTxnIndex) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// truncateTo removes every batch whose last offset is >= offset and
// returns the segment's new next offset.
func (s *segment) truncateTo(offset int64) error {
	pos, err := s.positionOf(offset)
	if err != nil {
		return err
	}
	if pos >= s.size {
		return nil
	}
	if err := s.log.Truncate(pos); err != nil {
		return err
	}
	s.size = pos
	if err := s.txn.truncateTo(offset); err != nil {
		return err
	}
	if err := s.index.truncateToPosition(pos); err != nil {
		return err
	}
	// Recompute the bookkeeping from the last index entry on.
	start := int64(0)
	s.nextOffset = s.baseOffset
	if n := len(s.index.pos); n > 0 {
		start = int64(s.index.pos[n-1])
		s.nextOffset = s.baseOffset + int64(s.index.rel[n-1])
	}
	sc := newHeaderScanner(s.log, s.size)
	defer sc.release()
	for p := start; ; {
		h, err := sc.header(p)
		if err != nil {
			break
		}
		s.nextOffset = h.LastOffset() + 1
		p += int64(h.Size())
	}
	if err := s.timeIndex.truncateToOffset(s.nextOffset); err != nil {
		return err
	}
	s.maxTimestamp, s.offsetOfMaxTimestamp = -1, -1
	if n := len(s.timeIndex.ts); n > 0 {
		s.maxTimestamp, s.offsetOfMaxTimestamp = s.timeIndex.ts[n-1], s.baseOffset+int64(s.timeIndex.rel[n-1])
	}
	for p := start; ; {
		h, err := sc.header(p)
		if err != nil {
			break
		}
		if h.MaxTimestamp > s.maxTimestamp {
			s.maxTimestamp, s.offsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
		}
		p += int64(h.Size())
	}
	s.bytesSinceIndex = 0
	if s.size == 0 {
		s.rollingTimestamp = -1
	}
	return nil
}

// positionOf is the position of the first batch whose last offset is >=
// offset, or the segment size when there is none.
func (s *segment) positionOf(offset int64) (int64, error) {
	sc := newHeaderScanner(s.log, s.size)
	defer sc.release()
	p := int64(0)
	if offset > s.baseOffset {
		p = s.index.lookup(offset)
	}
	for {
		h, err := sc.header(p)
		if err == io.EOF {
			return s.size, nil
		}
		if err != nil {
			return 0, err
		}
		if h.LastOffset() >= offset {
			return p, nil
		}
		p += int64(h.Size())
	}
}

// writeIndexes writes the index entries held back (offsetIndex); the
// caller holds the log's lock, shared or exclusive.
func (s *segment) writeIndexes() error {
	return errors.Join(s.index.writePending(), s.timeIndex.writePending())
}

// flush syncs the segment's files; writeIndexes comes first.
func (s *segment) flush() error {
	if err := s.log.Sync(); err != nil {
		return err
	}
	if err := s.index.f.Sync(); err != nil {
		return err
	}
	if err := s.txn.sync(); err != nil {
		return err
	}
	return s.timeIndex.f.Sync()
}

func (s *segment) closeFiles() error {
	return errors.Join(s.log.Close(), s.index.f.Close(), s.timeIndex.f.Close(), s.txn.close())
}

// deleteFiles removes the segment's files now and closes them later, so a
// ReadResult still referring to the .log can finish.
func (s *segment) deleteFiles() error {
	var errs []error
	// By name, not f.Name(): a compacted segment's files were renamed.
	for _, suffix := range []string{".log", ".index", ".timeindex", txnIndexSuffix} {
		if err := os.Remove(segmentName(s.dir, s.baseOffset, suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	time.AfterFunc(segmentCloseDelay, func() { s.closeFiles() })
	return errors.Join(errs...)
}
