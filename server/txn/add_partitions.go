package txn

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetsTopic is where AddOffsetsToTxn's partition lives.
const offsetsTopic = "__consumer_offsets"

// AddPartitionsToTxn answers AddPartitionsToTxn in req's version. Versions
// 0-3 come from producers: one transaction, its partitions added to it.
// Versions 4-5 come from brokers (KIP-890 part 1) and batch transactions;
// a VerifyOnly transaction is only checked: each partition answers NONE if
// it is in the transaction and TRANSACTION_ABORTABLE if not
// (KafkaApis.handleAddPartitionsToTxnRequest,
// TransactionCoordinator.handleAddPartitionsToTransaction and
// handleVerifyPartitionsInTransaction). A partition the metadata does not
// know fails the whole transaction: it gets UNKNOWN_TOPIC_OR_PARTITION and
// the others OPERATION_NOT_ATTEMPTED. Authorization is the handler's.
func (c *Coordinator) AddPartitionsToTxn(ctx context.Context, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.SetVersion(req.Version)
	if req.Version < 4 {
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch = req.TransactionalID, req.ProducerID, req.ProducerEpoch
		for _, t := range req.Topics {
			tx.Topics = append(tx.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
		res := c.addPartitionsToTxn(ctx, &tx, req.Version)
		for _, t := range res.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: p.Partition, ErrorCode: p.ErrorCode})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	// Transactions of one request are independent and may each wait for an
	// append, so they run side by side, as Kafka's callbacks do.
	resp.Transactions = make([]kmsg.AddPartitionsToTxnResponseTransaction, len(req.Transactions))
	var wg sync.WaitGroup
	for i := range req.Transactions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp.Transactions[i] = c.addPartitionsToTxn(ctx, &req.Transactions[i], req.Version)
		}()
	}
	wg.Wait()
	return resp
}

func (c *Coordinator) addPartitionsToTxn(ctx context.Context, tx *kmsg.AddPartitionsToTxnRequestTransaction, version int16) kmsg.AddPartitionsToTxnResponseTransaction {
	parts := partitionSet{}
	for _, t := range tx.Topics {
		for _, p := range t.Partitions {
			parts[TopicPartition{t.Topic, p}] = struct{}{}
		}
	}
	codes := make(map[TopicPartition]int16, len(parts))
	unknown := false
	if exists := c.cfg.TopicPartitionExists; exists != nil {
		for tp := range parts {
			if !exists(tp.Topic, tp.Partition) {
				codes[tp] = errUnknownTopicOrPartition
				unknown = true
			}
		}
	}
	switch {
	case unknown:
		for tp := range parts {
			if _, ok := codes[tp]; !ok {
				codes[tp] = errOperationNotAttempted
			}
		}
	case tx.VerifyOnly:
		codes = c.verifyPartitions(tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, parts)
	default:
		code := c.addPartitions(ctx, tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, parts)
		code = downgradeFenced(code, version < 2)
		for tp := range parts {
			codes[tp] = code
		}
	}
	return addPartitionsResult(tx.TransactionalID, parts, codes)
}

func addPartitionsResult(id string, parts partitionSet, codes map[TopicPartition]int16) kmsg.AddPartitionsToTxnResponseTransaction {
	res := kmsg.NewAddPartitionsToTxnResponseTransaction()
	res.TransactionalID = id
	for _, tp := range parts.sorted() {
		n := len(res.Topics)
		if n == 0 || res.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rt.Topic = tp.Topic
			res.Topics = append(res.Topics, rt)
			n++
		}
		rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
		rp.Partition, rp.ErrorCode = tp.Partition, codes[tp]
		res.Topics[n-1].Partitions = append(res.Topics[n-1].Partitions, rp)
	}
	return res
}

// AddOffsetsToTxn answers AddOffsetsToTxn (versions 0-4) in req's version:
// it adds __consumer_offsets partition groupPartition, the group's, to the
// transaction so its offset commits are completed by the markers
// (KafkaApis.handleAddOffsetsToTxnRequest).
func (c *Coordinator) AddOffsetsToTxn(ctx context.Context, req *kmsg.AddOffsetsToTxnRequest, groupPartition int32) *kmsg.AddOffsetsToTxnResponse {
	resp := kmsg.NewPtrAddOffsetsToTxnResponse()
	resp.SetVersion(req.Version)
	code := c.addPartitions(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch,
		partitionSet{{offsetsTopic, groupPartition}: {}})
	resp.ErrorCode = downgradeFenced(code, req.Version < 2)
	return resp
}

// addPartitions is handleAddPartitionsToTransaction.
func (c *Coordinator) addPartitions(ctx context.Context, id string, producerID int64, epoch int16, parts partitionSet) int16 {
	m, coordEpoch, code := c.lookupNamed(id, errInvalidProducerIDMapping)
	if code != errNone {
		return code
	}
	m.mu.Lock()
	t, code, err := prepareAddPartitions(m, producerID, epoch, parts, c.nowMs())
	m.mu.Unlock()
	if err != nil {
		c.invariantBroken(err)
		return errUnknownServerError
	}
	if code != errNone || t == nil {
		return code
	}
	return c.appendTransition(ctx, id, coordEpoch, *t, nil)
}

// prepareAddPartitions returns the transition that adds parts, nil if they
// are all in the transaction already, or the request's error code. m.mu is
// held.
func prepareAddPartitions(m *txnMetadata, producerID int64, epoch int16, parts partitionSet, now int64) (*txnTransit, int16, error) {
	switch {
	case m.producerID != producerID:
		return nil, errInvalidProducerIDMapping, nil
	case m.producerEpoch != epoch:
		return nil, errProducerFenced, nil
	case m.hasPending(), m.state == statePrepareCommit, m.state == statePrepareAbort:
		return nil, errConcurrentTransactions, nil
	case m.state == stateOngoing && m.partitions.containsAll(parts):
		return nil, errNone, nil
	}
	t, err := m.prepareAddPartitions(parts, now)
	if err != nil {
		return nil, 0, err
	}
	return &t, errNone, nil
}

// verifyPartitions is handleVerifyPartitionsInTransaction: a partition
// leader asks before appending transactional records whether the partition
// was added, so a hanging transaction cannot start there (KIP-890 part 1).
// The pending state is not looked at: the append of the partition's
// addition is what makes it part of the transaction.
func (c *Coordinator) verifyPartitions(id string, producerID int64, epoch int16, parts partitionSet) map[TopicPartition]int16 {
	codes := make(map[TopicPartition]int16, len(parts))
	all := func(code int16) map[TopicPartition]int16 {
		for tp := range parts {
			codes[tp] = code
		}
		return codes
	}
	m, _, code := c.lookupNamed(id, errInvalidProducerIDMapping)
	if code != errNone {
		return all(code)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.producerID != producerID:
		return all(errInvalidProducerIDMapping)
	case m.producerEpoch != epoch:
		return all(errProducerFenced)
	case m.state == statePrepareCommit || m.state == statePrepareAbort:
		return all(errConcurrentTransactions)
	}
	for tp := range parts {
		if _, ok := m.partitions[tp]; ok {
			codes[tp] = errNone
		} else {
			codes[tp] = errTransactionAbortable
		}
	}
	return codes
}
