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
	// inSync: the last answer left the follower at the leader's HW
	// (PartitionFetchState.isReplicaInSync: a lag known and zero). Only
	// replicas not in sync are throttled.
	inSync bool
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
// cache entry that starts below the log end. An entry at the log end holds
// no records: a leader writes one when it takes over, and a broker that led
// without appending anything then follows with it as its latest epoch. The
// new leader never had that epoch, answers with the diverging epoch before
// it, ending at this log's end; truncating there changes nothing, and a
// fetch that named the empty epoch again would diverge forever.
func lastFetchedEpoch(entries []logstore.EpochEntry, logEndOffset int64) int32 {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].StartOffset < logEndOffset {
			return entries[i].Epoch
		}
	}
	return replica.UndefinedEpoch
}
