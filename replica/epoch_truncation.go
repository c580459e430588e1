package replica

import "github.com/kbroker/kbroker/logstore"

// Truncation is a follower's decision after the leader told it where an
// epoch ends (OffsetForLeaderEpoch answer, or a Fetch v12+ DivergingEpoch).
type Truncation struct {
	// Offset is where the follower truncates its log (and its epoch cache,
	// TruncateFromEnd). It is never above the follower's LEO; equal to it
	// means nothing is cut. It may be below the HW (Kafka logs a warning).
	Offset int64
	// Completed is false when the leader answered with an epoch the follower
	// never had: the follower cut back to the end of its own largest epoch
	// below it and must ask again with its new latest epoch (KIP-279). With
	// truncation on fetch (Fetch v12+) the next fetch's diverging-epoch check
	// plays the same role.
	Completed bool
}

// OffsetTruncation is AbstractFetcherThread.getOffsetTruncationState
// (KIP-101, KIP-279): what a follower whose log ends at logEndOffset and
// whose epoch cache is cache does with the leader's answer.
// initialFetchOffset is the offset the follower would fetch from without
// epoch information (its HW in the truncating state, its fetch offset on a
// diverging fetch).
func OffsetTruncation(cache *logstore.EpochCache, logEndOffset, initialFetchOffset int64, leader EpochEndOffset) Truncation {
	switch {
	case leader.EndOffset == UndefinedEpochOffset:
		// The leader has no epoch information (old message format): the
		// only safe point left is the HW (pre-KIP-101 behaviour).
		return Truncation{Offset: initialFetchOffset, Completed: true}
	case leader.LeaderEpoch == UndefinedEpoch:
		// A v0 answer (IBP < 2.0) carries an offset but no epoch.
		return Truncation{Offset: min(leader.EndOffset, logEndOffset), Completed: true}
	}
	own := endOffsetFor(cache, leader.LeaderEpoch, logEndOffset)
	switch {
	case own.EndOffset == UndefinedEpochOffset:
		// We were not tracking epochs then; the leader answered with an
		// epoch <= ours, so its end offset is safe (KIP-101 before KIP-279).
		return Truncation{Offset: min(leader.EndOffset, logEndOffset), Completed: true}
	case own.LeaderEpoch != leader.LeaderEpoch:
		// KIP-279: we never had the leader's epoch. Everything we wrote
		// after our largest smaller epoch may diverge; cut there and ask
		// again about that epoch.
		return Truncation{Offset: min(own.EndOffset, logEndOffset), Completed: false}
	default:
		return Truncation{Offset: min(own.EndOffset, leader.EndOffset, logEndOffset), Completed: true}
	}
}

// FetchEpochCheck is the leader's verdict on a Fetch v12+ partition's
// LastFetchedEpoch (Partition.readRecords, KIP-320).
type FetchEpochCheck int

const (
	// FetchEpochOK: read records normally.
	FetchEpochOK FetchEpochCheck = iota
	// FetchEpochOffsetOutOfRange: answer OFFSET_OUT_OF_RANGE.
	FetchEpochOffsetOutOfRange
	// FetchEpochDiverging: answer no records and DivergingEpoch; the
	// leader must not update the follower's fetch state.
	FetchEpochDiverging
)

// CheckLastFetchedEpoch decides a fetch at fetchOffset whose last fetched
// epoch is lastFetchedEpoch, against the leader's cache and log bounds. The
// returned EpochEndOffset is the DivergingEpoch to send when diverging. A
// negative lastFetchedEpoch means the field was absent: no check.
func CheckLastFetchedEpoch(cache *logstore.EpochCache, logStartOffset, logEndOffset int64, lastFetchedEpoch int32, fetchOffset int64) (FetchEpochCheck, EpochEndOffset) {
	if lastFetchedEpoch < 0 {
		return FetchEpochOK, EpochEndOffset{}
	}
	end := endOffsetFor(cache, lastFetchedEpoch, logEndOffset)
	return checkEpochEnd(end, logStartOffset, lastFetchedEpoch, fetchOffset), end
}

// checkEpochEnd is CheckLastFetchedEpoch once the leader's epoch cache has
// said where lastFetchedEpoch ends: the live leader asks its log's cache
// rather than building an epoch cache per fetch.
func checkEpochEnd(end EpochEndOffset, logStartOffset int64, lastFetchedEpoch int32, fetchOffset int64) FetchEpochCheck {
	switch {
	case end.LeaderEpoch == UndefinedEpoch || end.EndOffset == UndefinedEpochOffset:
		return FetchEpochOffsetOutOfRange
	case fetchOffset < logStartOffset:
		return FetchEpochOffsetOutOfRange
	case end.LeaderEpoch < lastFetchedEpoch || end.EndOffset < fetchOffset:
		return FetchEpochDiverging
	}
	return FetchEpochOK
}
