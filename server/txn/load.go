package txn

import (
	"errors"
	"fmt"
)

// LoadPartition makes this coordinator serve the transactional ids of
// __transaction_state partition p at coordinator epoch coordinatorEpoch
// (the partition's leader epoch, from LeaderAndIsr): it replays the
// partition, then finishes what the previous coordinator left half done
// (TransactionStateManager.loadTransactionsForTxnTopicPartition): a
// PrepareCommit or PrepareAbort has its markers written and its
// CompleteCommit/CompleteAbort appended. Until the replay is done,
// requests for those ids get COORDINATOR_LOAD_IN_PROGRESS. A load at the
// epoch already loaded, or an older one, does nothing; a newer one replaces
// it. LoadPartition returns after the replay; markers go out in the
// background.
func (c *Coordinator) LoadPartition(partition int32, coordinatorEpoch int32) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	if cur := c.partitions[partition]; cur != nil && cur.epoch >= coordinatorEpoch {
		// Loaded or loading at this epoch already (a LeaderAndIsr repeated
		// with the same leader epoch), or at a newer one.
		c.mu.Unlock()
		return nil
	}
	ps := &partitionState{epoch: coordinatorEpoch, loading: true}
	c.partitions[partition] = ps
	c.removeCompletionsLocked(partition)
	c.mu.Unlock()

	start := c.clock.Now()
	// Wait for appends checked under the old epoch: they must be in the
	// log before the replay reads it, or they would land behind it.
	g := c.gate(partition)
	g.Lock()
	//lint:ignore SA2001 the empty critical section is the point: it drains the appenders
	g.Unlock()

	txns := make(map[string]*txnMetadata)
	skipped := 0
	err := c.log.Replay(partition, func(key, value []byte) error {
		id, err := decodeTxnKey(key)
		if errors.Is(err, errUnknownKeyVersion) {
			skipped++
			return nil
		}
		if err != nil {
			return err
		}
		if value == nil {
			delete(txns, id)
			return nil
		}
		m, err := decodeTxnValue(id, value)
		if err != nil {
			return err
		}
		txns[id] = m
		return nil
	})
	if err != nil {
		c.mu.Lock()
		if c.partitions[partition] == ps {
			delete(c.partitions, partition)
		}
		c.mu.Unlock()
		return fmt.Errorf("loading __transaction_state-%d: %w", partition, err)
	}

	now := c.nowMs()
	var pending []*completion
	var fenced []*txnMetadata
	for id, m := range txns {
		if c.PartitionFor(id) != partition {
			// Not ours to serve (a record written under another partition
			// count); Kafka would cache it and never find it.
			delete(txns, id)
			continue
		}
		switch m.state {
		case statePrepareCommit, statePrepareAbort:
			t, err := m.prepareComplete(now)
			if err != nil {
				c.invariantBroken(err)
				continue
			}
			pending = append(pending, newCompletion(m, partition, coordinatorEpoch, t))
		case statePrepareEpochFence:
			// Kafka never writes this state (a fence goes straight to
			// PrepareAbort), but a record of it means a fence was under way:
			// finish it as one, by aborting with a bumped epoch.
			m.state = stateOngoing
			fenced = append(fenced, m)
		case stateDead:
			// Also never written: a dead id is a tombstone.
			delete(txns, id)
		}
	}

	loaded := len(txns) // txns is shared once published
	c.mu.Lock()
	if c.closed || c.partitions[partition] != ps {
		c.mu.Unlock()
		return nil // unloaded or reloaded meanwhile: drop what was read
	}
	ps.txns = txns
	ps.loading = false
	c.mu.Unlock()

	took := c.clock.Now().Sub(start)
	c.metrics.recordLoad(c.clock.Now(), took)
	for _, pc := range pending {
		c.startCompletion(pc)
	}
	for _, m := range fenced {
		c.scheduleFence(m.id, m.producerID)
	}
	c.logger.Info("loaded __transaction_state partition", "partition", partition, "coordinator_epoch", coordinatorEpoch,
		"transactional_ids", loaded, "completing", len(pending), "skipped_records", skipped, "took", took)
	return nil
}

// UnloadPartition stops serving partition p (leadership moved): requests
// for its ids get NOT_COORDINATOR and marker writing for them stops. It
// does nothing if a newer coordinator epoch is loaded; a negative
// coordinatorEpoch (StopReplica) unloads whatever is loaded.
func (c *Coordinator) UnloadPartition(partition int32, coordinatorEpoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.partitions[partition]
	if ps == nil || (coordinatorEpoch >= 0 && ps.epoch > coordinatorEpoch) {
		return
	}
	delete(c.partitions, partition)
	c.removeCompletionsLocked(partition)
	c.logger.Info("unloaded __transaction_state partition", "partition", partition,
		"coordinator_epoch", ps.epoch, "transactional_ids", len(ps.txns))
}
