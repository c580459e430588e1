package logstore

import (
	"errors"
	"io"
	"time"

	"github.com/kbroker/kbroker/logstore/producerstate"
)

// Log is one partition's log: an ordered sequence of magic-v2 record batches
// with contiguous offsets starting at LogStartOffset. FileLog writes Kafka's
// own on-disk format; logstore's tests hold MemLog, an in-memory model of it
// (memlog_test.go), and both pass the same conformance suite
// (conformance_test.go).
//
// A Log is safe for concurrent use: appends are serialised inside the log,
// reads never block appends for longer than it takes to snapshot the segment
// list.
type Log interface {
	// AppendAsLeader assigns offsets starting at LogEndOffset to batches that
	// ParseBatches already validated, rewriting each batch's baseOffset and
	// stamping leaderEpoch into PartitionLeaderEpoch (both outside the CRC).
	// When logAppendTime >= 0, every batch's maxTimestamp is set to it and its
	// timestamp-type bit is set, recomputing the CRC, as Kafka does for topics
	// with message.timestamp.type=LogAppendTime.
	// A batch with a producer id is first checked against the producer
	// table under the same lock: a retried batch is not appended again
	// (AppendInfo.Duplicate), an epoch or sequence out of place is a kerr
	// error (INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER).
	// It is AppendAsLeaderFrom for a client's batches.
	AppendAsLeader(batches []Batch, leaderEpoch int32, logAppendTime int64) (AppendInfo, error)

	// AppendAsLeaderFrom is AppendAsLeader for batches of origin: a
	// coordinator's (OriginCoordinator) are checked for their producer
	// epoch and transaction state only, never for sequence or duplicates
	// (Kafka's AppendOrigin.COORDINATOR).
	AppendAsLeaderFrom(batches []Batch, leaderEpoch int32, logAppendTime int64, origin AppendOrigin) (AppendInfo, error)

	// AppendMarkerAsLeader writes a transaction marker (a control batch,
	// Kafka's EndTransactionMarker) for the transaction coordinator,
	// stamped with timestamp. It is refused with INVALID_PRODUCER_EPOCH
	// for an epoch older than the producer's and with
	// TRANSACTION_COORDINATOR_FENCED for a coordinator epoch older than
	// the last marker's. It ends the producer's transaction; an abort is
	// recorded in the transaction index of the segment the marker lands in.
	AppendMarkerAsLeader(m Marker, leaderEpoch int32, timestamp int64) (AppendInfo, error)

	// LastStableOffset is the offset below which every transaction is
	// decided and its marker replicated, given the partition's high
	// watermark: min(highWatermark, first unstable offset), where a
	// transaction is unstable while it has no marker or its marker is at
	// or above the high watermark (Kafka's UnifiedLog.lastStableOffset).
	// It never goes below the log start offset.
	LastStableOffset(highWatermark int64) int64
	// HasOngoingTransaction reports whether producerID has a transaction
	// open in this log: its later batches need no verification with the
	// coordinator (KIP-890), its first one does.
	HasOngoingTransaction(producerID int64) bool

	// AbortedTransactions lists the aborted transactions that overlap
	// [fetchOffset, upperBoundOffset): those whose marker is at or after
	// fetchOffset and whose first offset is before upperBoundOffset, from
	// the transaction indexes of the segment holding fetchOffset on
	// (Kafka's UnifiedLog.collectAbortedTransactions), ascending by marker.
	AbortedTransactions(fetchOffset, upperBoundOffset int64) ([]AbortedTxn, error)

	// AppendAsFollower appends batches whose offsets were assigned by a
	// leader. The first batch's base offset must equal LogEndOffset. The
	// producer table is updated without checks: the leader made them.
	AppendAsFollower(batches []Batch) (AppendInfo, error)

	// ActiveProducers copies the producer table (DescribeProducers), by
	// ascending producer id. Every append, a leader's or a follower's,
	// updates the table; truncations rebuild it, retention and
	// DeleteRecords drop producers whose batches are all gone, and
	// Maintain expires those idle for producer.id.expiration.ms.
	ActiveProducers() []producerstate.Producer

	// Read returns batches starting with the one that holds startOffset, up
	// to maxBytes, never including a batch whose base offset is >= maxOffset
	// (the high watermark for consumers). When minOneBatch is true the first
	// batch is returned whole even if it exceeds maxBytes (KIP-74).
	// A startOffset outside [LogStartOffset, LogEndOffset] gives
	// ErrOffsetOutOfRange; startOffset >= maxOffset gives an empty result.
	Read(startOffset, maxOffset int64, maxBytes int, minOneBatch bool) (ReadResult, error)

	LogStartOffset() int64
	LogEndOffset() int64
	// Size is the total size of the log's segments in bytes.
	Size() int64

	// OffsetForTimestamp returns the offset and timestamp of the first record
	// whose timestamp is >= ts (ListOffsets by timestamp). found is false when
	// no record qualifies.
	OffsetForTimestamp(ts int64) (offset, timestamp int64, found bool, err error)
	// MaxTimestamp returns the largest timestamp in the log and the offset of
	// the record that carries it (ListOffsets -3, KIP-734); -1, -1 when empty.
	MaxTimestamp() (timestamp, offset int64)

	// DeleteRecordsBefore advances the log start offset (DeleteRecords API):
	// whole segments below it are deleted, the rest stays until retention.
	DeleteRecordsBefore(offset int64) error
	// TruncateTo removes every record at or above offset (follower truncation).
	TruncateTo(offset int64) error
	// TruncateFullyAndStartAt empties the log and restarts it at offset.
	TruncateFullyAndStartAt(offset int64) error

	// SetConfig replaces the per-topic settings (segment size, retention,
	// cleanup policy ...) after an AlterConfigs.
	SetConfig(Config)
	Config() Config

	// Maintain applies retention (time and size, whole segments only) and,
	// for cleanup.policy=compact, compaction. It is called periodically by the
	// Manager; now is injected so tests control time.
	Maintain(now time.Time) error

	// Flush fsyncs everything appended so far and advances the recovery point.
	Flush() error
	// RecoveryPoint is the offset below which everything is known flushed.
	RecoveryPoint() int64
	Close() error
	// Delete closes the log and removes its data.
	Delete() error

	// LeaderEpochEntries is the leader-epoch cache: for each leader epoch
	// the first offset written in it, ascending (leader-epoch-checkpoint).
	// Appends add an entry when a batch carries an epoch newer than the
	// latest; truncations trim it.
	LeaderEpochEntries() []EpochEntry
	// EndOffsetForEpoch answers OffsetForLeaderEpoch following Kafka's
	// LeaderEpochFileCache.endOffsetFor: the largest epoch <= epoch and the
	// start offset of the next epoch (the log end offset for the latest
	// epoch); (-1, -1) when unknown.
	EndOffsetForEpoch(epoch int32) (leaderEpoch int32, endOffset int64)
	// AssignLeaderEpoch records that leader epoch epoch starts at
	// startOffset, as a new leader does at election before any append
	// (KAFKA-7415); an epoch not newer than the latest entry is ignored.
	AssignLeaderEpoch(epoch int32, startOffset int64) error
}

