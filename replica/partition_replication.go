package replica

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
)

// Both sides of follower fetching on the live partition: the leader
// serving a follower's Fetch (Partition.fetchRecords) and the follower
// applying what it fetched (ReplicaFetcherThread.processPartitionData).

// DivergingEpoch is what a leader answers instead of records when a
// follower's last fetched epoch shows its log diverged (Fetch v12+, KIP-320):
// the follower truncates to EndOffset (or below) and fetches again.
type DivergingEpoch struct {
	Epoch     int32
	EndOffset int64
}

// ReadForFollower serves a follower's fetch on the leader: records up to
// the log end offset (followers read past the HW), after checking the
// follower's last fetched epoch. With updateFetchState, the read updates
// what the leader knows of the follower — its LEO, fetch time,
// lastCaughtUpTime — which may move the HW and start an ISR expansion; a
// diverging answer does not. Only the read made when the fetch arrives
// passes it: the re-read of a fetch that waited in the purgatory does not
// (Kafka's readFromLog with readFromPurgatory), so that one fetch counts
// once however long it waited.
func (p *Partition) ReadForFollower(replicaID int32, fetchOffset, followerLogStartOffset int64, lastFetchedEpoch int32, maxBytes int, minOneBatch, updateFetchState bool) (logstore.ReadResult, ReadInfo, *DivergingEpoch, error) {
	if !p.IsLeader() {
		return nil, ReadInfo{}, nil, kerr.NotLeaderForPartition
	}
	leo := p.log.LogEndOffset()
	start := p.log.LogStartOffset()
	if lastFetchedEpoch >= 0 {
		var end EpochEndOffset
		end.LeaderEpoch, end.EndOffset = p.log.EndOffsetForEpoch(lastFetchedEpoch)
		switch checkEpochEnd(end, start, lastFetchedEpoch, fetchOffset) {
		case FetchEpochOffsetOutOfRange:
			return nil, p.readInfo(), nil, kerr.OffsetOutOfRange
		case FetchEpochDiverging:
			return nil, p.readInfo(), &DivergingEpoch{Epoch: end.LeaderEpoch, EndOffset: end.EndOffset}, nil
		}
	}
	rr, err := p.log.Read(fetchOffset, leo, maxBytes, minOneBatch)
	if err != nil {
		return nil, p.readInfo(), nil, err
	}
	if !updateFetchState {
		if !p.IsLeader() {
			return nil, p.readInfo(), nil, kerr.NotLeaderForPartition
		}
		return rr, p.readInfo(), nil, nil
	}
	if err := p.UpdateFollowerFetch(replicaID, fetchOffset, followerLogStartOffset, leo); err != nil {
		// Not leader any more, or a broker that is not a replica.
		return nil, p.readInfo(), nil, kerr.NotLeaderForPartition
	}
	return rr, p.readInfo(), nil, nil
}

// Offsets is what a fetch at isolation answers for a partition it reads
// nothing of (its byte budget spent): the ReadInfo offsets, and for
// read_committed an empty aborted-transaction list, as ReadIsolated gives.
func (p *Partition) Offsets(isolation FetchIsolation) ReadInfo {
	info := p.readInfo()
	if isolation == FetchTxnCommitted {
		info.AbortedTransactions = []logstore.AbortedTxn{}
	}
	return info
}

// readInfo reads the offsets a fetch answers with; the last stable offset
// goes to every fetch, followers' included, as Kafka sends it.
func (p *Partition) readInfo() ReadInfo {
	hw := p.HighWatermark()
	return ReadInfo{HighWatermark: hw, LogStartOffset: p.log.LogStartOffset(), LogEndOffset: p.log.LogEndOffset(), LastStableOffset: p.log.LastStableOffset(hw)}
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch from the log's epoch
// cache (KIP-101/279).
func (p *Partition) EndOffsetForEpoch(epoch int32) (leaderEpoch int32, endOffset int64) {
	return p.log.EndOffsetForEpoch(epoch)
}

// CurrentLeaderEpoch and LeaderID are the follower's view of who leads.
func (p *Partition) CurrentLeaderEpoch() int32 { return p.LeaderEpoch() }

// LeaderID is the leading broker (this one's id while leader).
func (p *Partition) LeaderID() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader {
		return p.opts.LocalID
	}
	return p.followerState.LeaderID()
}

// AppendAsFollower appends batches fetched from the leader unchanged (same
// offsets, same leader epochs).
func (p *Partition) AppendAsFollower(batches []logstore.Batch) (logstore.AppendInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader {
		return logstore.AppendInfo{}, kerr.NotLeaderForPartition
	}
	return p.log.AppendAsFollower(batches)
}

// SetLeaderHighWatermark applies the HW a fetch response carried: the
// follower's HW is min(its LEO, the leader's HW): it cannot vouch for
// records it does not hold.
func (p *Partition) SetLeaderHighWatermark(hw int64) {
	p.mu.Lock()
	defer p.unlock()
	if p.leader {
		return
	}
	before := p.followerState.HighWatermark()
	if p.followerState.ApplyFetchResponse(hw, p.log.LogStartOffset(), p.log.LogEndOffset()) != before {
		p.highWatermarkMovedLocked()
	}
}

// TruncateTo removes the local log's suffix from offset (follower
// truncation by leader epoch); the HW comes down with it.
func (p *Partition) TruncateTo(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader {
		return kerr.NotLeaderForPartition
	}
	if err := p.log.TruncateTo(offset); err != nil {
		return err
	}
	p.followerState.Truncated(p.log.LogEndOffset())
	return nil
}

// TruncateFullyAndStartAt empties the local log and restarts it at offset
// (a follower whose fetch offset fell below the leader's log start).
func (p *Partition) TruncateFullyAndStartAt(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader {
		return kerr.NotLeaderForPartition
	}
	if err := p.log.TruncateFullyAndStartAt(offset); err != nil {
		return err
	}
	p.followerState.Truncated(p.log.LogEndOffset())
	return nil
}
