package replica

import (
	"time"

	"github.com/kbroker/kbroker/logstore"
)

// FetchWaitPartition is one partition of a parked fetch, as requested.
type FetchWaitPartition struct {
	TopicPartition TopicPartition
	FetchOffset    int64
	MaxBytes       int64
	// LastFetchedEpoch is the Fetch v12+ field, -1 when absent.
	LastFetchedEpoch int32
}

// FetchWaitState is the partition's state at a check (DelayedFetch reads it
// through fetchOffsetSnapshot).
type FetchWaitState struct {
	// Gone: no longer leader (or replica, for a follower-tolerant fetch),
	// unknown partition, offline log dir, or the request's leader epoch is
	// now fenced — DelayedFetch cases A to E. The fetch answers at once
	// and the re-read reports the error.
	Gone bool
	// EndOffset is the end the fetch may read to: the LEO for a follower,
	// the HW for a consumer (so a moving HW is what wakes consumers), the
	// last stable offset for read_committed.
	EndOffset int64
	// EndOnNewerSegment: the end offset lies on a newer segment than the
	// fetch offset (the fetch is behind the active segment, or a segment
	// was just rolled) — case F.
	EndOnNewerSegment bool
	// BytesAvailable is the number of bytes between the fetch offset and
	// the end offset when both are on the same segment.
	BytesAvailable int64
	// Cache and LogEndOffset are the leader's, for the LastFetchedEpoch
	// check (case H: the leader truncated while the fetch waited); Cache
	// nil skips it.
	Cache        *logstore.EpochCache
	LogEndOffset int64
}

// FetchWaitReason says why a delayed fetch completed.
type FetchWaitReason int

const (
	FetchWaiting           FetchWaitReason = iota // not complete
	FetchPartitionGone                            // cases A–E
	FetchTruncatedOrBehind                        // case F
	FetchDiverged                                 // case H
	FetchMinBytes                                 // case G
	FetchTimedOut                                 // max_wait_ms elapsed
)

// DelayedFetch is a parked fetch (Kafka's DelayedFetch.tryComplete): it
// completes early when any partition is gone, the leader's log was truncated
// below the fetch offset or the fetch is on an older segment, a diverging
// epoch appeared, or the readable bytes (each partition capped at its max
// bytes) reach MinBytes; otherwise at its deadline (max_wait_ms), answering
// with whatever is there.
type DelayedFetch struct {
	MinBytes   int64
	Deadline   time.Time
	Partitions []FetchWaitPartition
}

// TryComplete is DelayedFetch.tryComplete plus the expiry check; state(i)
// is the current state of d.Partitions[i].
func (d *DelayedFetch) TryComplete(state func(i int) FetchWaitState, now time.Time) FetchWaitReason {
	var accumulated int64
	for i, p := range d.Partitions {
		st := state(i)
		if st.Gone {
			return FetchPartitionGone
		}
		switch {
		case p.FetchOffset > st.EndOffset:
			return FetchTruncatedOrBehind
		case p.FetchOffset < st.EndOffset && st.EndOnNewerSegment:
			return FetchTruncatedOrBehind
		case p.FetchOffset < st.EndOffset:
			accumulated += min(st.BytesAvailable, p.MaxBytes)
		}
		if st.Cache != nil && p.LastFetchedEpoch >= 0 {
			end := endOffsetFor(st.Cache, p.LastFetchedEpoch, st.LogEndOffset)
			if end.LeaderEpoch == UndefinedEpoch || end.EndOffset == UndefinedEpochOffset ||
				end.LeaderEpoch < p.LastFetchedEpoch || end.EndOffset < p.FetchOffset {
				return FetchDiverged
			}
		}
	}
	if accumulated >= d.MinBytes {
		return FetchMinBytes
	}
	if !now.Before(d.Deadline) {
		return FetchTimedOut
	}
	return FetchWaiting
}
