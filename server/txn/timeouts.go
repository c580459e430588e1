package txn

import (
	"context"
)

// scheduleAbortLocked arms the periodic abort of timed-out transactions
// (transaction.abort.timed.out.transaction.cleanup.interval.ms). c.mu is
// held.
func (c *Coordinator) scheduleAbortLocked() {
	if c.closed {
		return
	}
	c.abortTimer = c.clock.AfterFunc(c.cfg.AbortTimedOutInterval, func() {
		c.AbortTimedOutTransactions()
		c.mu.Lock()
		c.scheduleAbortLocked()
		c.mu.Unlock()
	})
}

// AbortTimedOutTransactions aborts every Ongoing transaction open longer
// than its transaction.timeout.ms, fencing its producer with a bumped epoch
// (TransactionCoordinator.abortTimedOutTransactions). It runs every
// AbortTimedOutInterval; it is exported for tests and tools.
func (c *Coordinator) AbortTimedOutTransactions() {
	now := c.nowMs()
	for _, m := range c.loadedTransactions() {
		m.mu.Lock()
		timedOut := !m.hasPending() && m.state == stateOngoing && m.startTimestamp+int64(m.timeoutMs) < now
		id, pid := m.id, m.producerID
		m.mu.Unlock()
		if timedOut {
			c.logger.Info("aborting timed-out transaction", "transactional_id", id, "producer_id", pid)
			c.fenceAndAbort(id, pid)
		}
	}
}

// loadedTransactions lists the metadata of every loaded partition.
func (c *Coordinator) loadedTransactions() []*txnMetadata {
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []*txnMetadata
	for _, ps := range c.partitions {
		if ps.loading {
			continue
		}
		for _, m := range ps.txns {
			all = append(all, m)
		}
	}
	return all
}

// scheduleFence runs fenceAndAbort on its own, soon.
func (c *Coordinator) scheduleFence(id string, producerID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.clock.AfterFunc(0, func() { c.fenceAndAbort(id, producerID) })
}

// fenceAndAbort aborts id's open transaction with a bumped epoch, unless the
// producer id changed or another transition is under way.
func (c *Coordinator) fenceAndAbort(id string, producerID int64) {
	m, _, code := c.lookup(id)
	if code != errNone || m == nil {
		return
	}
	m.mu.Lock()
	if m.producerID != producerID || m.hasPending() || m.state != stateOngoing {
		m.mu.Unlock()
		return
	}
	t, err := m.prepareFenceProducerEpoch()
	m.mu.Unlock()
	if err != nil {
		c.invariantBroken(err)
		return
	}
	code = c.endTransaction(context.Background(), id, t.producerID, t.producerEpoch, false, false)
	switch code {
	case errNone:
		c.logger.Info("rolled back transaction", "transactional_id", id, "producer_epoch", t.producerEpoch)
	case errInvalidProducerIDMapping, errProducerFenced, errConcurrentTransactions:
		c.logger.Debug("rollback cancelled", "transactional_id", id, "code", code)
	default:
		c.logger.Warn("rollback failed", "transactional_id", id, "code", code)
	}
}
