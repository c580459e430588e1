package server

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/server/group"
)

// The group coordinator keeps its state in __consumer_offsets, Kafka's
// compacted internal topic, so committed offsets and group metadata survive
// restarts: on start every hosted partition of the topic is replayed.

// offsetsTopicConfigs are the overrides Kafka gives __consumer_offsets.
func (b *Broker) offsetsTopicConfigs() map[string]string {
	return map[string]string{
		"cleanup.policy":   "compact",
		"compression.type": "producer",
		"segment.bytes":    strconv.Itoa(100 << 20),
	}
}

// ensureOffsetsTopic creates __consumer_offsets on first use (Kafka creates
// it lazily, on the first FindCoordinator) and loads its partitions into the
// coordinator.
func (b *Broker) ensureOffsetsTopic() error {
	return b.ensureInternalTopic(offsetsTopic, b.cfg.OffsetsTopicNumPartitions, b.cfg.OffsetsTopicReplicationFactor,
		func(int16) map[string]string { return b.offsetsTopicConfigs() })
}

// ensureInternalTopic creates a coordinator's topic with no more replicas
// than live brokers: Kafka would refuse until enough brokers are up, which
// a cluster of one never has. configs gets the replication factor chosen.
// LeaderAndIsr then hands this broker the partitions it leads.
func (b *Broker) ensureInternalTopic(name string, partitions int32, replicationFactor int16, configs func(rf int16) map[string]string) error {
	if b.topic(name) != nil {
		return nil
	}
	rf := max(1, min(replicationFactor, int16(len(b.cluster.liveBrokers()))))
	_, err := b.createTopic(CreateTopicRequest{
		Name:              name,
		NumPartitions:     partitions,
		ReplicationFactor: rf,
		Configs:           configs(rf),
		Auto:              true,
	})
	if err != nil && err != kerr.TopicAlreadyExists {
		return err
	}
	return nil
}

// offsetsLog stores the coordinator's records in __consumer_offsets.
type offsetsLog struct{ b *Broker }

var _ group.OffsetsLog = offsetsLog{}

// Append writes the coordinator's non-transactional records as one batch
// with no producer id.
func (o offsetsLog) Append(ctx context.Context, partition int32, records []group.KV) (int64, error) {
	return o.append(ctx, partition, logstore.BatchOptions{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, 0, records)
}

// AppendTransactional writes TxnOffsetCommit records as one transactional
// batch of the producer with base sequence 0, as Kafka's
// GroupMetadataManager builds it: the log checks a coordinator's batch for
// the producer epoch only, since its sequence means nothing. Like a
// producer's batch, it opens the producer's transaction in the partition
// only with the guard of a verification still in force.
func (o offsetsLog) AppendTransactional(ctx context.Context, partition int32, producerID int64, producerEpoch int16, guard group.VerificationGuard, records []group.KV) (int64, error) {
	return o.append(ctx, partition, logstore.BatchOptions{
		ProducerID:    producerID,
		ProducerEpoch: producerEpoch,
		BaseSequence:  0,
		Transactional: true,
	}, uint64(guard), records)
}

func (o offsetsLog) append(ctx context.Context, partition int32, opts logstore.BatchOptions, guard uint64, records []group.KV) (int64, error) {
	p := o.b.offsetsPartition(partition)
	if p == nil {
		return 0, kerr.NotCoordinator
	}
	now := o.b.now().UnixMilli()
	recs := make([]logstore.Record, len(records))
	for i, r := range records {
		recs[i] = logstore.Record{Key: r.Key, Value: r.Value, Timestamp: now}
	}
	// acks=1 at the append: the group coordinator's writes skip the
	// min.insync.replicas gate before appending, as they always have here;
	// the wait for the ISR is what makes a commit acks=-1, like Kafka's.
	info, err := o.b.coordinatorAppend(ctx, p, opts, recs, 1, guard, offsetCommitTimeout)
	if err != nil {
		return 0, err
	}
	return info.FirstOffset, nil
}

// offsetCommitTimeout is offsets.commit.timeout.ms.
const offsetCommitTimeout = 5 * time.Second

// offsetsPartition is this broker's replica of a __consumer_offsets
// partition when it leads it.
func (b *Broker) offsetsPartition(partition int32) *replica.Partition {
	return b.leaderReplica(offsetsTopic, partition)
}

// Replay reads the partition from its start to its high watermark, a
// megabyte at a time, and hands the coordinator each batch with its
// producer, transactional bit and, for transaction markers, the outcome.
func (o offsetsLog) Replay(partition int32, fn func(group.ReplayedBatch) error) error {
	p := o.b.offsetsPartition(partition)
	if p == nil {
		return kerr.NotCoordinator
	}
	return replayBatches(p, func(h *logstore.BatchHeader, recs []kmsg.Record) error {
		if len(recs) == 0 {
			return nil // emptied by compaction
		}
		rb := group.ReplayedBatch{
			BaseOffset:    h.BaseOffset + int64(recs[0].OffsetDelta),
			ProducerID:    h.ProducerID,
			Transactional: h.IsTransactional(),
			Control:       h.IsControl(),
		}
		if rb.Control {
			// Kafka's loader ends the transaction as aborted on every
			// type but COMMIT.
			t, err := logstore.DecodeControlKey(recs[0].Key)
			if err != nil {
				return fmt.Errorf("__consumer_offsets-%d offset %d: %w", partition, rb.BaseOffset, err)
			}
			rb.Commit = t == logstore.ControlCommit
		} else {
			rb.Records = make([]group.KV, len(recs))
			for i, r := range recs {
				rb.Records[i] = group.KV{Key: r.Key, Value: r.Value}
			}
		}
		return fn(rb)
	})
}

// coordinatorFor names the group coordinator for key: the leader of its
// __consumer_offsets partition; -1 when the leader is not known or has no
// endpoint on the listener.
func (b *Broker) coordinatorFor(key, listener string) (int32, string, int32) {
	return b.partitionLeaderOn(TopicPartition{offsetsTopic, b.groups.PartitionFor(key)}, listener)
}
