package txn

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// producerIDAndEpoch is what a KIP-360 InitProducerId says the producer
// has.
type producerIDAndEpoch struct {
	producerID int64
	epoch      int16
}

// InitProducerID answers InitProducerId (versions 0-5) in req's version
// (TransactionCoordinator.handleInitProducerId). With a transactional id it
// bumps the id's producer epoch, fencing older instances; if a transaction
// is open it is aborted first with a bumped epoch and the caller gets
// CONCURRENT_TRANSACTIONS, to retry once the abort is done. Without one it
// hands out a fresh producer id, as Kafka does for idempotent producers.
func (c *Coordinator) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.SetVersion(req.Version)
	id, epoch, code := c.initProducerID(ctx, req)
	if code != errNone {
		id, epoch = noProducerID, noProducerEpoch
	}
	resp.ProducerID, resp.ProducerEpoch = id, epoch
	resp.ErrorCode = downgradeFenced(code, req.Version < 4)
	return resp
}

func (c *Coordinator) initProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) (int64, int16, int16) {
	if req.TransactionalID == nil {
		id, err := c.ids.Generate()
		if err != nil {
			c.logger.Warn("allocating a producer id", "err", err)
			return 0, 0, codeOf(err)
		}
		return id, 0, errNone
	}
	id := *req.TransactionalID
	if id == "" {
		// Consistent with the producer client, which refuses one.
		return 0, 0, errInvalidRequest
	}
	var expected *producerIDAndEpoch
	if req.Version >= 3 {
		switch {
		case req.ProducerID == noProducerID && req.ProducerEpoch == noProducerEpoch:
		case req.ProducerID == noProducerID || req.ProducerEpoch == noProducerEpoch:
			return 0, 0, errInvalidRequest
		default:
			expected = &producerIDAndEpoch{req.ProducerID, req.ProducerEpoch}
		}
	}
	timeoutMs := req.TransactionTimeoutMillis
	if !c.validTimeout(timeoutMs) {
		return 0, 0, errInvalidTransactionTimeout
	}

	m, coordEpoch, code := c.lookup(id)
	if code != errNone {
		return 0, 0, code
	}
	if m == nil {
		pid, err := c.ids.Generate()
		if err != nil {
			c.logger.Warn("allocating a producer id", "err", err)
			return 0, 0, codeOf(err)
		}
		if m, coordEpoch, code = c.putIfAbsent(newTxnMetadata(id, pid, timeoutMs, c.nowMs())); code != errNone {
			return 0, 0, code
		}
	}

	m.mu.Lock()
	t, code, err := prepareInitProducerID(m, timeoutMs, expected, c.nowMs(), c.ids.Generate)
	m.mu.Unlock()
	if err != nil {
		c.invariantBroken(err)
		return 0, 0, errUnknownServerError
	}
	if code != errNone {
		return 0, 0, code
	}

	if t.state == statePrepareEpochFence {
		// Abort the open transaction with the bumped epoch, which fences
		// the old instance at every partition; the epoch is never given
		// out: the retry bumps again.
		code := c.endTransaction(ctx, id, t.producerID, t.producerEpoch, false, false)
		if code == errNone {
			code = errConcurrentTransactions
		}
		return 0, 0, code
	}
	if code := c.appendTransition(ctx, id, coordEpoch, t, nil); code != errNone {
		c.logger.Info("InitProducerId failed", "transactional_id", id, "code", code)
		return 0, 0, code
	}
	c.logger.Info("initialized transactional id", "transactional_id", id, "producer_id", t.producerID,
		"producer_epoch", t.producerEpoch, "partition", c.PartitionFor(id))
	return t.producerID, t.producerEpoch, errNone
}

// validTimeout: 0 < transaction.timeout.ms <= transaction.max.timeout.ms.
func (c *Coordinator) validTimeout(ms int32) bool {
	return ms > 0 && time.Duration(ms)*time.Millisecond <= c.cfg.MaxTransactionTimeout
}

// prepareInitProducerID is prepareInitProducerIdTransit: the transition an
// InitProducerId makes, or its error code. newProducerID is called when the
// epochs of the current producer id are used up. m.mu is held.
func prepareInitProducerID(m *txnMetadata, timeoutMs int32, expected *producerIDAndEpoch, now int64,
	newProducerID func() (int64, error)) (txnTransit, int16, error) {
	if m.hasPending() {
		return txnTransit{}, errConcurrentTransactions, nil
	}
	// A producer that names its id and epoch is fenced unless the id is
	// new (epoch -1: it recovers from UNKNOWN_PRODUCER_ID), it is the
	// current one (the epoch is checked below), or it is the previous one
	// with its epochs used up (a retry of the rotation whose answer was
	// lost).
	if expected != nil && m.producerEpoch != noProducerEpoch && expected.producerID != m.producerID &&
		(expected.producerID != m.lastProducerID || !epochExhausted(expected.epoch)) {
		return txnTransit{}, errProducerFenced, nil
	}
	switch m.state {
	case statePrepareAbort, statePrepareCommit:
		return txnTransit{}, errConcurrentTransactions, nil
	case stateCompleteAbort, stateCompleteCommit, stateEmpty:
		if epochExhausted(m.producerEpoch) && (expected == nil || expected.epoch == m.producerEpoch) {
			pid, err := newProducerID()
			if err != nil {
				return txnTransit{}, codeOf(err), nil
			}
			t, err := m.prepareProducerIDRotation(pid, timeoutMs, now, expected != nil)
			return t, errNone, err
		}
		var exp *int16
		if expected != nil {
			exp = &expected.epoch
		}
		return m.prepareIncrementProducerEpoch(timeoutMs, exp, now)
	case stateOngoing:
		// Abort the open transaction first; see InitProducerID.
		t, err := m.prepareFenceProducerEpoch()
		return t, errNone, err
	}
	return txnTransit{}, 0, illegal("transactional id %q found in state %v", m.id, m.state)
}
