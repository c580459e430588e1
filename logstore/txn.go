package logstore

func (l *FileLog) LastStableOffset(highWatermark int64) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return lastStableOffset(l.producers, l.logStartOffset, highWatermark)
}

// lastStableOffset is min(highWatermark, first unstable offset), the first
// unstable offset raised to the log start offset: its transaction's first
// batches may have been deleted (UnifiedLog.maybeIncrementFirstUnstableOffset).
func lastStableOffset(t producerTable, logStartOffset, highWatermark int64) int64 {
	fuo, ok := t.state.FirstUnstableOffset(highWatermark)
	if !ok {
		return highWatermark
	}
	return min(highWatermark, max(fuo, logStartOffset))
}

func (l *FileLog) AbortedTransactions(fetchOffset, upperBoundOffset int64) ([]AbortedTxn, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	var out []AbortedTxn
	for i := l.segmentFor(fetchOffset); i < len(l.segments); i++ {
		var done bool
		if out, done = l.segments[i].txn.collect(out, fetchOffset, upperBoundOffset); done {
			break
		}
	}
	return out, nil
}

func (l *FileLog) HasOngoingTransaction(producerID int64) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.producers.hasOngoingTransaction(producerID)
}
