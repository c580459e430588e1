package txn

import (
	"context"
)

// maxTombstonesPerAppend bounds one tombstone batch (Kafka fills batches up
// to the partition's max.message.bytes); a key is at most a few hundred
// bytes, so this stays far below the 1 MB default.
const maxTombstonesPerAppend = 500

func (c *Coordinator) scheduleExpireLocked() {
	if c.closed {
		return
	}
	c.expireTimer = c.clock.AfterFunc(c.cfg.RemoveExpiredInterval, func() {
		c.RemoveExpiredTransactionalIDs()
		c.mu.Lock()
		c.scheduleExpireLocked()
		c.mu.Unlock()
	})
}

type expiring struct {
	m     *txnMetadata
	epoch int16
}

// RemoveExpiredTransactionalIDs writes tombstones for the transactional ids
// idle (Empty, CompleteCommit or CompleteAbort) for longer than
// TransactionalIDExpiration and drops them from memory once written
// (TransactionStateManager.removeExpiredTransactionalIds). It runs every
// RemoveExpiredInterval; it is exported for tests and tools.
func (c *Coordinator) RemoveExpiredTransactionalIDs() {
	type loaded struct {
		partition, epoch int32
		txns             []*txnMetadata
	}
	c.mu.Lock()
	var parts []loaded
	for p, ps := range c.partitions {
		if ps.loading {
			continue
		}
		l := loaded{partition: p, epoch: ps.epoch}
		for _, m := range ps.txns {
			l.txns = append(l.txns, m)
		}
		parts = append(parts, l)
	}
	c.mu.Unlock()

	deadline := c.nowMs() - c.cfg.TransactionalIDExpiration.Milliseconds()
	for _, l := range parts {
		var batch []expiring
		for _, m := range l.txns {
			m.mu.Lock()
			if !m.hasPending() && m.state.expirationAllowed() && m.lastUpdate <= deadline {
				if _, err := m.prepareDead(); err != nil {
					c.invariantBroken(err)
				} else {
					batch = append(batch, expiring{m, m.producerEpoch})
				}
			}
			m.mu.Unlock()
			if len(batch) == maxTombstonesPerAppend {
				c.writeTombstones(l.partition, l.epoch, batch)
				batch = nil
			}
		}
		if len(batch) > 0 {
			c.writeTombstones(l.partition, l.epoch, batch)
		}
	}
}

func (c *Coordinator) writeTombstones(partition, epoch int32, batch []expiring) {
	records := make([]KV, len(batch))
	for i, e := range batch {
		records[i] = KV{Key: txnKey(e.m.id)}
	}
	code := c.appendRecords(context.Background(), partition, epoch, records, c.cfg.RequestTimeout, nil)
	removed := 0
	for _, e := range batch {
		e.m.mu.Lock()
		c.mu.Lock()
		ps := c.partitions[partition]
		if code == errNone && ps != nil && ps.epoch == epoch && !ps.loading && ps.txns[e.m.id] == e.m &&
			e.m.pending == stateDead && e.m.producerEpoch == e.epoch {
			delete(ps.txns, e.m.id)
			removed++
		} else {
			e.m.pending = stateNone
		}
		c.mu.Unlock()
		e.m.mu.Unlock()
	}
	if code != errNone {
		c.logger.Warn("writing tombstones for expired transactional ids failed", "partition", partition,
			"ids", len(batch), "code", code)
	} else {
		c.logger.Info("removed expired transactional ids", "partition", partition, "ids", removed)
	}
}
