package server

import (
	"context"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/server/txn"
)

// The transaction coordinator keeps its state in __transaction_state,
// Kafka's compacted internal topic: the coordinator of a transactional id
// is the leader of its partition, which it replays when it becomes leader.

const txnTopic = "__transaction_state"

// txnTopicConfigs are the overrides Kafka gives __transaction_state
// (TransactionStateManager.transactionTopicConfigs). min.insync.replicas
// is at most the replication factor, so that a cluster smaller than the
// configured factor can still commit transactions.
func (b *Broker) txnTopicConfigs(rf int16) map[string]string {
	return map[string]string{
		"cleanup.policy":                 "compact",
		"compression.type":               "uncompressed",
		"unclean.leader.election.enable": "false",
		"min.insync.replicas":            strconv.Itoa(int(min(b.cfg.TransactionStateLogMinIsr, int32(rf)))),
		"segment.bytes":                  strconv.Itoa(int(b.cfg.TransactionStateLogSegmentBytes)),
	}
}

// ensureTxnTopic creates __transaction_state on first use, as Kafka does on
// the first FindCoordinator for a transactional id.
func (b *Broker) ensureTxnTopic() error {
	return b.ensureInternalTopic(txnTopic, b.cfg.TransactionStateLogNumPartitions, b.cfg.TransactionStateLogReplicationFactor, b.txnTopicConfigs)
}

// txnLog stores the transaction coordinator's records in
// __transaction_state.
type txnLog struct{ b *Broker }

var _ txn.Log = txnLog{}

func (l txnLog) Append(ctx context.Context, partition int32, records []txn.KV) error {
	p := l.b.leaderReplica(txnTopic, partition)
	if p == nil {
		return kerr.NotCoordinator
	}
	now := l.b.now().UnixMilli()
	recs := make([]logstore.Record, len(records))
	for i, r := range records {
		recs[i] = logstore.Record{Key: r.Key, Value: r.Value, Timestamp: now}
	}
	// acks=-1 with the topic's min.insync.replicas, as Kafka's
	// TransactionStateManager.appendTransactionToLog: a state change is
	// acted on only once a new leader would find it.
	_, err := l.b.coordinatorAppend(ctx, p, logstore.BatchOptions{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs, -1, 0, defaultRequestTimeout)
	return err
}

// defaultRequestTimeout is request.timeout.ms's default: how long a transaction
// state write or a marker waits for the ISR, as in Kafka.
const defaultRequestTimeout = 30 * time.Second

func (l txnLog) Replay(partition int32, fn func(key, value []byte) error) error {
	p := l.b.leaderReplica(txnTopic, partition)
	if p == nil {
		return kerr.NotCoordinator
	}
	return replayBatches(p, func(h *logstore.BatchHeader, recs []kmsg.Record) error {
		if h.IsControl() {
			return nil
		}
		for _, r := range recs {
			if err := fn(r.Key, r.Value); err != nil {
				return err
			}
		}
		return nil
	})
}

// leaderReplica is this broker's replica of topic's partition when it
// leads it, looked up among the hosted replicas: a coordinator loads its
// partition as soon as LeaderAndIsr makes this broker the leader, before
// UpdateMetadata has put the topic in the metadata cache.
func (b *Broker) leaderReplica(topic string, partition int32) *replica.Partition {
	p := b.replicas.Get(topic, partition)
	if p == nil || !p.IsLeader() {
		return nil
	}
	return p
}

// replayBatches calls fn for every batch of the partition, control
// batches included, with its decoded records, from the log start to the
// log end offset when it began, a megabyte at a time: what a coordinator
// replays when it becomes leader of its partition. The log end, not the
// high watermark, as Kafka's loaders read: a new leader's high watermark
// lags its log until the followers fetch again, and the records in
// between were acknowledged by the old leader — a commit replayed only to
// the high watermark would be forgotten, and a consumer reprocess what
// its transaction already committed.
func replayBatches(p *replica.Partition, fn func(h *logstore.BatchHeader, recs []kmsg.Record) error) error {
	offset, end := p.LogStartOffset(), p.LogEndOffset()
	for offset < end {
		res, _, err := p.ReadIsolated(offset, 1<<20, true, replica.FetchLogEnd)
		if err != nil {
			return err
		}
		if res.Len() == 0 {
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
		for i := range batches {
			bt := &batches[i]
			if bt.Header.BaseOffset >= end {
				return nil
			}
			offset = bt.Header.LastOffset() + 1
			recs, err := logstore.DecodeRecords(*bt)
			if err != nil {
				return err
			}
			if err := fn(&bt.Header, recs); err != nil {
				return err
			}
		}
	}
	return nil
}

// txnLeadershipChanged moves the transaction coordinator for the
// transactional ids of one __transaction_state partition to or from this
// broker. The leader epoch is the coordinator epoch, which fences markers
// of an older coordinator of the same partition.
func (b *Broker) txnLeadershipChanged(partition, leaderEpoch int32, leads bool) {
	if !leads {
		b.txns.UnloadPartition(partition, leaderEpoch)
		return
	}
	// Loading replays the partition and may write markers; it runs in the
	// background, as Kafka's does, answering COORDINATOR_LOAD_IN_PROGRESS
	// meanwhile.
	go func() {
		if err := b.txns.LoadPartition(partition, leaderEpoch); err != nil {
			b.logger.Error("cannot load transaction state", "partition", partition, "err", err)
		}
	}()
}

// txnCoordinatorFor names the coordinator of a transactional id for a
// client on listener: the leader of its __transaction_state partition.
func (b *Broker) txnCoordinatorFor(transactionalID, listener string) (int32, string, int32) {
	return b.partitionLeaderOn(TopicPartition{txnTopic, b.txns.PartitionFor(transactionalID)}, listener)
}

// partitionLeaderOn is the leader of tp and its endpoint on listener; -1
// when the leader is not known or has no endpoint there.
func (b *Broker) partitionLeaderOn(tp TopicPartition, listener string) (int32, string, int32) {
	s, ok := b.partitionState(tp)
	if !ok {
		return -1, "", -1
	}
	for _, bi := range b.brokersFor(listener) {
		if bi.ID == s.Leader {
			return bi.ID, bi.Host, bi.Port
		}
	}
	return -1, "", -1
}

// txnProducerIDs hands the coordinator producer ids from the same blocks
// as idempotent producers get theirs.
type txnProducerIDs struct{ b *Broker }

func (p txnProducerIDs) Generate() (int64, error) {
	if p.b.data == nil || p.b.data.producerIDs == nil {
		return -1, kerr.UnknownServerError
	}
	return p.b.data.producerIDs.generate()
}
