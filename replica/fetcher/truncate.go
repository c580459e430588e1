package fetcher

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/replica"
)

// truncateRound resolves divergence for the partitions in the truncating
// phase (AbstractFetcherThread.truncateToEpochEndOffsets): those without
// leader epochs truncate to their HW at once; the others ask the leader with
// OffsetForLeaderEpoch where their latest epoch ends and truncate there,
// asking again while the answer names an epoch they never had (KIP-279).
// Reports whether it did anything.
func (f *fetcher) truncateRound() bool {
	f.mu.Lock()
	sts := f.readyLocked(truncating, f.cfg.Clock.Now())
	var ask []*partitionState
	for _, st := range sts {
		if st.truncateToHW {
			f.truncateLocked(st, st.fetchOffset)
			st.phase = fetching
			continue
		}
		ask = append(ask, st)
	}
	if len(ask) == 0 {
		// The common case, every round while all partitions fetch: no
		// request to build.
		f.mu.Unlock()
		return len(sts) > 0
	}
	req := f.offsetForLeaderEpochRequest(ask)
	f.mu.Unlock()
	kresp, ok := f.request(req, ask)
	if !ok {
		return true
	}
	resp := kresp.(*kmsg.OffsetForLeaderEpochResponse)
	f.mu.Lock()
	defer f.mu.Unlock()
	answers := map[replica.TopicPartition]kmsg.OffsetForLeaderEpochResponseTopicPartition{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			answers[replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p
		}
	}
	var retry []*partitionState
	for _, st := range ask {
		if f.parts[st.part] != st || st.p.CurrentLeaderEpoch() != st.leaderEpoch {
			// The partition restarted or its epoch moved while we asked:
			// the answer is about a leadership that no longer holds.
			continue
		}
		a, ok := answers[st.part]
		if !ok {
			retry = append(retry, st)
			continue
		}
		if err := kerr.ErrorForCode(a.ErrorCode); err != nil {
			if f.fencedLocked(st, err, st.leaderEpoch) {
				retry = append(retry, st)
			}
			continue
		}
		f.applyTruncationLocked(st, replica.EpochEndOffset{LeaderEpoch: a.LeaderEpoch, EndOffset: a.EndOffset})
	}
	f.delayLocked(retry)
	return true
}

func (f *fetcher) offsetForLeaderEpochRequest(sts []*partitionState) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = offsetForLeaderEpochVersion
	req.ReplicaID = f.cfg.BrokerID
	byTopic := map[string]int{}
	for _, st := range sts {
		i, ok := byTopic[st.part.Topic]
		if !ok {
			t := kmsg.NewOffsetForLeaderEpochRequestTopic()
			t.Topic = st.part.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[st.part.Topic] = i
		}
		p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		p.Partition = st.part.Partition
		p.CurrentLeaderEpoch = st.leaderEpoch
		p.LeaderEpoch = lastFetchedEpoch(st.p.LeaderEpochEntries(), st.p.LogEndOffset())
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	return req
}

// applyTruncationLocked applies the leader's answer in the truncating
// phase: the partition fetches once the truncation is complete, and asks
// again about its new latest epoch otherwise.
func (f *fetcher) applyTruncationLocked(st *partitionState, leader replica.EpochEndOffset) {
	tr := replica.OffsetTruncation(st.epochCache(), st.p.LogEndOffset(), st.fetchOffset, leader)
	if !f.truncateLocked(st, tr.Offset) {
		return
	}
	if tr.Completed {
		st.phase = fetching
	}
}

// truncateLocked cuts st's log to offset (nothing when offset is at or
// above the LEO) and makes offset the fetch offset. A storage error parks
// the partition: a broken log dir will not heal by retrying (Kafka marks
// it failed and the controller moves the replica).
func (f *fetcher) truncateLocked(st *partitionState, offset int64) bool {
	leo := st.p.LogEndOffset()
	if offset < leo {
		if hw := st.p.HighWatermark(); offset < hw {
			f.logger.Warn("replica fetcher: truncating below the high watermark", "topic", st.part.Topic, "partition", st.part.Partition, "offset", offset, "hw", hw)
		}
		if err := st.p.TruncateTo(offset); err != nil {
			f.logger.Error("replica fetcher: truncation failed, partition marked failed", "topic", st.part.Topic, "partition", st.part.Partition, "offset", offset, "err", err)
			st.phase = failed
			return false
		}
		f.logger.Info("replica fetcher: truncated", "topic", st.part.Topic, "partition", st.part.Partition, "from", leo, "to", offset)
	}
	st.fetchOffset = min(offset, st.p.LogEndOffset())
	return true
}

// fencedLocked handles a partition error from the leader
// (AbstractFetcherThread.onPartitionFenced and its error cases):
// FENCED_LEADER_EPOCH for the epoch we still hold means the leader moved
// on and the controller will tell us; the partition is parked. Any other
// error is retried after the back-off: it reports true.
func (f *fetcher) fencedLocked(st *partitionState, err error, requestEpoch int32) bool {
	if errors.Is(err, kerr.FencedLeaderEpoch) && requestEpoch == st.p.CurrentLeaderEpoch() {
		f.logger.Info("replica fetcher: fenced in the current leader epoch, waiting for LeaderAndIsr", "topic", st.part.Topic, "partition", st.part.Partition, "epoch", requestEpoch)
		st.phase = failed
		return false
	}
	f.logger.Debug("replica fetcher: partition error, backing off", "topic", st.part.Topic, "partition", st.part.Partition, "err", err)
	return true
}
