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

// epochCache is Kafka's LeaderEpochFileCache without the file: entries
// ascending in both epoch and start offset. The owning log persists it; its
// lock guards it.
type epochCache struct {
	entries []EpochEntry
}

func (c *epochCache) latest() (EpochEntry, bool) {
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// assign records that epoch starts at start; it reports whether the cache
// changed. An entry that contradicts the new one (an epoch >= it, or a start
// >= it) is removed, as Kafka does, so entries stay ascending in both.
func (c *epochCache) assign(epoch int32, start int64) bool {
	if epoch < 0 || start < 0 {
		return false
	}
	if l, ok := c.latest(); ok && l.Epoch == epoch && start >= l.StartOffset {
		return false
	}
	kept := c.entries[:0]
	for _, e := range c.entries {
		if e.Epoch < epoch && e.StartOffset < start {
			kept = append(kept, e)
		}
	}
	c.entries = append(kept, EpochEntry{Epoch: epoch, StartOffset: start})
	return true
}

// assignFromBatch adds an entry for a batch whose leader epoch is newer
// than the latest one (Kafka's Log.append, and recovery's rebuild); it
// reports whether the cache changed.
func (c *epochCache) assignFromBatch(h *BatchHeader) bool {
	if h.PartitionLeaderEpoch < 0 {
		return false
	}
	if e, ok := c.latest(); ok && e.Epoch >= h.PartitionLeaderEpoch {
		return false
	}
	return c.assign(h.PartitionLeaderEpoch, h.BaseOffset)
}

// endOffsetFor follows LeaderEpochFileCache.endOffsetFor.
func (c *epochCache) endOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	l, ok := c.latest()
	switch {
	case requested < 0 || !ok:
		return -1, -1
	case requested == l.Epoch:
		return requested, logEndOffset
	case requested > l.Epoch:
		return -1, -1
	}
	// The first entry above requested exists because requested < latest.
	i := 0
	for i < len(c.entries) && c.entries[i].Epoch <= requested {
		i++
	}
	if i == 0 {
		// Older than anything we have: the caller truncates to our first
		// start offset.
		return requested, c.entries[0].StartOffset
	}
	return c.entries[i-1].Epoch, c.entries[i].StartOffset
}

// truncateFromEnd drops entries starting at or after endOffset (the log was
// truncated there).
func (c *epochCache) truncateFromEnd(endOffset int64) bool {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= endOffset {
		n--
	}
	changed := n != len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// truncateFromStart drops entries at or below startOffset but keeps the last
// of them re-pointed to startOffset: that epoch still covers the new start.
func (c *epochCache) truncateFromStart(startOffset int64) bool {
	i := 0
	for i < len(c.entries) && c.entries[i].StartOffset <= startOffset {
		i++
	}
	if i == 0 {
		return false
	}
	last := c.entries[i-1]
	if i == 1 && last.StartOffset == startOffset {
		return false
	}
	last.StartOffset = startOffset
	rest := append([]EpochEntry{last}, c.entries[i:]...)
	c.entries = rest
	return true
}

func (c *epochCache) clone() []EpochEntry {
	return append([]EpochEntry(nil), c.entries...)
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
