package server

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Before a leader appends the first transactional batch of a producer's
// transaction, it asks the transaction coordinator whether the partition
// was added to that transaction (KIP-890 part 1,
// transaction.partition.verification.enable): a late batch of a
// transaction that already ended would otherwise open a transaction no
// coordinator knows, which would hold back the last stable offset
// forever. Kafka's AddPartitionsToTxnManager sends AddPartitionsToTxn v4
// with VerifyOnly; so do we, in-process when this broker is the
// coordinator.

// verifyAddPartitionsVersion is the first version with the batched,
// broker-to-broker form.
const verifyAddPartitionsVersion = 4

// verifyTransaction returns, for each partition of tps the coordinator
// did not confirm, the error as Kafka's AddPartitionsToTxnManager reports
// it to the request that asked: PRODUCER_FENCED as INVALID_PRODUCER_EPOCH,
// and TRANSACTION_ABORTABLE as INVALID_TXN_STATE unless abortable is set,
// for requests new enough to carry it (Produce v11+, TxnOffsetCommit v4+).
func (b *Broker) verifyTransaction(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, tps []TopicPartition, abortable bool) map[TopicPartition]error {
	out := map[TopicPartition]error{}
	failAll := func(err error) map[TopicPartition]error {
		for _, tp := range tps {
			out[tp] = verificationError(err, abortable)
		}
		return out
	}
	coordinator, _, _ := b.partitionLeaderOn(TopicPartition{txnTopic, b.txns.PartitionFor(transactionalID)}, b.cfg.InterBrokerListenerName)
	if coordinator < 0 {
		return failAll(kerr.CoordinatorNotAvailable)
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(verifyAddPartitionsVersion)
	rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
	rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly = transactionalID, producerID, producerEpoch, true
	for _, g := range groupByTopic(tps) {
		t := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		t.Topic, t.Partitions = g.topic, g.partitions
		rt.Topics = append(rt.Topics, t)
	}
	req.Transactions = append(req.Transactions, rt)

	var resp *kmsg.AddPartitionsToTxnResponse
	if coordinator == b.cfg.BrokerID {
		resp = b.txns.AddPartitionsToTxn(ctx, req)
	} else {
		kresp, err := b.txnPeers.send(ctx, coordinator, req)
		if err != nil {
			b.logger.Debug("verifying a transaction", "coordinator", coordinator, "transactional_id", transactionalID, "err", err)
			return failAll(kerr.NetworkException)
		}
		var ok bool
		if resp, ok = kresp.(*kmsg.AddPartitionsToTxnResponse); !ok {
			return failAll(kerr.UnknownServerError)
		}
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.ClusterAuthorizationFailed) {
			err = kerr.InvalidTxnState
		}
		return failAll(err)
	}
	answered := map[TopicPartition]bool{}
	for _, t := range resp.Transactions {
		if t.TransactionalID != transactionalID {
			continue
		}
		for _, rt := range t.Topics {
			for _, rp := range rt.Partitions {
				tp := TopicPartition{rt.Topic, rp.Partition}
				answered[tp] = true
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					out[tp] = verificationError(err, abortable)
				}
			}
		}
	}
	for _, tp := range tps {
		if !answered[tp] {
			out[tp] = verificationError(kerr.UnknownServerError, abortable)
		}
	}
	return out
}

// verificationError is the coordinator's answer as the verifying request
// sees it (Kafka's AddPartitionsToTxnManager).
func verificationError(err error, abortable bool) error {
	switch {
	case errors.Is(err, kerr.ProducerFenced):
		return kerr.InvalidProducerEpoch
	case errors.Is(err, kerr.TransactionAbortable) && !abortable:
		return kerr.InvalidTxnState
	}
	return err
}

// produceVerificationError is what a Produce answer says for a partition
// that failed verification (ReplicaManager.appendRecords'
// postVerificationCallback): errors a client might not retry become
// NOT_ENOUGH_REPLICAS, which every client retries without a metadata
// refresh.
func produceVerificationError(err error) error {
	switch {
	case errors.Is(err, kerr.ConcurrentTransactions),
		errors.Is(err, kerr.NetworkException),
		errors.Is(err, kerr.CoordinatorLoadInProgress),
		errors.Is(err, kerr.CoordinatorNotAvailable),
		errors.Is(err, kerr.NotCoordinator):
		return kerr.NotEnoughReplicas
	}
	return err
}
