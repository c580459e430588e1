package txn

import (
	"context"
	"errors"
	"time"
)

// Config holds the transaction coordinator's settings, named after Kafka's
// transaction.* broker properties.
type Config struct {
	// NumPartitions is transaction.state.log.num.partitions (50). It must
	// never change once __transaction_state exists: PartitionFor depends on
	// it.
	NumPartitions int32
	// MaxTransactionTimeout is transaction.max.timeout.ms (15 min): the
	// largest transaction.timeout.ms a producer may ask for.
	MaxTransactionTimeout time.Duration
	// TransactionalIDExpiration is transactional.id.expiration.ms (7 days):
	// how long a transactional id may stay idle (Empty or Complete*) before
	// it is removed with a tombstone.
	TransactionalIDExpiration time.Duration
	// AbortTimedOutInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s).
	AbortTimedOutInterval time.Duration
	// RemoveExpiredInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms (1 h).
	RemoveExpiredInterval time.Duration
	// RequestTimeout is request.timeout.ms (30 s): it bounds one
	// WriteMarker call and one tombstone append, as Kafka's inter-broker
	// send thread and tombstone appends are bounded by it.
	RequestTimeout time.Duration
	// MarkerRetryBackoff is the first wait before markers or a completion
	// append are retried; it doubles up to MarkerRetryBackoffMax. Kafka
	// retries on its send thread's next poll; a backoff keeps a dead leader
	// from turning into a busy loop.
	MarkerRetryBackoff    time.Duration
	MarkerRetryBackoffMax time.Duration
	// TopicPartitionExists is the metadata cache: AddPartitionsToTxn answers
	// UNKNOWN_TOPIC_OR_PARTITION for partitions it does not know (Kafka's
	// KafkaApis.handleAddPartitionsToTxnRequest), and markers for partitions
	// it no longer knows are dropped (deleted topics, Kafka's
	// TransactionMarkerChannelManager.addTxnMarkersToBrokerQueue). Nil means
	// every partition exists. It is called with a transaction's lock held
	// and must not call back into the Coordinator.
	TopicPartitionExists func(topic string, partition int32) bool
}

// Defaults of Kafka 3.9 (TransactionLogConfigs, TransactionStateManagerConfigs,
// ServerConfigs).
const (
	DefaultNumPartitions             = 50
	DefaultMaxTransactionTimeout     = 15 * time.Minute
	DefaultTransactionalIDExpiration = 7 * 24 * time.Hour
	DefaultAbortTimedOutInterval     = 10 * time.Second
	DefaultRemoveExpiredInterval     = time.Hour
	DefaultRequestTimeout            = 30 * time.Second
	DefaultMarkerRetryBackoff        = 100 * time.Millisecond
	DefaultMarkerRetryBackoffMax     = 5 * time.Second
)

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		NumPartitions:             DefaultNumPartitions,
		MaxTransactionTimeout:     DefaultMaxTransactionTimeout,
		TransactionalIDExpiration: DefaultTransactionalIDExpiration,
		AbortTimedOutInterval:     DefaultAbortTimedOutInterval,
		RemoveExpiredInterval:     DefaultRemoveExpiredInterval,
		RequestTimeout:            DefaultRequestTimeout,
		MarkerRetryBackoff:        DefaultMarkerRetryBackoff,
		MarkerRetryBackoffMax:     DefaultMarkerRetryBackoffMax,
	}
}

// withDefaults fills zero fields so a partially filled Config works.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	set := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	if c.NumPartitions <= 0 {
		c.NumPartitions = d.NumPartitions
	}
	set(&c.MaxTransactionTimeout, d.MaxTransactionTimeout)
	set(&c.TransactionalIDExpiration, d.TransactionalIDExpiration)
	set(&c.AbortTimedOutInterval, d.AbortTimedOutInterval)
	set(&c.RemoveExpiredInterval, d.RemoveExpiredInterval)
	set(&c.RequestTimeout, d.RequestTimeout)
	set(&c.MarkerRetryBackoff, d.MarkerRetryBackoff)
	set(&c.MarkerRetryBackoffMax, d.MarkerRetryBackoffMax)
	if c.MarkerRetryBackoffMax < c.MarkerRetryBackoff {
		c.MarkerRetryBackoffMax = c.MarkerRetryBackoff
	}
	return c
}

// KV is one record of __transaction_state. A nil Value is a tombstone.
type KV struct {
	Key, Value []byte
}

// Log is the coordinator's view of the __transaction_state partitions it
// leads. Append returns once the records are committed (acks=all), or with
// an error (a kerr code such as kerr.NotLeaderForPartition,
// kerr.NotEnoughReplicas, kerr.RequestTimedOut, or any other error). The
// records of one call go into one batch. Neither method may call back into
// the Coordinator.
type Log interface {
	Append(ctx context.Context, partition int32, records []KV) error
	// Replay calls fn for every record of the partition in offset order,
	// up to the log end offset as of the call.
	Replay(partition int32, fn func(key, value []byte) error) error
}

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Marker is one transaction marker to write: a WriteTxnMarkers entry.
type Marker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Partitions       []TopicPartition
}

// MarkerWriter sends transaction markers (Kafka's
// TransactionMarkerChannelManager and its network client).
type MarkerWriter interface {
	// WriteMarker sends WriteTxnMarkers for m to each partition's current
	// leader and returns the error of each partition that failed: the
	// partition's kerr code from the response, kerr.LeaderNotAvailable when
	// the partition has no live leader, or a transport error. A nil map
	// means every partition was written. It must honour ctx and must not
	// call back into the Coordinator.
	WriteMarker(ctx context.Context, m Marker) map[TopicPartition]error
}

// ProducerIDs hands out producer ids that were never handed out before
// (Kafka's ProducerIdManager).
type ProducerIDs interface {
	Generate() (int64, error)
}

var errClosed = errors.New("transaction coordinator closed")