// AppendOrigin is who wrote a leader's batches (Kafka's AppendOrigin):
// a producer's Produce request, or this broker's group or transaction
// coordinator.
type AppendOrigin = producerstate.Origin

const (
	OriginClient      = producerstate.OriginClient
	OriginCoordinator = producerstate.OriginCoordinator
)

// Config holds the per-topic log settings, named after the topic-level
// configs (segment.bytes, segment.ms, retention.ms, retention.bytes,
// cleanup.policy, flush.messages, flush.ms, message.timestamp.type ...).
type Config struct {
	SegmentBytes       int64
	SegmentMs          int64
	RetentionMs        int64 // -1 = forever
	RetentionBytes     int64 // -1 = unlimited
	CleanupPolicy      string
	FlushMessages      int64
	FlushMs            int64
	IndexIntervalBytes int
	MaxIndexBytes      int
	DeleteRetentionMs  int64
	MinCompactionLagMs int64
}

// DefaultConfig returns Kafka's broker defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       1 << 30,
		SegmentMs:          7 * 24 * 3600 * 1000,
		RetentionMs:        7 * 24 * 3600 * 1000,
		RetentionBytes:     -1,
		CleanupPolicy:      "delete",
		FlushMessages:      1<<63 - 1,
		FlushMs:            1<<63 - 1,
		IndexIntervalBytes: 4096,
		MaxIndexBytes:      10 << 20,
		DeleteRetentionMs:  24 * 3600 * 1000,
		MinCompactionLagMs: 0,
	}
}

// AppendInfo describes a completed append.
type AppendInfo struct {
	FirstOffset   int64
	LastOffset    int64
	LogAppendTime int64 // -1 unless LogAppendTime was applied
	MaxTimestamp  int64
	Bytes         int
	// Duplicate is set when AppendAsLeader recognised a retried batch of an
	// idempotent producer: nothing was appended, and FirstOffset and
	// LastOffset are where the batch went the first time.
	Duplicate bool
}

// ReadResult is a view of log bytes: record batches, whole, in offset order.
// For a FileLog it refers to ranges of segment files so that WriteTo can
// hand them to the kernel (sendfile) without copying them through user
// space; the test model's holds bytes.
type ReadResult interface {
	// Len is the number of bytes WriteTo will write.
	Len() int
	// WriteTo writes the bytes to w; when w is a *net.TCPConn and the data
	// lives in files it uses sendfile.
	WriteTo(w io.Writer) (int64, error)
	// Bytes copies the data into memory (tests, compaction, followers).
	Bytes() ([]byte, error)
}

var (
	ErrOffsetOutOfRange = errors.New("offset out of range")
	ErrCorruptMessage   = errors.New("corrupt message")
	ErrInvalidRecord    = errors.New("invalid record")
	ErrUnsupportedMagic = errors.New("unsupported record batch magic")
	ErrRecordTooLarge   = errors.New("record batch too large")
	ErrClosed           = errors.New("log closed")
)
