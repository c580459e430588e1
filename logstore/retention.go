package logstore

import "strings"

// segmentInfo is what the retention rules look at, shared by FileLog and
// the test model MemLog so both delete the same segments.
type segmentInfo struct {
	baseOffset   int64
	size         int64
	maxTimestamp int64
}

// deletableSegments returns how many leading segments retention removes,
// applying Kafka's three passes in order: segments wholly below the log
// start offset, then retention.ms (largest timestamp too old), then
// retention.bytes (whole segments while the rest stays over the limit).
// The last (active) segment counts only when it is not empty; the caller
// rolls first when every segment goes. Time and size retention never
// delete a segment holding offsets at or above highWatermark (Kafka's
// upperBoundOffset), so data followers still need stays.
func deletableSegments(segs []segmentInfo, cfg Config, nowMs, logStartOffset, logEndOffset, highWatermark int64) int {
	n := 0
	for n < len(segs)-1 && segs[n+1].baseOffset <= logStartOffset {
		n++
	}
	eligible := func(i int) bool {
		upper := logEndOffset
		if i < len(segs)-1 {
			upper = segs[i+1].baseOffset
		}
		return (i < len(segs)-1 || segs[i].size > 0) && upper <= highWatermark
	}
	if strings.Contains(cfg.CleanupPolicy, "delete") {
		if cfg.RetentionMs >= 0 {
			// A segment compaction emptied has no timestamp left; it holds
			// nothing to keep (Kafka would look at its mtime).
			expired := func(i int) bool {
				return segs[i].size == 0 && i < len(segs)-1 ||
					segs[i].maxTimestamp >= 0 && nowMs-segs[i].maxTimestamp > cfg.RetentionMs
			}
			for n < len(segs) && eligible(n) && expired(n) {
				n++
			}
		}
		if cfg.RetentionBytes >= 0 {
			var total int64
			for _, s := range segs[n:] {
				total += s.size
			}
			diff := total - cfg.RetentionBytes
			for n < len(segs) && eligible(n) && diff-segs[n].size >= 0 {
				diff -= segs[n].size
				n++
			}
		}
	}
	return n
}

func isCompacted(cfg Config) bool { return strings.Contains(cfg.CleanupPolicy, "compact") }

// HighWatermarkSetter is implemented by FileLog (and the test MemLog). The
// replica layer calls it as the high watermark moves so that retention, like
// Kafka's, only deletes segments below it. Until it is called, retention is
// not bounded.
type HighWatermarkSetter interface {
	SetHighWatermark(hw int64)
}
