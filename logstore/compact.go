package logstore

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// offsetMap is the cleaner's key → latest offset map.
type offsetMap map[string]int64

// abortedSet is the aborted transactions of the range being cleaned, by
// producer: their records are dropped whatever their keys, and never
// enter the offset map, so an aborted write cannot displace a committed
// one (Kafka's LogCleaner with CleanedTransactionMetadata). Cleaning stops
// at the last stable offset, so every transaction below it is decided and
// each one not listed here was committed.
type abortedSet map[int64][]AbortedTxn

func newAbortedSet(txns []AbortedTxn) abortedSet {
	s := abortedSet{}
	for _, a := range txns {
		s[a.ProducerID] = append(s[a.ProducerID], a)
	}
	return s
}

// holds reports whether a data batch belongs to an aborted transaction.
func (s abortedSet) holds(h *BatchHeader) bool {
	if !h.IsTransactional() || h.IsControl() {
		return false
	}
	for _, a := range s[h.ProducerID] {
		if a.FirstOffset <= h.BaseOffset && h.BaseOffset <= a.LastOffset {
			return true
		}
	}
	return false
}

// addBatch records the offsets of every keyed record of a batch.
func (m offsetMap) addBatch(b Batch, aborted abortedSet) error {
	if b.Header.IsControl() || aborted.holds(&b.Header) {
		return nil
	}
	recs, err := DecodeRecords(b)
	if err != nil {
		return err
	}
	for i := range recs {
		if recs[i].Key != nil {
			m[string(recs[i].Key)] = b.Header.BaseOffset + int64(recs[i].OffsetDelta)
		}
	}
	return nil
}

// filterBatch keeps the records of b that hold their key's latest offset,
// dropping keyless records (Kafka rejects those on compacted topics) and,
// when dropTombstones, records with a null value; a batch of an aborted
// transaction goes whole. Transaction markers stay (Kafka removes them
// once their transaction's data is gone; we keep them, which only costs
// their bytes). The batch keeps its base offset, last offset delta,
// producer fields and codec; it is returned unchanged when nothing goes,
// and keep is false when everything goes.
func filterBatch(b Batch, m offsetMap, aborted abortedSet, dropTombstones bool) (out Batch, keep bool, err error) {
	h := &b.Header
	if h.IsControl() {
		return b, true, nil
	}
	if aborted.holds(h) {
		return Batch{}, false, nil
	}
	recs, err := DecodeRecords(b)
	if err != nil {
		return Batch{}, false, err
	}
	kept := make([]Record, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		off := h.BaseOffset + int64(r.OffsetDelta)
		if r.Key == nil || m[string(r.Key)] != off || (dropTombstones && r.Value == nil) {
			continue
		}
		kept = append(kept, Record{
			Key:         r.Key,
			Value:       r.Value,
			Headers:     r.Headers,
			Timestamp:   h.FirstTimestamp + r.TimestampDelta64,
			OffsetDelta: r.OffsetDelta,
		})
	}
	if len(kept) == len(recs) {
		return b, true, nil
	}
	if len(kept) == 0 {
		return Batch{}, false, nil
	}
	opts := BatchOptions{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		Compression:          h.Compression(),
		ProducerID:           h.ProducerID,
		ProducerEpoch:        h.ProducerEpoch,
		BaseSequence:         h.BaseSequence,
		Transactional:        h.IsTransactional(),
		LastOffsetDelta:      h.LastOffsetDelta,
	}
	nb, err := EncodeBatch(opts, kept)
	if err != nil {
		return Batch{}, false, err
	}
	if h.TimestampTypeIsLogAppend() {
		nb.setLogAppendTime(h.MaxTimestamp)
	}
	return nb, true, nil
}

// compactableCount is how many leading non-active segments the cleaner may
// rewrite: min.compaction.lag.ms holds back segments with recent records,
// and a segment must end at or below stableOffset, the last stable
// offset, since undecided transactions cannot be cleaned (Kafka's
// LogCleanerManager.cleanableOffsets).
func compactableCount(segs []segmentInfo, cfg Config, nowMs, stableOffset int64) int {
	n := 0
	for n < len(segs)-1 && nowMs-segs[n].maxTimestamp >= cfg.MinCompactionLagMs && segs[n+1].baseOffset <= stableOffset {
		n++
	}
	return n
}

// cleaningStableOffset is the last stable offset compaction stops at. A
// log whose high watermark the replica layer never set (tests) takes its
// log end offset for it.
func cleaningStableOffset(t producerTable, logStartOffset, highWatermark, logEndOffset int64) int64 {
	if highWatermark == noHighWatermark {
		highWatermark = logEndOffset
	}
	return lastStableOffset(t, logStartOffset, min(highWatermark, logEndOffset))
}

