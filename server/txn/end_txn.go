package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndTxn answers EndTxn (versions 0-4) in req's version
// (TransactionCoordinator.handleEndTransaction): it appends PrepareCommit or
// PrepareAbort and answers once that is in the log; the markers and the
// completion follow in the background. A retry of an EndTxn that already
// completed succeeds; one that is still completing gets
// CONCURRENT_TRANSACTIONS.
func (c *Coordinator) EndTxn(ctx context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := kmsg.NewPtrEndTxnResponse()
	resp.SetVersion(req.Version)
	code := c.endTransaction(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit, true)
	resp.ErrorCode = downgradeFenced(code, req.Version < 2)
	return resp
}

// endTransaction ends id's transaction. fromClient is false for the
// coordinator's own aborts (fencing, timeouts), which come with a bumped
// epoch and the transaction pending PrepareEpochFence.
func (c *Coordinator) endTransaction(ctx context.Context, id string, producerID int64, epoch int16, commit, fromClient bool) int16 {
	m, coordEpoch, code := c.lookupNamed(id, errInvalidProducerIDMapping)
	if code != errNone {
		return code
	}
	m.mu.Lock()
	t, code, fence, err := prepareEndTxn(m, producerID, epoch, commit, fromClient, c.nowMs())
	m.mu.Unlock()
	if err != nil {
		c.invariantBroken(err)
		return errUnknownServerError
	}
	if code != errNone || t == nil {
		return code
	}

	if code := c.appendTransition(ctx, id, coordEpoch, *t, nil); code != errNone {
		if fence {
			// The epoch was bumped in memory but never given out; the next
			// fence reuses it rather than bumping again.
			if m, cur, lc := c.lookup(id); lc == errNone && m != nil && cur == coordEpoch {
				m.mu.Lock()
				m.failedEpochFence = true
				m.mu.Unlock()
			}
		}
		c.logger.Info("EndTxn append failed", "transactional_id", id, "commit", commit, "code", code)
		return code
	}

	m, cur, code := c.lookup(id)
	switch {
	case code != errNone:
		return code
	case m == nil:
		c.invariantBroken(illegal("transactional id %q vanished while its partition is loaded", id))
		return errUnknownServerError
	case cur != coordEpoch:
		return errNotCoordinator
	}
	m.mu.Lock()
	var pc *completion
	switch {
	case m.producerID != producerID:
		code = errInvalidProducerIDMapping
	case m.producerEpoch != epoch:
		code = errProducerFenced
	case m.hasPending():
		code = errConcurrentTransactions
	case (m.state == statePrepareCommit && commit) || (m.state == statePrepareAbort && !commit):
		ct, err := m.prepareComplete(c.nowMs())
		if err != nil {
			m.mu.Unlock()
			c.invariantBroken(err)
			return errUnknownServerError
		}
		pc = newCompletion(m, c.PartitionFor(id), coordEpoch, ct)
	default:
		code = errInvalidTxnState
	}
	m.mu.Unlock()
	if pc != nil {
		c.startCompletion(pc)
	}
	return code
}

// prepareEndTxn is the pre-append half of Kafka's endTransaction: the
// PrepareCommit/PrepareAbort transition, nil with NONE when the transaction
// already ended this way (a retry), or an error code. fence reports that
// this abort completes an epoch fence, whose bumped epoch is now in m.
// m.mu is held.
func prepareEndTxn(m *txnMetadata, producerID int64, epoch int16, commit, fromClient bool, now int64) (t *txnTransit, code int16, fence bool, err error) {
	switch {
	case m.producerID != producerID:
		return nil, errInvalidProducerIDMapping, false, nil
	case (fromClient && epoch != m.producerEpoch) || epoch < m.producerEpoch:
		// Producers must use the epoch they were given; the coordinator's
		// own aborts come with the epoch bumped by a fence.
		return nil, errProducerFenced, false, nil
	case m.hasPending() && (m.pending != statePrepareEpochFence || fromClient):
		// Kafka lets a client's EndTxn through a pending fence and then
		// fails the transition; we answer the retriable error instead.
		return nil, errConcurrentTransactions, false, nil
	}
	switch m.state {
	case stateOngoing:
		to := statePrepareAbort
		if commit {
			to = statePrepareCommit
		}
		if m.pending == statePrepareEpochFence {
			if to != statePrepareAbort {
				return nil, 0, false, illegal("transactional id %q: committing during an epoch fence", m.id)
			}
			// The fence's transition is replaced by the abort, which
			// carries the bumped epoch to the log and the markers.
			fence = true
			m.pending = stateNone
			m.producerEpoch = epoch
			m.lastProducerEpoch = noProducerEpoch
		}
		tt, err := m.prepareAbortOrCommit(to, now)
		if err != nil {
			return nil, 0, fence, err
		}
		return &tt, errNone, fence, nil
	case stateCompleteCommit:
		if commit {
			return nil, errNone, false, nil
		}
	case stateCompleteAbort:
		if !commit {
			return nil, errNone, false, nil
		}
	case statePrepareCommit:
		if commit {
			return nil, errConcurrentTransactions, false, nil
		}
	case statePrepareAbort:
		if !commit {
			return nil, errConcurrentTransactions, false, nil
		}
	case stateEmpty:
	default:
		return nil, 0, false, illegal("transactional id %q found in state %v", m.id, m.state)
	}
	return nil, errInvalidTxnState, false, nil
}
