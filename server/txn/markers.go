package txn

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// completion is one transaction between its PrepareCommit/PrepareAbort
// record and its CompleteCommit/CompleteAbort record: its markers are being
// written, then the completion is appended (Kafka's PendingCompleteTxn and
// the marker queues of TransactionMarkerChannelManager). Every attempt runs
// from a clock timer, so the tests' clocktest.Fake drives retries.
type completion struct {
	id               string
	partition        int32 // of __transaction_state
	coordinatorEpoch int32
	m                *txnMetadata
	complete         txnTransit // the CompleteCommit/CompleteAbort target
	commit           bool
	producerID       int64
	producerEpoch    int16

	// Guarded by Coordinator.mu.
	timer       Timer
	backoff     time.Duration
	unknownDest int  // partitions last found without a leader
	appendRetry bool // markers done; the completion append is retried
}

// newCompletion needs m.mu held (or m not yet shared) and m in
// PrepareCommit or PrepareAbort with t prepared.
func newCompletion(m *txnMetadata, partition, coordinatorEpoch int32, t txnTransit) *completion {
	return &completion{
		id:               m.id,
		partition:        partition,
		coordinatorEpoch: coordinatorEpoch,
		m:                m,
		complete:         t,
		commit:           t.state == stateCompleteCommit,
		producerID:       m.producerID,
		producerEpoch:    m.producerEpoch,
	}
}

func (pc *completion) stopLocked() {
	if pc.timer != nil {
		pc.timer.Stop()
		pc.timer = nil
	}
}

// startCompletion registers pc, replacing any earlier completion of the
// same id, and schedules its first attempt at once.
func (c *Coordinator) startCompletion(pc *completion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if prev := c.completions[pc.id]; prev != nil {
		prev.stopLocked()
		c.logger.Info("replacing a pending transaction completion", "transactional_id", pc.id)
	}
	c.completions[pc.id] = pc
	pc.timer = c.clock.AfterFunc(0, func() { c.runCompletion(pc) })
}

// removeCompletionsLocked forgets the completions of a partition this
// coordinator no longer serves at the same epoch
// (removeMarkersForTxnTopicPartition); their next attempt sees it and stops.
func (c *Coordinator) removeCompletionsLocked(partition int32) {
	for id, pc := range c.completions {
		if pc.partition == partition {
			pc.stopLocked()
			delete(c.completions, id)
		}
	}
}

func (c *Coordinator) isCurrent(pc *completion) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed && c.completions[pc.id] == pc
}

func (c *Coordinator) dropCompletion(pc *completion, why string) {
	c.mu.Lock()
	if c.completions[pc.id] == pc {
		pc.stopLocked()
		delete(c.completions, pc.id)
	}
	c.mu.Unlock()
	if why != "" {
		c.logger.Info("stopped completing transaction", "transactional_id", pc.id, "reason", why)
	}
}

// retryLater schedules pc's next attempt with a doubling backoff.
func (c *Coordinator) retryLater(pc *completion, unknownDest int, appendRetry bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.completions[pc.id] != pc {
		return
	}
	switch {
	case pc.backoff == 0:
		pc.backoff = c.cfg.MarkerRetryBackoff
	default:
		pc.backoff = min(2*pc.backoff, c.cfg.MarkerRetryBackoffMax)
	}
	pc.unknownDest = unknownDest
	pc.appendRetry = appendRetry
	pc.timer = c.clock.AfterFunc(pc.backoff, func() { c.runCompletion(pc) })
}

// stillOwned checks, before and after each step, that this coordinator
// still serves pc's id at pc's epoch with the same metadata (what Kafka's
// completion handler checks on every response).
func (c *Coordinator) stillOwned(pc *completion) bool {
	m, epoch, code := c.lookup(pc.id)
	return code == errNone && m == pc.m && epoch == pc.coordinatorEpoch
}

