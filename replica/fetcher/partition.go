package fetcher

import (
	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// Partition is what the fetcher needs of a local follower replica. The
// broker implements it on replica.Partition. While a partition is in a
// fetcher, the fetcher is the only writer of its log: the broker must
// RemovePartitions before it makes the partition a leader or deletes it.
// Implementations must be comparable (a pointer): re-adding the same
// partition in the same leader epoch keeps its fetch state.
type Partition interface {
	Topic() string
	Index() int32
	// TopicID is the topic's id; all zero when unknown, which caps Fetch at
	// v12 (names instead of ids).
	TopicID() [16]byte
	// CurrentLeaderEpoch is the leader epoch from the latest LeaderAndIsr,
	// sent as CurrentLeaderEpoch so that the leader fences stale followers
	// (KIP-320). A change of it resets the partition's fetch state.
	CurrentLeaderEpoch() int32

	LogStartOffset() int64
	LogEndOffset() int64
	// HighWatermark is the follower's own HW: the truncation point when its
	// epoch cache is empty (nothing else is known to be committed).
	HighWatermark() int64
	// LeaderEpochEntries is the log's leader-epoch cache, ascending.
	LeaderEpochEntries() []logstore.EpochEntry

	// AppendAsFollower appends the leader's batches unchanged (same offsets,
	// same PartitionLeaderEpoch); the log adds epoch cache entries.
	AppendAsFollower(batches []logstore.Batch) (logstore.AppendInfo, error)
	// TruncateTo removes every record at or above offset, trims the epoch
	// cache, and lowers the follower HW to the new LEO
	// (FollowerState.Truncated).
	TruncateTo(offset int64) error
	// TruncateFullyAndStartAt empties the log and restarts it at offset
	// (the leader's log start is above our LEO).
	TruncateFullyAndStartAt(offset int64) error
	// SetLeaderHighWatermark applies a fetch response after its records
	// were appended (UnifiedLog.maybeIncrementLogStartOffset and
	// updateHighWatermark): the log start offset moves up to
	// leaderLogStartOffset if that is higher, and the follower HW becomes
	// min(leaderHighWatermark, own LEO), never below the log start
	// (FollowerState.ApplyFetchResponse). A negative leaderLogStartOffset
	// means unknown.
	SetLeaderHighWatermark(leaderHighWatermark, leaderLogStartOffset int64)
}

func topicPartitionOf(p Partition) replica.TopicPartition {
	return replica.TopicPartition{Topic: p.Topic(), Partition: p.Index()}
}
