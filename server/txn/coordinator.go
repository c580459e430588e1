package txn

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kbroker/kbroker/internal/coordpartition"
)

// partitionState is one __transaction_state partition this broker leads
// (Kafka's TxnMetadataCacheEntry, or a loadingPartitions entry).
type partitionState struct {
	epoch   int32 // the coordinator epoch: the partition's leader epoch
	loading bool
	txns    map[string]*txnMetadata
}

// Coordinator is the transaction coordinator for the __transaction_state
// partitions loaded on this broker.
type Coordinator struct {
	cfg     Config
	log     Log
	markers MarkerWriter
	ids     ProducerIDs
	clock   Clock
	logger  *slog.Logger
	metrics *coordinatorMetrics

	// mu guards everything below. It is a leaf lock: it may be taken
	// while a txnMetadata's mu is held, never the other way round.
	mu         sync.Mutex
	partitions map[int32]*partitionState
	// gates order appends against loads, per partition: an append holds
	// the read side from its epoch check until Log.Append returns, a load
	// takes the write side once before replaying, so no append checked
	// under an older coordinator epoch lands after the new one's replay
	// began. Never deleted (at most NumPartitions entries).
	gates map[int32]*sync.RWMutex
	// completions are the transactions whose markers are being written,
	// by transactional id (Kafka's transactionsWithPendingMarkers).
	completions map[string]*completion
	closed      bool
	abortTimer  Timer
	expireTimer Timer
}

// New builds a coordinator that owns no partition yet; call LoadPartition
// for each __transaction_state partition this broker leads.
func New(cfg Config, log Log, markers MarkerWriter, ids ProducerIDs, clock Clock, logger *slog.Logger) *Coordinator {
	if clock == nil {
		clock = RealClock{}
	}
	if logger == nil {
		logger = slog.Default()
	}
	c := &Coordinator{
		cfg:         cfg.withDefaults(),
		log:         log,
		markers:     markers,
		ids:         ids,
		clock:       clock,
		logger:      logger.With("component", "transaction-coordinator"),
		metrics:     newCoordinatorMetrics(),
		partitions:  make(map[int32]*partitionState),
		gates:       make(map[int32]*sync.RWMutex),
		completions: make(map[string]*completion),
	}
	c.mu.Lock()
	c.scheduleAbortLocked()
	c.scheduleExpireLocked()
	c.mu.Unlock()
	return c
}

// Close stops the coordinator's timers and unloads every partition.
// Appends and marker writes in flight finish on their own and are then
// dropped.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.closed = true
	for _, t := range []Timer{c.abortTimer, c.expireTimer} {
		if t != nil {
			t.Stop()
		}
	}
	for id, pc := range c.completions {
		pc.stopLocked()
		delete(c.completions, id)
	}
	clear(c.partitions)
	c.mu.Unlock()
}

// PartitionFor is the __transaction_state partition of a transactional id,
// Kafka's Utils.abs(transactionalId.hashCode) %
// transaction.state.log.num.partitions.
func (c *Coordinator) PartitionFor(transactionalID string) int32 {
	return coordpartition.For(transactionalID, c.cfg.NumPartitions)
}

func (c *Coordinator) nowMs() int64 { return c.clock.Now().UnixMilli() }

// lookup is Kafka's getTransactionState: the metadata of id (nil when
// unknown) and the coordinator epoch of its partition, or the error code a
// request for id gets.
func (c *Coordinator) lookup(id string) (*txnMetadata, int32, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, code := c.servingLocked(id)
	if code != errNone {
		return nil, 0, code
	}
	return ps.txns[id], ps.epoch, errNone
}

// servingLocked is the loaded partition of id, or why requests for id are
// not served here. The caller holds mu.
func (c *Coordinator) servingLocked(id string) (*partitionState, int16) {
	ps := c.partitions[c.PartitionFor(id)]
	switch {
	case c.closed || ps == nil:
		return nil, errNotCoordinator
	case ps.loading:
		return nil, errLoadInProgress
	}
	return ps, errNone
}