// compact is one cleaner pass over the non-active segments (Kafka's
// LogCleaner, without its dirty-ratio scheduling): build the key → latest
// offset map, rewrite each segment into `<base>.log.cleaned`, then swap it
// in via `.log.swap` under the log's lock. Appends continue meanwhile;
// they only touch the active segment.
func (l *FileLog) compact(now time.Time) error {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return ErrClosed
	}
	cfg := l.cfg
	stable := cleaningStableOffset(l.producers, l.logStartOffset, l.highWatermark, l.logEndOffset())
	n := compactableCount(l.segmentInfos(), cfg, now.UnixMilli(), stable)
	segs := append([]*segment(nil), l.segments[:n]...)
	sizes := make([]int64, n)
	var txns []AbortedTxn
	for i, s := range segs {
		sizes[i] = s.size
	}
	if n > 0 {
		// Markers may lie past the cleaned range (below the LSO): every
		// index from the first cleaned segment on may name its aborts.
		for _, s := range l.segments {
			txns, _ = s.txn.collect(txns, segs[0].baseOffset, l.segments[n].baseOffset)
		}
	}
	l.mu.RUnlock()
	if n == 0 {
		return nil
	}
	aborted := newAbortedSet(txns)
	m := offsetMap{}
	for i, s := range segs {
		if err := eachBatch(s.log, sizes[i], func(b Batch) error { return m.addBatch(b, aborted) }); err != nil {
			return fmt.Errorf("compact %s segment %d: %w", l.dir, s.baseOffset, err)
		}
	}
	for i, s := range segs {
		dropTombstones := now.UnixMilli()-s.maxTimestamp > cfg.DeleteRetentionMs
		ns, err := writeCleaned(s, sizes[i], m, aborted, dropTombstones, cfg)
		if err != nil {
			return fmt.Errorf("compact %s segment %d: %w", l.dir, s.baseOffset, err)
		}
		if ns == nil {
			continue
		}
		if err := l.swapCleaned(s, sizes[i], ns); err != nil {
			return err
		}
	}
	return nil
}

// eachBatch calls fn for every batch of a segment file up to size.
func eachBatch(f *os.File, size int64, fn func(Batch) error) error {
	var buf []byte
	for pos := int64(0); pos < size; {
		var b Batch
		var err error
		b, buf, err = readBatchAt(f, pos, size, buf)
		if err != nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
		pos += int64(len(b.Raw))
	}
	return nil
}

// writeCleaned writes the filtered segment to `<base>.log.cleaned` with
// its indexes (`.index.cleaned`, `.timeindex.cleaned`), so the swap under
// the log's lock is only renames. The result is nil when nothing would be
// removed (and no file is left).
func writeCleaned(s *segment, size int64, m offsetMap, aborted abortedSet, dropTombstones bool, cfg Config) (*segment, error) {
	ns, err := openSegmentFilesWithSuffix(s.dir, s.baseOffset, cfg, s.created, ".cleaned")
	if err != nil {
		return nil, err
	}
	discard := func() {
		ns.closeFiles()
		for _, suffix := range []string{".log", ".index", ".timeindex"} {
			os.Remove(segmentName(s.dir, s.baseOffset, suffix+".cleaned"))
		}
	}
	if err := errors.Join(ns.log.Truncate(0), ns.resetIndexes(), ns.makeActive()); err != nil {
		discard()
		return nil, err
	}
	changed := false
	err = eachBatch(s.log, size, func(b Batch) error {
		nb, keep, err := filterBatch(b, m, aborted, dropTombstones)
		if err != nil {
			return err
		}
		if !keep || len(nb.Raw) != len(b.Raw) {
			changed = true
		}
		if !keep {
			return nil
		}
		return ns.appendBatches(nb.Raw, []Batch{nb}, int64(cfg.IndexIntervalBytes))
	})
	if err == nil && changed {
		err = errors.Join(ns.makeInactive(), ns.flush())
	}
	if err != nil || !changed {
		discard()
		return nil, err
	}
	// An emptied segment still covers its offsets up to the next segment.
	ns.nextOffset = max(ns.nextOffset, s.nextOffset)
	ns.created = s.created
	return ns, nil
}

// swapCleaned replaces s by the cleaned segment unless the log changed
// under us (the segment was deleted or truncated meanwhile).
func (l *FileLog) swapCleaned(s *segment, size int64, ns *segment) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	idx := -1
	for i, cur := range l.segments[:len(l.segments)-1] {
		if cur == s {
			idx = i
		}
	}
	name := func(suffix string) string { return segmentName(s.dir, s.baseOffset, suffix) }
	if l.closed || idx < 0 || s.size != size {
		ns.closeFiles()
		return errors.Join(os.Remove(name(".log.cleaned")), os.Remove(name(".index.cleaned")), os.Remove(name(".timeindex.cleaned")))
	}
	if err := os.Rename(name(".log.cleaned"), name(".log.swap")); err != nil {
		return err
	}
	// From here a crash is finished by the loader: .log.swap becomes the
	// .log and the indexes are rebuilt from it.
	for _, suffix := range []string{".index", ".timeindex"} {
		if err := os.Rename(name(suffix+".cleaned"), name(suffix)); err != nil {
			return err
		}
	}
	if err := os.Rename(name(".log.swap"), name(".log")); err != nil {
		return err
	}
	if err := syncDir(l.dir); err != nil {
		return err
	}
	// Offsets stay where they were, so the transaction index does too: it
	// moves to the cleaned segment, unchanged.
	ns.txn, s.txn = s.txn, txnIndex{}
	l.segments[idx] = ns
	// Readers may still hold ranges of the old file; it is unlinked
	// already and closed later.
	time.AfterFunc(segmentCloseDelay, func() { s.closeFiles() })
	return nil
}
