package logstore

import (
	"bytes"
	"fmt"
	"strconv"
)

// EpochEntry is one leader-epoch-checkpoint entry: the first offset written
// in a leader epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// UndefinedEpoch and UndefinedEpochOffset are OffsetForLeaderEpoch's
// "unknown" answers (OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH and
// UNDEFINED_EPOCH_OFFSET).
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// EpochCache is Kafka's LeaderEpochFileCache without the file: for each
// leader epoch, the first offset written in it. A log keeps one and writes
// it to leader-epoch-checkpoint under the log's lock; the replication rules
// (package replica) build one from Log.LeaderEpochEntries to decide
// truncation and divergence without IO. The zero value is an empty cache.
//
// Invariant: entries ascend strictly in both epoch and start offset; Assign
// keeps it by removing every entry that would contradict the new one.
type EpochCache struct {
	entries []EpochEntry
}

// NewEpochCache returns a cache holding a copy of entries, which must
// already ascend (they come from a leader-epoch-checkpoint or from
// Log.LeaderEpochEntries).
func NewEpochCache(entries []EpochEntry) *EpochCache {
	return &EpochCache{entries: append([]EpochEntry(nil), entries...)}
}

// Entries returns a copy of the entries, ascending.
func (c *EpochCache) Entries() []EpochEntry {
	return append([]EpochEntry(nil), c.entries...)
}

// Latest is the newest entry; false when the cache is empty.
func (c *EpochCache) Latest() (EpochEntry, bool) {
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// LatestEpoch is the newest epoch, UndefinedEpoch when the cache is empty.
func (c *EpochCache) LatestEpoch() int32 {
	if l, ok := c.Latest(); ok {
		return l.Epoch
	}
	return UndefinedEpoch
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
	if l, ok := c.Latest(); ok && l.Epoch == epoch && startOffset >= l.StartOffset {
		return false
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].StartOffset >= startOffset) {
		n--
	}
	c.entries = append(c.entries[:n], EpochEntry{Epoch: epoch, StartOffset: startOffset})
	return true
}

// assignFromBatch adds an entry for a batch whose leader epoch is newer
// than the latest one (Kafka's Log.append, and recovery's rebuild); it
// reports whether the cache changed.
func (c *EpochCache) assignFromBatch(h *BatchHeader) bool {
	if h.PartitionLeaderEpoch < 0 {
		return false
	}
	if e, ok := c.Latest(); ok && e.Epoch >= h.PartitionLeaderEpoch {
		return false
	}
	return c.Assign(h.PartitionLeaderEpoch, h.BaseOffset)
}

// EndOffsetFor answers OffsetForLeaderEpoch for requested, as
// LeaderEpochFileCache.endOffsetFor:
//   - requested undefined (any negative epoch: none is ever assigned), or
//     the cache empty → undefined;
//   - requested is the latest epoch → (requested, logEndOffset);
//   - requested above every epoch → undefined;
//   - requested below every epoch → (requested, first start offset): the
//     asker's epoch is older than anything we have, so it must truncate to
//     where our history begins;
//   - else (largest epoch <= requested, start of the next higher epoch).
func (c *EpochCache) EndOffsetFor(requested int32, logEndOffset int64) (epoch int32, endOffset int64) {
	l, ok := c.Latest()
	switch {
	case requested < 0 || !ok:
		return UndefinedEpoch, UndefinedEpochOffset
	case requested == l.Epoch:
		return requested, logEndOffset
	case requested > l.Epoch:
		return UndefinedEpoch, UndefinedEpochOffset
	}
	// requested < latest, so a higher entry exists.
	i := 0
	for c.entries[i].Epoch <= requested {
		i++
	}
	if i == 0 {
		return requested, c.entries[0].StartOffset
	}
	return c.entries[i-1].Epoch, c.entries[i].StartOffset
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
	c.entries = append([]EpochEntry{kept}, c.entries[i:]...)
	return true
}

func encodeEpochCheckpoint(entries []EpochEntry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return b.Bytes()
}

func readEpochCheckpoint(path string) ([]EpochEntry, error) {
	lines, err := readCheckpointLines(path, 2)
	if err != nil {
		return nil, err
	}
	out := make([]EpochEntry, 0, len(lines))
	for _, f := range lines {
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("checkpoint %s: malformed line %q", path, f)
		}
		out = append(out, EpochEntry{Epoch: int32(e), StartOffset: o})
	}
	return out, nil
}