// lookupNamed is lookup for a request that names id: an empty id is
// INVALID_REQUEST, an unknown one gets the request's missing code.
func (c *Coordinator) lookupNamed(id string, missing int16) (*txnMetadata, int32, int16) {
	if id == "" {
		return nil, 0, errInvalidRequest
	}
	m, epoch, code := c.lookup(id)
	if code == errNone && m == nil {
		code = missing
	}
	return m, epoch, code
}

// putIfAbsent adds m unless its id is already there, and returns the one
// in the cache.
func (c *Coordinator) putIfAbsent(m *txnMetadata) (*txnMetadata, int32, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, code := c.servingLocked(m.id)
	if code != errNone {
		return nil, 0, code
	}
	if cur := ps.txns[m.id]; cur != nil {
		return cur, ps.epoch, errNone
	}
	ps.txns[m.id] = m
	return m, ps.epoch, errNone
}

func (c *Coordinator) gate(p int32) *sync.RWMutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gates[p]
	if g == nil {
		g = new(sync.RWMutex)
		c.gates[p] = g
	}
	return g
}

// appendRecords writes records to partition p if this coordinator still
// leads it at coordinator epoch epoch, and maps a failure to a client error
// code. The append outlives the caller's cancellation (a client that went
// away must not leave memory and log disagreeing) but not timeout. after,
// if set, runs with the result before the partition's gate is released, so
// a load that started meanwhile is visible to it.
func (c *Coordinator) appendRecords(ctx context.Context, p, epoch int32, records []KV, timeout time.Duration, after func(int16) int16) int16 {
	g := c.gate(p)
	g.RLock()
	defer g.RUnlock()
	c.mu.Lock()
	ps := c.partitions[p]
	var code int16
	switch {
	case c.closed || ps == nil || ps.epoch != epoch:
		code = errNotCoordinator
	case ps.loading:
		code = errLoadInProgress
	}
	c.mu.Unlock()
	if code == errNone {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		err := c.log.Append(ctx, p, records)
		cancel()
		if err != nil {
			c.logger.Warn("append to __transaction_state failed", "partition", p, "err", err)
		}
		code = appendErrorCode(err)
	}
	if after != nil {
		code = after(code)
	}
	return code
}

// appendTransition writes t, the prepared transition of id, and applies it
// in memory once it is in the log and the coordinator epoch is unchanged
// (TransactionStateManager.appendTransactionToLog). On a failure the
// pending transition is dropped unless keepPending says the caller will
// retry it.
func (c *Coordinator) appendTransition(ctx context.Context, id string, epoch int32, t txnTransit, keepPending func(int16) bool) int16 {
	timeout := time.Duration(t.timeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = c.cfg.RequestTimeout
	}
	records := []KV{{Key: txnKey(id), Value: txnValue(t)}}
	return c.appendRecords(ctx, c.PartitionFor(id), epoch, records, timeout, func(code int16) int16 {
		m, cur, lc := c.lookup(id)
		if code != errNone {
			if lc == errNone && m != nil {
				m.mu.Lock()
				if cur == epoch && (keepPending == nil || !keepPending(code)) {
					m.pending = stateNone
				}
				m.mu.Unlock()
			}
			return code
		}
		switch {
		case lc != errNone:
			return lc
		case m == nil:
			return errNotCoordinator
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if cur != epoch {
			// The partition moved away and back while we appended: the
			// new load owns this id now.
			return errNotCoordinator
		}
		if err := m.completeTransition(t); err != nil {
			c.invariantBroken(err)
			m.pending = stateNone
			return errUnknownServerError
		}
		return errNone
	})
}

// invariantBroken reports a transition the state machine refused: a bug.
// Tests make it fatal through panicOnInvariant.
func (c *Coordinator) invariantBroken(err error) {
	c.logger.Error("transaction state invariant broken", "err", err)
	if panicOnInvariant {
		panic(err)
	}
}

// panicOnInvariant is set by the package's tests.
var panicOnInvariant = false
