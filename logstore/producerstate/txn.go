package producerstate

import "slices"

// CompletedTxn is a transaction a marker ended (Kafka's CompletedTxn):
// its producer, its first offset, the marker's offset as its last, and
// whether it was aborted. LastStableOffset is what an aborted one's
// transaction-index entry records: the first offset of the oldest other
// producer's ongoing transaction at the marker, or the marker's offset + 1
// when there is none (ProducerStateManager.lastStableOffset).
type CompletedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	Aborted          bool
	LastStableOffset int64
}

// ongoingTxn is a transaction without its marker yet.
type ongoingTxn struct {
	producerID  int64
	firstOffset int64
}

// addOngoing keeps s.ongoing sorted by first offset; new transactions
// start at the log end, so the insert is almost always an append.
func (s *State) addOngoing(producerID, firstOffset int64) {
	i := len(s.ongoing)
	for i > 0 && s.ongoing[i-1].firstOffset > firstOffset {
		i--
	}
	s.ongoing = slices.Insert(s.ongoing, i, ongoingTxn{producerID, firstOffset})
}

func (s *State) removeOngoing(producerID int64) {
	s.ongoing = slices.DeleteFunc(s.ongoing, func(t ongoingTxn) bool { return t.producerID == producerID })
}

// endTxn ends p's transaction at a marker at offset; the caller updates
// the rest of the entry.
func (s *State) endTxn(p *Producer, b Batch, offset int64) (CompletedTxn, bool) {
	if p.CurrentTxnFirstOffset == NoOffset {
		return CompletedTxn{}, false
	}
	c := CompletedTxn{ProducerID: p.ID, FirstOffset: p.CurrentTxnFirstOffset, LastOffset: offset, Aborted: b.Abort, LastStableOffset: offset + 1}
	for _, t := range s.ongoing {
		if t.producerID != p.ID {
			c.LastStableOffset = t.firstOffset
			break
		}
	}
	s.removeOngoing(p.ID)
	p.CurrentTxnFirstOffset = NoOffset
	s.unreplicated = append(s.unreplicated, c)
	return c, true
}

// FirstUnstableOffset is the first offset a read_committed consumer may
// not read yet with the high watermark at highWatermark: the first offset
// of the oldest transaction that is either ongoing or completed by a
// marker at or above the high watermark (ProducerStateManager's
// firstUnstableOffset, with the completed ones the high watermark passed
// left out whether or not OnHighWatermark dropped them yet). ok is false
// when there is none.
func (s *State) FirstUnstableOffset(highWatermark int64) (offset int64, ok bool) {
	if len(s.ongoing) > 0 {
		offset, ok = s.ongoing[0].firstOffset, true
	}
	for _, c := range s.unreplicated {
		if c.LastOffset >= highWatermark && (!ok || c.FirstOffset < offset) {
			offset, ok = c.FirstOffset, true
		}
	}
	return offset, ok
}

// OnHighWatermark forgets completed transactions whose marker lies below
// offset: replicated, they no longer hold the last stable offset back
// (onHighWatermarkUpdated). Markers are appended in offset order, so
// those are a prefix.
func (s *State) OnHighWatermark(offset int64) {
	n := 0
	for n < len(s.unreplicated) && s.unreplicated[n].LastOffset < offset {
		n++
	}
	if n > 0 {
		s.unreplicated = append(s.unreplicated[:0], s.unreplicated[n:]...)
	}
}

// OngoingTxns is the number of transactions without a marker yet (tests,
// metrics).
func (s *State) OngoingTxns() int { return len(s.ongoing) }
