package fetcher

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListOffsets timestamps (KIP-79).
const (
	latestTimestamp   = -1
	earliestTimestamp = -2
)

// handleOutOfRange is Kafka's fetchOffsetAndTruncate: a leader whose LEO is
// below ours (unclean election) makes us truncate to it; a leader whose log
// start is above our LEO makes us restart our log there. Otherwise we fetch
// again from our LEO.
func (f *fetcher) handleOutOfRange(s sentPartition) {
	leaderEnd, ok := f.listOffset(s, latestTimestamp)
	if !ok {
		return
	}
	f.mu.Lock()
	if !f.unchangedLocked(s) {
		f.mu.Unlock()
		return
	}
	st := s.st
	if leo := st.p.LogEndOffset(); leaderEnd < leo {
		f.logger.Warn("replica fetcher: leader's log ends below ours, truncating (data may be lost after an unclean election)", "topic", st.part.Topic, "partition", st.part.Partition, "leaderLogEndOffset", leaderEnd, "logEndOffset", leo)
		f.truncateLocked(st, leaderEnd)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()

	leaderStart, ok := f.listOffset(s, earliestTimestamp)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.unchangedLocked(s) {
		return
	}
	leo := st.p.LogEndOffset()
	if leaderStart > leo {
		f.logger.Info("replica fetcher: leader's log starts above our log end, restarting the log", "topic", st.part.Topic, "partition", st.part.Partition, "leaderLogStartOffset", leaderStart, "logEndOffset", leo)
		if err := st.p.TruncateFullyAndStartAt(leaderStart); err != nil {
			f.logger.Error("replica fetcher: restarting the log failed, partition marked failed", "topic", st.part.Topic, "partition", st.part.Partition, "err", err)
			st.phase = failed
			return
		}
		st.fetchOffset = st.p.LogEndOffset()
		return
	}
	// Nothing to cut: the leader disagreed with our fetch offset for a
	// reason it will not keep (a race with its own truncation or
	// retention). Back off so that a persistent disagreement is no busy loop.
	st.fetchOffset = leo
	f.delayLocked([]*partitionState{st})
}

// listOffset asks the leader, as a replica (so it answers its LEO, not its
// HW), for the offset of timestamp. On an error the partition backs off.
func (f *fetcher) listOffset(s sentPartition, timestamp int64) (int64, bool) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = listOffsetsVersion
	req.ReplicaID = f.cfg.BrokerID
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = s.st.part.Topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition = s.st.part.Partition
	p.CurrentLeaderEpoch = s.leaderEpoch
	p.Timestamp = timestamp
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)

	kresp, ok := f.request(req, []*partitionState{s.st})
	if !ok {
		return 0, false
	}
	resp := kresp.(*kmsg.ListOffsetsResponse)
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.Topic != s.st.part.Topic || rp.Partition != s.st.part.Partition {
				continue
			}
			err := kerr.ErrorForCode(rp.ErrorCode)
			if err == nil {
				return rp.Offset, true
			}
			f.mu.Lock()
			if f.unchangedLocked(s) && f.fencedLocked(s.st, err, s.leaderEpoch) {
				f.delayLocked([]*partitionState{s.st})
			}
			f.mu.Unlock()
			return 0, false
		}
	}
	f.mu.Lock()
	f.delayLocked([]*partitionState{s.st})
	f.mu.Unlock()
	return 0, false
}