// runCompletion is one attempt: write the markers of the partitions still
// without one, then, once none is left, append the completion.
func (c *Coordinator) runCompletion(pc *completion) {
	if !c.isCurrent(pc) {
		return
	}
	if !c.stillOwned(pc) {
		c.dropCompletion(pc, "no longer the coordinator at this epoch")
		return
	}
	c.mu.Lock()
	appendRetry := pc.appendRetry
	c.mu.Unlock()
	if appendRetry {
		c.appendCompletion(pc)
		return
	}

	pc.m.mu.Lock()
	var send []TopicPartition
	for _, tp := range pc.m.partitions.sorted() {
		if c.cfg.TopicPartitionExists != nil && !c.cfg.TopicPartitionExists(tp.Topic, tp.Partition) {
			// The partition is gone (its topic was deleted): nothing can be
			// written there and nobody can read it.
			c.logger.Info("skipping the transaction marker of a partition that no longer exists",
				"transactional_id", pc.id, "topic", tp.Topic, "partition", tp.Partition)
			if err := pc.m.removePartition(tp); err != nil {
				c.invariantBroken(err)
			}
			continue
		}
		send = append(send, tp)
	}
	pc.m.mu.Unlock()
	if len(send) == 0 {
		c.appendCompletion(pc)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.RequestTimeout)
	errs := c.markers.WriteMarker(ctx, Marker{
		ProducerID:       pc.producerID,
		ProducerEpoch:    pc.producerEpoch,
		Commit:           pc.commit,
		CoordinatorEpoch: pc.coordinatorEpoch,
		Partitions:       send,
	})
	cancel()

	if !c.stillOwned(pc) {
		c.dropCompletion(pc, "no longer the coordinator at this epoch")
		return
	}
	retry, unknownDest := 0, 0
	stop := ""
	pc.m.mu.Lock()
	for _, tp := range send {
		err := errs[tp]
		switch markerOutcome(err) {
		case markerWritten, markerSkip:
			if err != nil {
				c.logger.Info("transaction marker dropped", "transactional_id", pc.id,
					"topic", tp.Topic, "partition", tp.Partition, "err", err)
			}
			if err := pc.m.removePartition(tp); err != nil {
				c.invariantBroken(err)
			}
		case markerRetryNoLeader:
			unknownDest++
			retry++
		case markerRetry:
			retry++
		case markerUnexpected:
			c.logger.Error("unexpected error writing a transaction marker; retrying", "transactional_id", pc.id,
				"topic", tp.Topic, "partition", tp.Partition, "err", err)
			retry++
		case markerFenced:
			stop = "marker fenced: " + err.Error()
		}
	}
	pc.m.mu.Unlock()
	switch {
	case stop != "":
		// A newer producer epoch or coordinator owns the transaction; this
		// one stays as it is until the partition is loaded again.
		c.dropCompletion(pc, stop)
	case retry > 0:
		c.retryLater(pc, unknownDest, false)
	default:
		c.appendCompletion(pc)
	}
}

// appendCompletion writes CompleteCommit/CompleteAbort
// (writeTxnCompletion, tryAppendToLog).
func (c *Coordinator) appendCompletion(pc *completion) {
	code := c.appendTransition(context.Background(), pc.id, pc.coordinatorEpoch, pc.complete, func(code int16) bool {
		return code != errNotCoordinator && code != errLoadInProgress
	})
	switch code {
	case errNone:
		c.dropCompletion(pc, "")
		c.logger.Debug("transaction completed", "transactional_id", pc.id, "commit", pc.commit)
	case errNotCoordinator, errLoadInProgress:
		// A load in progress will finish it; otherwise it is not ours.
		c.dropCompletion(pc, "completion append: "+kerr.ErrorForCode(code).Error())
	default:
		c.retryLater(pc, 0, true)
	}
}

type markerResult int

const (
	markerWritten markerResult = iota
	markerSkip                 // drop the partition: the producer could not have written there
	markerRetry
	markerRetryNoLeader
	markerFenced // stop writing this transaction's markers
	markerUnexpected
)

// markerOutcome is TransactionMarkerRequestCompletionHandler's decision for
// one partition's result.
func markerOutcome(err error) markerResult {
	if err == nil {
		return markerWritten
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		// No answer (disconnect, timeout): send again, to the leader of
		// the moment.
		return markerRetry
	}
	switch ke {
	case kerr.LeaderNotAvailable, kerr.BrokerNotAvailable:
		return markerRetryNoLeader
	case kerr.UnknownTopicOrPartition, kerr.NotLeaderForPartition, kerr.NotEnoughReplicas,
		kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut, kerr.KafkaStorageError:
		return markerRetry
	case kerr.InvalidProducerEpoch, kerr.TransactionCoordinatorFenced:
		return markerFenced
	case kerr.UnsupportedForMessageFormat, kerr.UnsupportedVersion:
		return markerSkip
	}
	// CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE,
	// INVALID_REQUIRED_ACKS and anything else are fatal in Kafka.
	return markerUnexpected
}
