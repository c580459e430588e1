package group

import (
	"context"
	"time"
)

// Config holds the group coordinator's settings, named after Kafka's
// group.* and offsets.* broker properties.
type Config struct {
	// OffsetsTopicNumPartitions is offsets.topic.num.partitions (50). It
	// must never change once __consumer_offsets exists: PartitionFor
	// depends on it.
	OffsetsTopicNumPartitions int32
	// GroupInitialRebalanceDelay is group.initial.rebalance.delay.ms (3 s).
	GroupInitialRebalanceDelay time.Duration
	// GroupMinSessionTimeout is group.min.session.timeout.ms (6 s).
	GroupMinSessionTimeout time.Duration
	// GroupMaxSessionTimeout is group.max.session.timeout.ms (30 min).
	GroupMaxSessionTimeout time.Duration
	// GroupMaxSize is group.max.size. Kafka's default is unlimited; we
	// bound it so one group cannot grow without limit.
	GroupMaxSize int
	// OffsetsRetention is offsets.retention.minutes (7 days).
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is offsets.retention.check.interval.ms
	// (10 min).
	OffsetsRetentionCheckInterval time.Duration
	// OffsetCommitTimeout is offsets.commit.timeout.ms (5 s): how long one
	// append to __consumer_offsets may take.
	OffsetCommitTimeout time.Duration
	// OffsetMetadataMaxSize is offset.metadata.max.bytes (4096).
	OffsetMetadataMaxSize int
	// TopicPartitionExists answers OffsetCommit/OffsetDelete with
	// UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist. Nil means
	// every partition exists.
	TopicPartitionExists func(topic string, partition int32) bool
	// VerifyTransaction is KIP-890's check, made before a TxnOffsetCommit
	// is written, that the transaction coordinator has the group's
	// __consumer_offsets partition in the producer's ongoing transaction.
	// Its error (a *kerr.Error) answers every partition of the request,
	// mapped as Kafka maps verification errors. The guard it returns goes
	// with the commit's append (OffsetsLog.AppendTransactional), which the
	// log refuses if the transaction ended in between. Nil skips the check.
	VerifyTransaction func(ctx context.Context, v TxnVerification) (VerificationGuard, error)
}

// VerificationGuard ties a TxnOffsetCommit's append to the verification
// before it (Kafka's VerificationGuard): the confirmation takes a round
// trip to the transaction coordinator, during which the transaction may
// end, and a late commit appended after its transaction's marker would
// open a new transaction in __consumer_offsets whose pending offsets the
// producer's next commit marker would make committed. 0 means no guard:
// none was needed, the producer already having its transaction open there.
type VerificationGuard uint64

// TxnVerification names what VerifyTransaction checks: that Partition of
// __consumer_offsets is in the transaction of the producer.
type TxnVerification struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partition       int32
	// Abortable is set for TxnOffsetCommit v4+, which may answer
	// TRANSACTION_ABORTABLE (KIP-890); older versions get
	// INVALID_TXN_STATE in its place.
	Abortable bool
}

// Defaults of Kafka 3.9 (GroupCoordinatorConfig, OffsetConfig).
const (
	DefaultOffsetsTopicNumPartitions     = 50
	DefaultGroupInitialRebalanceDelay    = 3 * time.Second
	DefaultGroupMinSessionTimeout        = 6 * time.Second
	DefaultGroupMaxSessionTimeout        = 30 * time.Minute
	DefaultGroupMaxSize                  = 10000
	DefaultOffsetsRetention              = 7 * 24 * time.Hour
	DefaultOffsetsRetentionCheckInterval = 10 * time.Minute
	DefaultOffsetCommitTimeout           = 5 * time.Second
	DefaultOffsetMetadataMaxSize         = 4096
)

