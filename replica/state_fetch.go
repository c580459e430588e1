package replica

import (
	"slices"
	"time"
)

// FollowerFetchResult says what a follower fetch changed on the leader.
type FollowerFetchResult struct {
	// HighWatermarkMoved: complete delayed produces and fetches.
	HighWatermarkMoved bool
	// IsrExpansion, when set, is the ISR change to write to the state
	// znode (conditional on its PartitionEpoch); then report the outcome
	// with CompleteIsrChange or FailIsrChange.
	IsrExpansion *IsrChange
}

// UpdateFollowerFetch records a fetch from follower replicaID that was served
// (not one replayed from purgatory, and not one answered with a diverging
// epoch): fetchOffset is the follower's LEO, now the fetch's arrival,
// leaderLogEndOffset the leader's LEO read before the records were read.
// (Partition.updateFollowerFetchState.)
func (s *LeaderState) UpdateFollowerFetch(replicaID int32, fetchOffset, followerLogStartOffset int64, now time.Time, leaderLogEndOffset int64) (FollowerFetchResult, error) {
	if !s.isLeader {
		return FollowerFetchResult{}, ErrNotLeader
	}
	f, ok := s.followers[replicaID]
	if !ok {
		return FollowerFetchResult{}, ErrUnknownReplica
	}
	prevLogEndOffset := f.LogEndOffset

	// A follower is caught up only when it reached the leader's LEO as of
	// this fetch, or as of its previous fetch (then as of that fetch's time):
	// one that fetches constantly but slower than the inflow never is, and
	// falls out of the ISR (Replica.updateFetchStateOrThrow).
	switch {
	case fetchOffset >= leaderLogEndOffset:
		f.LastCaughtUpTime = later(f.LastCaughtUpTime, now)
	case fetchOffset >= f.LastFetchLeaderLogEndOffset:
		f.LastCaughtUpTime = later(f.LastCaughtUpTime, f.LastFetchTime)
	}
	f.LogStartOffset = followerLogStartOffset
	f.LogEndOffset = fetchOffset
	f.LastFetchLeaderLogEndOffset = max(f.LastFetchLeaderLogEndOffset, leaderLogEndOffset)
	f.LastFetchTime = now

	if until, ok := s.refusedUntil[replicaID]; ok && !now.Before(until) {
		delete(s.refusedUntil, replicaID)
	}
	// Expansion first, as Kafka does: a pending expansion puts the
	// follower in the maximal ISR, which the HW below then waits for.
	var res FollowerFetchResult
	if c := s.MaybeExpandIsr(replicaID); c != nil {
		res.IsrExpansion = c
	}
	if prevLogEndOffset != f.LogEndOffset {
		res.HighWatermarkMoved = s.MaybeIncrementHighWatermark(now)
	}
	return res, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// MaybeIncrementHighWatermark is 3.9's maybeIncrementLeaderHW: nothing while
// the committed ISR is below the effective min ISR (KAFKA-15583); otherwise
// the HW becomes the smallest LEO among the leader, the maximal ISR, and the
// followers that are caught up and ISR-eligible though not in the ISR — those
// hold the HW back so that they can reach it and rejoin, which a follower
// chasing a fast leader could never do otherwise. The HW never moves
// backwards. Reports whether it moved.
func (s *LeaderState) MaybeIncrementHighWatermark(now time.Time) bool {
	if !s.isLeader || s.IsUnderMinIsr() {
		return false
	}
	maximal := s.maximalIsr()
	candidate := s.logEndOffset
	for id, f := range s.followers {
		if f.LogEndOffset >= candidate {
			continue
		}
		// A silent follower (isr.go) holds nothing back: it left the ISR
		// for its silence, and waiting for it here would stall acks=all
		// writes just the same until the lag time ran out.
		waitFor := slices.Contains(maximal, id) ||
			(f.isCaughtUp(s.logEndOffset, now, s.cfg.ReplicaLagTimeMax) && !s.silent(f, now) && s.isIsrEligible(id))
		if waitFor {
			candidate = f.LogEndOffset
		}
	}
	if candidate <= s.highWatermark {
		return false
	}
	s.highWatermark = candidate
	return true
}
