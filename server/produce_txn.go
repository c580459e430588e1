package server

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// verifiedPartition is the outcome of a partition's KIP-890 check: the
// guard its append carries, or the error its answer carries instead.
type verifiedPartition struct {
	guard uint64
	err   error
}

// verifyProduce asks the transaction coordinator, in one request, about
// every partition of a transactional Produce whose producer has no
// transaction open there yet (Kafka's
// ReplicaManager.appendRecordsWithTransactionVerification). Partitions
// that need no check are absent from the result; so are those that will
// fail before the append anyway (not led here, malformed records).
func (b *Broker) verifyProduce(ctx context.Context, r *kmsg.ProduceRequest, version int16) map[TopicPartition]verifiedPartition {
	var (
		todo          []guardedPartition
		producerID    int64 = -1
		producerEpoch int16
	)
	for _, rt := range r.Topics {
		t := b.topic(rt.Topic)
		for _, rp := range rt.Partitions {
			h, ok := logstore.PeekBatchHeader(rp.Records)
			if !ok || !h.IsTransactional() || h.IsControl() {
				continue
			}
			p, err := b.leaderPartition(t, rp.Partition)
			if err != nil {
				continue
			}
			if producerID < 0 {
				producerID, producerEpoch = h.ProducerID, h.ProducerEpoch
			}
			if h.ProducerID != producerID {
				// One transactional producer per request: a batch of
				// another finds no guard and is refused at its append.
				continue
			}
			v, err := p.StartTxnVerification(h.ProducerID)
			if err != nil || !v.Needed {
				continue
			}
			todo = append(todo, guardedPartition{TopicPartition{rt.Topic, rp.Partition}, p, v.Guard})
		}
	}
	if len(todo) == 0 {
		return nil
	}
	out := b.confirmGuarded(ctx, *r.TransactionID, producerID, producerEpoch, todo, version >= 11)
	for tp, v := range out {
		if v.err != nil {
			out[tp] = verifiedPartition{err: produceVerificationError(v.err)}
		}
	}
	return out
}

// guardedPartition is a partition led here whose leader handed out a
// KIP-890 guard (Partition.StartTxnVerification) for the producer's next
// transactional batch.
type guardedPartition struct {
	tp    TopicPartition
	p     *replica.Partition
	guard uint64
}

// confirmGuarded asks the transaction coordinator about every guarded
// partition in one request (verifyTransaction). A confirmed partition
// keeps its guard for the append; one the coordinator did not confirm has
// its guard withdrawn and carries the coordinator's error, as
// verifyTransaction reports it. Produce and TxnOffsetCommit both verify
// through it.
func (b *Broker) confirmGuarded(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, todo []guardedPartition, abortable bool) map[TopicPartition]verifiedPartition {
	tps := make([]TopicPartition, len(todo))
	for i, g := range todo {
		tps[i] = g.tp
	}
	errs := b.verifyTransaction(ctx, transactionalID, producerID, producerEpoch, tps, abortable)
	out := make(map[TopicPartition]verifiedPartition, len(todo))
	for _, g := range todo {
		if err := errs[g.tp]; err != nil {
			g.p.AbandonTxnVerification(producerID, g.guard)
			out[g.tp] = verifiedPartition{err: err}
			continue
		}
		out[g.tp] = verifiedPartition{guard: g.guard}
	}
	return out
}
