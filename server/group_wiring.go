package server

import (
	"context"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

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
	if b.topic(offsetsTopic) != nil {
		return nil
	}
	// No more replicas than live brokers: Kafka would refuse until enough
	// brokers are up, which a cluster of one never has.
	rf := max(1, min(b.cfg.OffsetsTopicReplicationFactor, int16(len(b.cluster.liveBrokers()))))
	_, err := b.createTopic(CreateTopicRequest{
		Name:              offsetsTopic,
		NumPartitions:     b.cfg.OffsetsTopicNumPartitions,
		ReplicationFactor: rf,
		Configs:           b.offsetsTopicConfigs(),
		Auto:              true,
	})
	if err != nil && err != kerr.TopicAlreadyExists {
		return err
	}
	// LeaderAndIsr hands this broker the partitions it leads.
	return nil
}

// offsetsLog stores the coordinator's records in __consumer_offsets.
type offsetsLog struct{ b *Broker }

var _ group.OffsetsLog = offsetsLog{}

func (o offsetsLog) Append(ctx context.Context, partition int32, records []group.KV) error {
	p := o.b.offsetsPartition(partition)
	if p == nil {
		return kerr.NotCoordinator
	}
	kvs := make([]logstore.KV, len(records))
	for i, r := range records {
		kvs[i] = logstore.KV{Key: r.Key, Value: r.Value}
	}
	batch, err := logstore.BuildBatch(kvs, o.b.now().UnixMilli())
	if err != nil {
		return err
	}
	batches, err := logstore.ParseBatches(batch)
	if err != nil {
		return err
	}
	// acks=1 at the append: the coordinator's writes skip the
	// min.insync.replicas gate before appending, as they always have here;
	// the wait below is what makes a commit acks=-1.
	info, err := p.AppendAsLeader(batches, 1, replica.AppendRules{LogAppendTime: -1})
	if err != nil {
		return err
	}
	// Like Kafka's coordinator, which appends with acks=-1: a commit is
	// acknowledged only once every in-sync replica has it.
	return waitCommitted(ctx, o.b.delayed, p, info.LastOffset+1, offsetCommitTimeout)
}

// offsetCommitTimeout is offsets.commit.timeout.ms.
const offsetCommitTimeout = 5 * time.Second

// waitCommitted waits in the purgatory until the partition's HW reaches
// requiredOffset.
func waitCommitted(ctx context.Context, delayed *delayedOps, p *replica.Partition, requiredOffset int64, timeout time.Duration) error {
	now := delayed.Now()
	op := newDelayedProduce(1, now.Add(timeout))
	op.set(0, p, requiredOffset)
	d := delayed.TryCompleteElseWatch(op, op.parts, now, op.verdict.Deadline)
	select {
	case <-d.Done():
	case <-ctx.Done():
		d.ForceComplete()
	}
	return op.err(0)
}

// offsetsPartition is this broker's replica of a __consumer_offsets
// partition when it leads it, looked up among the hosted replicas: the
// coordinator loads a partition as soon as LeaderAndIsr makes this broker
// its leader, before UpdateMetadata has put the topic in the metadata
// cache.
func (b *Broker) offsetsPartition(partition int32) *replica.Partition {
	p := b.replicas.Get(offsetsTopic, partition)
	if p == nil || !p.IsLeader() {
		return nil
	}
	return p
}

// Replay reads the partition from its start to its high watermark, a
// megabyte at a time.
func (o offsetsLog) Replay(partition int32, fn func(key, value []byte) error) error {
	p := o.b.offsetsPartition(partition)
	if p == nil {
		return kerr.NotCoordinator
	}
	offset := p.LogStartOffset()
	for {
		res, info, err := p.Read(offset, 1<<20, true)
		if err != nil {
			return err
		}
		if res.Len() == 0 || offset >= info.HighWatermark {
			return nil
		}
		data, err := res.Bytes()
		if err != nil {
			return err
		}
		batches, err := logstore.ParseBatches(data)
		if err != nil {
			return err
		}
		for _, bt := range batches {
			offset = bt.Header.LastOffset() + 1
			if bt.Header.IsControl() {
				continue
			}
			recs, err := logstore.DecodeRecords(bt)
			if err != nil {
				return err
			}
			for _, r := range recs {
				if err := fn(r.Key, r.Value); err != nil {
					return err
				}
			}
		}
	}
}

// coordinatorFor names the group coordinator for key: the leader of its
// __consumer_offsets partition; -1 when the leader is not known or has no
// endpoint on the listener.
func (b *Broker) coordinatorFor(key, listener string) (int32, string, int32) {
	return b.partitionLeaderOn(TopicPartition{offsetsTopic, b.groups.PartitionFor(key)}, listener)
}
