package fetcher

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// fetchRound sends one Fetch for every fetching partition that is not
// backing off and applies the answer. Reports whether it sent anything.
func (f *fetcher) fetchRound() bool {
	f.mu.Lock()
	now := f.cfg.Clock.Now()
	sts := f.unthrottled(f.readyLocked(fetching, now), now)
	if len(sts) == 0 {
		f.mu.Unlock()
		return false
	}
	req, sent := f.fetchRequest(sts)
	f.mu.Unlock()

	kresp, ok := f.request(req, sts)
	if !ok {
		return true
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		f.requestFailed(err, sts)
		return true
	}
	answers := fetchResponsePartitions(resp, sent)

	f.mu.Lock()
	var retry []*partitionState
	var outOfRange []sentPartition
	for _, s := range sent {
		st := s.st
		if !f.unchangedLocked(s) {
			continue
		}
		p, ok := answers[st]
		if !ok {
			// A leader that leaves a partition out of a sessionless fetch
			// would otherwise be asked again at once, forever.
			retry = append(retry, st)
			continue
		}
		switch err := kerr.ErrorForCode(p.ErrorCode); {
		case err == nil:
			if !f.processPartitionLocked(st, p) {
				retry = append(retry, st)
			}
		case errors.Is(err, kerr.OffsetOutOfRange):
			outOfRange = append(outOfRange, s)
		default:
			if f.fencedLocked(st, err, s.leaderEpoch) {
				retry = append(retry, st)
			}
		}
	}
	f.delayLocked(retry)
	f.mu.Unlock()

	for _, s := range outOfRange {
		f.handleOutOfRange(s)
	}
	return true
}

// unchangedLocked reports whether the partition is still in the state the
// request was sent for; answers for anything else are dropped.
func (f *fetcher) unchangedLocked(s sentPartition) bool {
	st := s.st
	return f.parts[st.part] == st && st.phase == fetching && st.fetchOffset == s.fetchOffset &&
		st.leaderEpoch == s.leaderEpoch && st.p.CurrentLeaderEpoch() == s.leaderEpoch
}

// processPartitionLocked applies one partition's successful answer
// (AbstractFetcherThread.processFetchRequest). It reports false when the
// partition must back off and retry the same offset.
func (f *fetcher) processPartitionLocked(st *partitionState, p *kmsg.FetchResponseTopicPartition) bool {
	if d := p.DivergingEpoch; d.Epoch != -1 || d.EndOffset != -1 {
		// Truncate on fetch: nothing is appended and the HW stays; any
		// further divergence shows on the next fetch (KIP-595 style).
		tr := replica.OffsetTruncation(st.epochCache(), st.p.LogEndOffset(), st.fetchOffset,
			replica.EpochEndOffset{LeaderEpoch: d.Epoch, EndOffset: d.EndOffset})
		f.truncateLocked(st, tr.Offset)
		return true
	}
	batches, err := wholeBatches(p.RecordBatches)
	if err != nil {
		f.logger.Warn("replica fetcher: corrupt records from leader, retrying", "topic", st.part.Topic, "partition", st.part.Partition, "offset", st.fetchOffset, "err", err)
		return false
	}
	if len(batches) > 0 {
		if base := batches[0].Header.BaseOffset; base != st.fetchOffset {
			f.logger.Error("replica fetcher: leader returned data not at the fetch offset", "topic", st.part.Topic, "partition", st.part.Partition, "offset", st.fetchOffset, "base", base)
			return false
		}
		if _, err := st.p.AppendAsFollower(batches); err != nil {
			if errors.Is(err, logstore.ErrCorruptMessage) || errors.Is(err, logstore.ErrInvalidRecord) {
				f.logger.Warn("replica fetcher: append rejected, retrying", "topic", st.part.Topic, "partition", st.part.Partition, "err", err)
				return false
			}
			f.logger.Error("replica fetcher: append failed, partition marked failed", "topic", st.part.Topic, "partition", st.part.Partition, "err", err)
			st.phase = failed
			return true
		}
	}
	st.fetchOffset = st.p.LogEndOffset()
	st.p.SetLeaderHighWatermark(p.HighWatermark, p.LogStartOffset)
	st.lag = max(0, p.HighWatermark-st.fetchOffset)
	st.inSync = st.lag == 0
	if q := f.cfg.Quota; q != nil && len(p.RecordBatches) > 0 && q.Throttled(st.part.Topic, st.part.Partition) {
		q.Record(len(p.RecordBatches), f.cfg.Clock.Now())
	}
	return true
}

// unthrottled leaves out the partitions the follower's replication quota
// holds back (ReplicaFetcherThread.shouldFollowerThrottle): throttled,
// not caught up, and the quota exceeded. When that leaves nothing, the
// fetcher idles for replica.fetch.backoff.ms, as Kafka's does with an
// empty fetch.
func (f *fetcher) unthrottled(sts []*partitionState, now time.Time) []*partitionState {
	q := f.cfg.Quota
	if q == nil || !q.Throttles() {
		return sts
	}
	exceeded, checked := false, false
	out := sts[:0]
	for _, st := range sts {
		if !st.inSync && q.Throttled(st.part.Topic, st.part.Partition) {
			if !checked {
				exceeded, checked = q.Exceeded(now), true
			}
			if exceeded {
				continue
			}
		}
		out = append(out, st)
	}
	return out
}

// wholeBatches parses the record batches of a fetch answer. A leader may
// cut the last batch at the size limit; the cut tail is dropped here and
// fetched again next round, while ParseBatches checks the rest.
func wholeBatches(buf []byte) ([]logstore.Batch, error) {
	n := 0
	for len(buf)-n >= 12 {
		size := 12 + int(int32(binary.BigEndian.Uint32(buf[n+8:])))
		if size <= 12 || len(buf)-n < size {
			break
		}
		n += size
	}
	return logstore.ParseBatches(buf[:n])
}
