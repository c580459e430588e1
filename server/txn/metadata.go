package txn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

const (
	noProducerID    int64 = -1
	noProducerEpoch int16 = -1
	noTimestamp     int64 = -1
)

// epochExhausted: clients never get math.MaxInt16, so the coordinator can
// always fence a producer by bumping its epoch once more
// (TransactionMetadata.isEpochExhausted).
func epochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

// partitionSet is the set of partitions a transaction wrote to.
type partitionSet map[TopicPartition]struct{}

func (s partitionSet) clone() partitionSet {
	c := make(partitionSet, len(s))
	for tp := range s {
		c[tp] = struct{}{}
	}
	return c
}

func (s partitionSet) containsAll(o partitionSet) bool {
	for tp := range o {
		if _, ok := s[tp]; !ok {
			return false
		}
	}
	return true
}

func (s partitionSet) equal(o partitionSet) bool { return len(s) == len(o) && s.containsAll(o) }

// sorted lists the set by topic, then partition, so records and responses
// do not depend on map order.
func (s partitionSet) sorted() []TopicPartition {
	out := make([]TopicPartition, 0, len(s))
	for tp := range s {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}

// txnMetadata is one transactional id's state (Kafka's TransactionMetadata,
// transaction version 0 as ZooKeeper-mode 3.9 runs it). A change is made in
// two steps: a prepare* method computes the target (a txnTransit) and sets
// pending, which makes concurrent requests answer CONCURRENT_TRANSACTIONS;
// once the target is in the log, completeTransition applies it. Only the
// epoch-fence path of endTransaction edits fields before the append, as
// Kafka does.
//
// All methods are pure (time comes in as now, in ms) and need mu held.
type txnMetadata struct {
	mu sync.Mutex

	id                string
	producerID        int64
	lastProducerID    int64
	producerEpoch     int16
	lastProducerEpoch int16
	timeoutMs         int32
	state             txnState
	pending           txnState // stateNone when no transition is in flight
	partitions        partitionSet
	startTimestamp    int64 // ms; -1 while no transaction is open
	lastUpdate        int64 // ms
	// failedEpochFence: a fence's append failed after the epoch was
	// bumped in memory; the next fence must not bump it again (the bumped
	// epoch was never given to anyone).
	failedEpochFence bool
}

// txnTransit is the target of a transition (Kafka's TxnTransitMetadata).
type txnTransit struct {
	producerID        int64
	lastProducerID    int64
	producerEpoch     int16
	lastProducerEpoch int16
	timeoutMs         int32
	state             txnState
	partitions        partitionSet
	startTimestamp    int64
	lastUpdate        int64
}

func newTxnMetadata(id string, producerID int64, timeoutMs int32, now int64) *txnMetadata {
	return &txnMetadata{
		id:                id,
		producerID:        producerID,
		lastProducerID:    noProducerID,
		producerEpoch:     noProducerEpoch,
		lastProducerEpoch: noProducerEpoch,
		timeoutMs:         timeoutMs,
		state:             stateEmpty,
		pending:           stateNone,
		partitions:        partitionSet{},
		startTimestamp:    noTimestamp,
		lastUpdate:        now,
	}
}

// errIllegalTransition is Kafka's IllegalStateException from the metadata:
// a bug, never a client mistake.
type errIllegalTransition struct{ msg string }

func (e *errIllegalTransition) Error() string { return e.msg }

func illegal(format string, args ...any) error {
	return &errIllegalTransition{msg: fmt.Sprintf(format, args...)}
}

func (m *txnMetadata) hasPending() bool { return m.pending != stateNone }

func (m *txnMetadata) prepareTransition(to txnState, producerID int64, epoch, lastEpoch int16, timeoutMs int32,
	partitions partitionSet, start, now int64) (txnTransit, error) {
	if m.hasPending() {
		return txnTransit{}, illegal("transactional id %q: transition to %v while %v is pending", m.id, to, m.pending)
	}
	if producerID < 0 {
		return txnTransit{}, illegal("transactional id %q: illegal producer id %d", m.id, producerID)
	}
	if to != stateDead && epoch < 0 {
		return txnTransit{}, illegal("transactional id %q: illegal producer epoch %d", m.id, epoch)
	}
	if !to.canFollow(m.state) {
		return txnTransit{}, illegal("transactional id %q: %v cannot follow %v", m.id, to, m.state)
	}
	m.pending = to
	return txnTransit{
		producerID:        producerID,
		lastProducerID:    m.producerID,
		producerEpoch:     epoch,
		lastProducerEpoch: lastEpoch,
		timeoutMs:         timeoutMs,
		state:             to,
		partitions:        partitions,
		startTimestamp:    start,
		lastUpdate:        now,
	}, nil
}

// prepareFenceProducerEpoch bumps the epoch to fence the current producer
// before its transaction is aborted (an InitProducerId during the
// transaction, or the transaction timing out).
func (m *txnMetadata) prepareFenceProducerEpoch() (txnTransit, error) {
	if m.producerEpoch == math.MaxInt16 {
		return txnTransit{}, illegal("transactional id %q: cannot fence producer epoch %d", m.id, m.producerEpoch)
	}
	bumped := m.producerEpoch + 1
	if m.failedEpochFence {
		bumped = m.producerEpoch
	}
	return m.prepareTransition(statePrepareEpochFence, m.producerID, bumped, noProducerEpoch, m.timeoutMs,
		m.partitions.clone(), m.startTimestamp, m.lastUpdate)
}

// prepareIncrementProducerEpoch is InitProducerId's usual step. expected is
// the epoch the producer says it has (KIP-360), or nil. The int16 is a
// client error code (PRODUCER_FENCED) when the producer's epoch is stale.
func (m *txnMetadata) prepareIncrementProducerEpoch(timeoutMs int32, expected *int16, now int64) (txnTransit, int16, error) {
	if epochExhausted(m.producerEpoch) {
		return txnTransit{}, 0, illegal("transactional id %q: producer id %d has no epochs left", m.id, m.producerID)
	}
	bumped := m.producerEpoch + 1
	var epoch, lastEpoch int16
	switch {
	case expected == nil:
		// A new producer instance: bump, and forget the last epoch so a
		// fenced instance cannot pass as a retry.
		epoch, lastEpoch = bumped, noProducerEpoch
	case m.producerEpoch == noProducerEpoch || *expected == m.producerEpoch:
		// The producer continues after an error and no other instance
		// took over.
		epoch, lastEpoch = bumped, m.producerEpoch
	case *expected == m.lastProducerEpoch:
		// A retry of a bump whose answer was lost: answer it again.
		epoch, lastEpoch = m.producerEpoch, m.lastProducerEpoch
	default:
		return txnTransit{}, errProducerFenced, nil
	}
	t, err := m.prepareTransition(stateEmpty, m.producerID, epoch, lastEpoch, timeoutMs, partitionSet{}, noTimestamp, now)
	return t, 0, err
}

// prepareProducerIDRotation moves to a new producer id at epoch 0 once the
// epochs of the current one are used up.
func (m *txnMetadata) prepareProducerIDRotation(newProducerID int64, timeoutMs int32, now int64, recordLastEpoch bool) (txnTransit, error) {
	switch m.state {
	case stateOngoing, statePrepareAbort, statePrepareCommit:
		return txnTransit{}, illegal("transactional id %q: rotating producer ids with a transaction in %v", m.id, m.state)
	}
	lastEpoch := noProducerEpoch
	if recordLastEpoch {
		lastEpoch = m.producerEpoch
	}
	return m.prepareTransition(stateEmpty, newProducerID, 0, lastEpoch, timeoutMs, partitionSet{}, noTimestamp, now)
}

func (m *txnMetadata) prepareAddPartitions(add partitionSet, now int64) (txnTransit, error) {
	start := m.startTimestamp
	switch m.state {
	case stateEmpty, stateCompleteAbort, stateCompleteCommit:
		start = now
	}
	all := m.partitions.clone()
	for tp := range add {
		all[tp] = struct{}{}
	}
	return m.prepareTransition(stateOngoing, m.producerID, m.producerEpoch, m.lastProducerEpoch, m.timeoutMs, all, start, now)
}

func (m *txnMetadata) prepareAbortOrCommit(to txnState, now int64) (txnTransit, error) {
	return m.prepareTransition(to, m.producerID, m.producerEpoch, m.lastProducerEpoch, m.timeoutMs,
		m.partitions.clone(), m.startTimestamp, now)
}

// prepareComplete is the step after every marker is written.
func (m *txnMetadata) prepareComplete(now int64) (txnTransit, error) {
	to := stateCompleteAbort
	if m.state == statePrepareCommit {
		to = stateCompleteCommit
	}
	// The prepare record is in the log, so a fence that failed before is
	// now behind us.
	m.failedEpochFence = false
	return m.prepareTransition(to, m.producerID, m.producerEpoch, m.lastProducerEpoch, m.timeoutMs,
		partitionSet{}, m.startTimestamp, now)
}

func (m *txnMetadata) prepareDead() (txnTransit, error) {
	return m.prepareTransition(stateDead, m.producerID, m.producerEpoch, m.lastProducerEpoch, m.timeoutMs,
		partitionSet{}, m.startTimestamp, m.lastUpdate)
}

// removePartition records that a partition's marker is written.
func (m *txnMetadata) removePartition(tp TopicPartition) error {
	if m.state != statePrepareCommit && m.state != statePrepareAbort {
		return illegal("transactional id %q: removing a partition whose marker was sent in %v", m.id, m.state)
	}
	delete(m.partitions, tp)
	return nil
}

// completeTransition applies t once its record is in the log, checking it
// is what was prepared (TransactionMetadata.completeTransitionTo). On an
// error nothing changed.
func (m *txnMetadata) completeTransition(t txnTransit) error {
	if !m.hasPending() {
		return illegal("transactional id %q: completing %v with no pending transition", m.id, t.state)
	}
	if m.pending != t.state {
		return illegal("transactional id %q: completing %v while %v is pending", m.id, t.state, m.pending)
	}
	sameEpoch := t.producerEpoch == m.producerEpoch && t.producerID == m.producerID
	switch t.state {
	case stateEmpty: // InitProducerId
		bump := t.producerEpoch == m.producerEpoch+1 || (t.producerEpoch == 0 && t.producerID != m.producerID)
		if (m.producerEpoch != t.producerEpoch && !bump) || len(t.partitions) > 0 || t.startTimestamp != noTimestamp {
			return m.transitionFailure(t)
		}
		m.timeoutMs = t.timeoutMs
		m.producerEpoch = t.producerEpoch
		m.lastProducerEpoch = t.lastProducerEpoch
		m.producerID = t.producerID
		m.lastProducerID = t.lastProducerID
	case stateOngoing: // AddPartitionsToTxn, AddOffsetsToTxn
		if !sameEpoch || !t.partitions.containsAll(m.partitions) || m.timeoutMs != t.timeoutMs {
			return m.transitionFailure(t)
		}
		m.startTimestamp = t.startTimestamp
		for tp := range t.partitions {
			m.partitions[tp] = struct{}{}
		}
	case statePrepareCommit, statePrepareAbort: // EndTxn
		if !sameEpoch || !m.partitions.equal(t.partitions) || m.timeoutMs != t.timeoutMs || m.startTimestamp != t.startTimestamp {
			return m.transitionFailure(t)
		}
	case stateCompleteCommit, stateCompleteAbort: // markers written
		if !sameEpoch || m.timeoutMs != t.timeoutMs || t.startTimestamp == noTimestamp {
			return m.transitionFailure(t)
		}
		m.startTimestamp = t.startTimestamp
		clear(m.partitions)
	default:
		// PrepareEpochFence is never completed (the fence goes straight on
		// to PrepareAbort); Dead ends with removal from the cache.
		return m.transitionFailure(t)
	}
	m.lastUpdate = t.lastUpdate
	m.pending = stateNone
	m.state = t.state
	return nil
}

func (m *txnMetadata) transitionFailure(t txnTransit) error {
	return illegal("transactional id %q: unexpected transition from %v (producer %d epoch %d) to %v (producer %d epoch %d)",
		m.id, m.state, m.producerID, m.producerEpoch, t.state, t.producerID, t.producerEpoch)
}
