package fetcher

import (
	"time"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// phase is where a partition is in its fetcher (Kafka's ReplicaState).
type phase int

const (
	// truncating: resolve divergence with OffsetForLeaderEpoch first.
	truncating phase = iota
	// fetching: in the fetch request every round.
	fetching
	// failed: parked until the broker re-adds the partition or its leader
	// epoch moves (fenced in the current epoch, or a local storage error).
	failed
)

// partitionState is one partition's fetch state, owned by its fetcher and
// guarded by fetcher.mu. A state is replaced, never reset, when the
// partition restarts, so an answer to a request sent for an older state is
// recognised by pointer and dropped.
type partitionState struct {
	part replica.TopicPartition
	p    Partition

	leaderEpoch int32
	phase       phase
	// truncateToHW: the epoch cache is empty, so the only safe truncation
	// point is the HW.
	truncateToHW bool
	fetchOffset  int64
	delayedUntil time.Time
	lag          int64
}

func newPartitionState(p Partition, truncateOnFetch bool) *partitionState {
	cache := logstore.NewEpochCache(p.LeaderEpochEntries())
	start := replica.StartFollowing(cache, truncateOnFetch, p.LogEndOffset(), p.HighWatermark())
	st := &partitionState{
		part:         topicPartitionOf(p),
		p:            p,
		leaderEpoch:  p.CurrentLeaderEpoch(),
		phase:        fetching,
		truncateToHW: start.TruncateToHighWatermark,
		fetchOffset:  start.FetchOffset,
	}
	if start.Truncating {
		st.phase = truncating
	}
	return st
}

func (s *partitionState) ready(now time.Time) bool { return !now.Before(s.delayedUntil) }

func (s *partitionState) epochCache() *logstore.EpochCache {
	return logstore.NewEpochCache(s.p.LeaderEpochEntries())
}

// lastFetchedEpoch is the epoch of the last batch in the log: the latest
// cache entry, since a follower adds one per new epoch it appends.
func lastFetchedEpoch(entries []logstore.EpochEntry) int32 {
	if len(entries) == 0 {
		return replica.UndefinedEpoch
	}
	return entries[len(entries)-1].Epoch
}