// newMemberJoinTimeout bounds how long a member that has not yet received a
// member id may sit in a rebalance (Kafka's NewMemberJoinTimeoutMs): such a
// member cannot heartbeat, and a client that gave up and retried would
// otherwise leave a defunct member behind forever.
const newMemberJoinTimeout = 5 * time.Minute

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		OffsetsTopicNumPartitions:     DefaultOffsetsTopicNumPartitions,
		GroupInitialRebalanceDelay:    DefaultGroupInitialRebalanceDelay,
		GroupMinSessionTimeout:        DefaultGroupMinSessionTimeout,
		GroupMaxSessionTimeout:        DefaultGroupMaxSessionTimeout,
		GroupMaxSize:                  DefaultGroupMaxSize,
		OffsetsRetention:              DefaultOffsetsRetention,
		OffsetsRetentionCheckInterval: DefaultOffsetsRetentionCheckInterval,
		OffsetCommitTimeout:           DefaultOffsetCommitTimeout,
		OffsetMetadataMaxSize:         DefaultOffsetMetadataMaxSize,
	}
}

// withDefaults fills zero fields so a partially filled Config works.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.OffsetsTopicNumPartitions <= 0 {
		c.OffsetsTopicNumPartitions = d.OffsetsTopicNumPartitions
	}
	if c.GroupInitialRebalanceDelay < 0 {
		c.GroupInitialRebalanceDelay = 0
	}
	if c.GroupMinSessionTimeout <= 0 {
		c.GroupMinSessionTimeout = d.GroupMinSessionTimeout
	}
	if c.GroupMaxSessionTimeout <= 0 {
		c.GroupMaxSessionTimeout = d.GroupMaxSessionTimeout
	}
	if c.GroupMaxSize <= 0 {
		c.GroupMaxSize = d.GroupMaxSize
	}
	if c.OffsetsRetention <= 0 {
		c.OffsetsRetention = d.OffsetsRetention
	}
	if c.OffsetsRetentionCheckInterval <= 0 {
		c.OffsetsRetentionCheckInterval = d.OffsetsRetentionCheckInterval
	}
	if c.OffsetCommitTimeout <= 0 {
		c.OffsetCommitTimeout = d.OffsetCommitTimeout
	}
	if c.OffsetMetadataMaxSize <= 0 {
		c.OffsetMetadataMaxSize = d.OffsetMetadataMaxSize
	}
	return c
}

// KV is one record of __consumer_offsets. A nil Value is a tombstone.
type KV struct {
	Key, Value []byte
}

// OffsetsLog is the coordinator's view of the __consumer_offsets partitions
// it leads. The appends return once the records are committed (acks=all
// semantics); only then does the coordinator acknowledge a commit or a
// rebalance. They return the base offset of the batch they wrote: which of
// two commits of one partition is newer is decided by where they are in the
// log, as Kafka's CommitRecordMetadataAndOffset.olderThan does. No method
// may call back into the Coordinator.
type OffsetsLog interface {
	// Append writes records as one non-transactional batch.
	Append(ctx context.Context, partition int32, records []KV) (int64, error)
	// AppendTransactional writes records as one transactional batch of the
	// producer (base sequence 0, as Kafka's GroupMetadataManager writes
	// TxnOffsetCommit records); they count only once a commit marker of the
	// producer follows them. The batch is refused (INVALID_TXN_STATE) when
	// it would open the producer's transaction in the partition and guard
	// is not the one still in force there.
	AppendTransactional(ctx context.Context, partition int32, producerID int64, producerEpoch int16, guard VerificationGuard, records []KV) (int64, error)
	// Replay calls fn for every batch of the partition in offset order,
	// control batches included.
	Replay(partition int32, fn func(ReplayedBatch) error) error
}

// ReplayedBatch is one batch of __consumer_offsets as Replay reads it.
type ReplayedBatch struct {
	// BaseOffset is the offset of the batch's first record.
	BaseOffset int64
	// ProducerID is -1 for the coordinator's own non-transactional writes.
	ProducerID int64
	// Transactional batches hold TxnOffsetCommit records of ProducerID.
	Transactional bool
	// Control batches are transaction markers and carry no Records: Commit
	// says whether ProducerID's transaction committed or aborted.
	Control bool
	Commit  bool
	Records []KV
}
