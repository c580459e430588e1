package replica

import "github.com/kbroker/kbroker/logstore"

// FollowerState is a follower's own view of a partition: only its HW and its
// leader; the leader tracks everything else. LEO and log start come from the
// local log at each call.
//
// Invariant: logStartOffset <= HW <= LEO after every call. Unlike a leader's,
// a follower's HW may go down: it is recomputed from each response and cut by
// truncation, as Kafka's follower HW is.
type FollowerState struct {
	leaderID      int32
	leaderEpoch   int32
	highWatermark int64
}

// NewFollowerState starts following leaderID in leaderEpoch with the HW from
// replication-offset-checkpoint (0 if absent) or the former leader's HW.
func NewFollowerState(leaderID, leaderEpoch int32, highWatermark int64) *FollowerState {
	return &FollowerState{leaderID: leaderID, leaderEpoch: leaderEpoch, highWatermark: highWatermark}
}

func (f *FollowerState) LeaderID() int32      { return f.leaderID }
func (f *FollowerState) LeaderEpoch() int32   { return f.leaderEpoch }
func (f *FollowerState) HighWatermark() int64 { return f.highWatermark }

// BecomeFollower applies a newer LeaderAndIsr naming another leader; a
// stale epoch (not strictly higher, ZooKeeper mode) is ignored.
func (f *FollowerState) BecomeFollower(leaderID, leaderEpoch int32) bool {
	if leaderEpoch <= f.leaderEpoch {
		return false
	}
	f.leaderID, f.leaderEpoch = leaderID, leaderEpoch
	return true
}

// ApplyFetchResponse sets the HW after the response's records were appended
// (UnifiedLog.updateHighWatermark): min(leader HW, own LEO), never below the
// own log start. Not called for a response carrying a diverging epoch
// (KIP-320). Returns the new HW.
func (f *FollowerState) ApplyFetchResponse(leaderHighWatermark, logStartOffset, logEndOffset int64) int64 {
	f.highWatermark = clampOffset(leaderHighWatermark, logStartOffset, logEndOffset)
	return f.highWatermark
}

// Truncated follows a local truncation to logEndOffset: a HW above the new
// LEO comes down to it.
func (f *FollowerState) Truncated(logEndOffset int64) int64 {
	f.highWatermark = min(f.highWatermark, logEndOffset)
	return f.highWatermark
}

func clampOffset(o, lo, hi int64) int64 {
	switch {
	case o < lo:
		return lo
	case o > hi:
		return hi
	}
	return o
}

// FollowerStart is where a partition starts when this broker begins to follow
// (ReplicaManager.makeFollowers and the fetcher's initial state,
// AbstractFetcherThread.addPartitions).
type FollowerStart struct {
	// FetchOffset is the initial fetch offset.
	FetchOffset int64
	// Truncating: resolve divergence before fetching. With
	// TruncateToHighWatermark the follower has no epoch information and
	// truncates to FetchOffset (its HW) at once; otherwise it asks
	// OffsetForLeaderEpoch about its latest epoch and applies
	// OffsetTruncation until Completed.
	Truncating              bool
	TruncateToHighWatermark bool
}

// StartFollowing decides FollowerStart. truncateOnFetch is true at IBP >=
// 2.7-IV1 (Fetch v12+, kbroker's normal case). A follower never truncates
// to its HW while it has leader epochs: it keeps everything until the
// leader says where its log diverges (KIP-101).
func StartFollowing(cache *logstore.EpochCache, truncateOnFetch bool, logEndOffset, highWatermark int64) FollowerStart {
	hasEpochs := cache.LatestEpoch() != UndefinedEpoch
	switch {
	case truncateOnFetch && hasEpochs:
		return FollowerStart{FetchOffset: logEndOffset}
	case !hasEpochs:
		return FollowerStart{FetchOffset: min(highWatermark, logEndOffset), Truncating: true, TruncateToHighWatermark: true}
	}
	return FollowerStart{FetchOffset: min(highWatermark, logEndOffset), Truncating: true}
}
