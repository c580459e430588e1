package replica

import "github.com/kbroker/kbroker/logstore"

// The epoch cache itself is the log's (logstore.EpochCache, persisted as
// leader-epoch-checkpoint); the rules here take a copy of it so that they
// decide without IO.

// UndefinedEpoch and UndefinedEpochOffset are OffsetForLeaderEpoch's
// "unknown" answers, as the log's epoch cache gives them.
const (
	UndefinedEpoch       = logstore.UndefinedEpoch
	UndefinedEpochOffset = logstore.UndefinedEpochOffset
)

// EpochEndOffset is an OffsetForLeaderEpoch answer, and the DivergingEpoch
// of a Fetch v12+ response: the largest epoch <= the requested one that the
// answering replica knows, and the offset where that epoch ends.
type EpochEndOffset struct {
	LeaderEpoch int32
	EndOffset   int64
}

// endOffsetFor is cache.EndOffsetFor as an EpochEndOffset.
func endOffsetFor(cache *logstore.EpochCache, requested int32, logEndOffset int64) EpochEndOffset {
	e, o := cache.EndOffsetFor(requested, logEndOffset)
	return EpochEndOffset{LeaderEpoch: e, EndOffset: o}
}
