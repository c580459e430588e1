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
	type pending struct {
		tp    TopicPartition
		p     *replica.Partition
		guard uint64
	}
	var (
		todo          []pending
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
			todo = append(todo, pending{TopicPartition{rt.Topic, rp.Partition}, p, v.Guard})
		}
	}
	if len(todo) == 0 {
		return nil
	}
	tps := make([]TopicPartition, len(todo))
	for i, pd := range todo {
		tps[i] = pd.tp
	}
	errs := b.verifyTransaction(ctx, *r.TransactionID, producerID, producerEpoch, tps, version >= 11)
	out := make(map[TopicPartition]verifiedPartition, len(todo))
	for _, pd := range todo {
		if err := errs[pd.tp]; err != nil {
			pd.p.AbandonTxnVerification(producerID, pd.guard)
			out[pd.tp] = verifiedPartition{err: produceVerificationError(err)}
			continue
		}
		out[pd.tp] = verifiedPartition{guard: pd.guard}
	}
	return out
}
