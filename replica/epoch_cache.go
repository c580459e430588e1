package replica

import "github.com/kbroker/kbroker/logstore"

// UndefinedEpoch and UndefinedEpochOffset are OffsetForLeaderEpoch's
// "unknown" answers (OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH and
// UNDEFINED_EPOCH_OFFSET).
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// EpochEndOffset is an OffsetForLeaderEpoch answer, and the DivergingEpoch
// of a Fetch v12+ response: the largest epoch <= the requested one that the
// answering replica knows, and the offset where that epoch ends.
type EpochEndOffset struct {
	LeaderEpoch int32
	EndOffset   int64
}

// EpochCache is Kafka's LeaderEpochFileCache without the file: for each
// leader epoch, the first offset written in it. Persisting it is the log
// store's job; this twin exists so that the replication rules can be decided
// and tested without IO.
//
// Invariant: entries ascend strictly in both epoch and start offset; Assign
// keeps it by removing every entry that would contradict the new one.
type EpochCache struct {
	entries []logstore.EpochEntry
}

// NewEpochCache returns a cache holding entries, which must already ascend
// (they come from a leader-epoch-checkpoint or from Log.LeaderEpochEntries).
func NewEpochCache(entries []logstore.EpochEntry) *EpochCache {
	return &EpochCache{entries: append([]logstore.EpochEntry(nil), entries...)}
}

// Entries returns a copy of the entries, ascending.
func (c *EpochCache) Entries() []logstore.EpochEntry {
	return append([]logstore.EpochEntry(nil), c.entries...)
}

// LatestEpoch is the newest epoch, UndefinedEpoch when the cache is empty.
func (c *EpochCache) LatestEpoch() int32 {
	if len(c.entries) == 0 {
		return UndefinedEpoch
	}
	return c.entries[len(c.entries)-1].Epoch
}

// PreviousEpoch is the epoch before the latest, UndefinedEpoch if none.
func (c *EpochCache) PreviousEpoch() int32 {
	if len(c.entries) < 2 {
		return UndefinedEpoch
	}
	return c.entries[len(c.entries)-2].Epoch
}

// Assign records that epoch starts at startOffset and reports whether the
// cache changed. As LeaderEpochFileCache.assign in 3.9: the same epoch at a
// later offset is ignored (the epoch's start never moves forward); anything
// else removes every entry with an epoch >= epoch or a start >= startOffset
// before adding, so a message epoch going backwards truncates the newer
// epochs instead of breaking monotonicity. Negative values are rejected
// (Kafka throws), reported as no change.
func (c *EpochCache) Assign(epoch int32, startOffset int64) bool {
	if epoch < 0 || startOffset < 0 {
		return false
	}
	if n := len(c.entries); n > 0 {
		last := c.entries[n-1]
		if last.Epoch == epoch && startOffset >= last.StartOffset {
			return false
		}
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].StartOffset >= startOffset) {
		n--
	}
	c.entries = append(c.entries[:n], logstore.EpochEntry{Epoch: epoch, StartOffset: startOffset})
	return true
}

// EndOffsetFor answers OffsetForLeaderEpoch for requested, as
// LeaderEpochFileCache.endOffsetFor:
//   - requested undefined, or the cache empty → undefined;
//   - requested is the latest epoch → (requested, logEndOffset);
//   - requested above every epoch → undefined;
//   - requested below every epoch → (requested, first start offset): the
//     asker's epoch is older than anything we have, so it must truncate to
//     where our history begins;
//   - else (largest epoch <= requested, start of the next higher epoch).
func (c *EpochCache) EndOffsetFor(requested int32, logEndOffset int64) EpochEndOffset {
	undefined := EpochEndOffset{UndefinedEpoch, UndefinedEpochOffset}
	latest := c.LatestEpoch()
	switch {
	case requested == UndefinedEpoch || latest == UndefinedEpoch:
		return undefined
	case requested == latest:
		return EpochEndOffset{requested, logEndOffset}
	case requested > latest:
		return undefined
	}
	// requested < latest, so a higher entry exists.
	i := 0
	for c.entries[i].Epoch <= requested {
		i++
	}
	if i == 0 {
		return EpochEndOffset{requested, c.entries[0].StartOffset}
	}
	return EpochEndOffset{c.entries[i-1].Epoch, c.entries[i].StartOffset}
}

// TruncateFromEnd follows a log truncation to endOffset: entries starting at
// or after it describe records that no longer exist. An undefined (negative)
// offset changes nothing, as in Kafka.
func (c *EpochCache) TruncateFromEnd(endOffset int64) bool {
	if endOffset < 0 {
		return false
	}
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= endOffset {
		n--
	}
	changed := n != len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// TruncateFromStart follows the log start moving to startOffset: entries at
// or below it are dropped except the last, re-pointed to startOffset,
// because that epoch still covers the first remaining record.
func (c *EpochCache) TruncateFromStart(startOffset int64) bool {
	i := 0
	for i < len(c.entries) && c.entries[i].StartOffset <= startOffset {
		i++
	}
	if i == 0 {
		return false
	}
	kept := c.entries[i-1]
	if i == 1 && kept.StartOffset == startOffset {
		return false
	}
	kept.StartOffset = startOffset
	c.entries = append([]logstore.EpochEntry{kept}, c.entries[i:]...)
	return true
}
