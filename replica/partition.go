package replica

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
)

// Partition is one hosted partition: its log and, while this broker leads
// it, a LeaderState, while it follows, a FollowerState. The state machines
// decide (HW, ISR, epochs); Partition does the IO around them — the log,
// the ISR znode write through an IsrWriter — and, after each append, HW
// move, leadership or ISR change, has the delayed produces and fetches
// watching it checked (Options.Delayed).
//
// Standalone, this broker is the only replica: NewLeader makes it leader
// with ISR {self}, so every append is committed at once and the HW follows
// the log end offset.
type Partition struct {
	Topic   string
	Index   int32
	TopicID [16]byte

	log  logstore.Log
	opts Options

	mu sync.Mutex
	// Exactly one of leaderState and followerState is in use: leaderState
	// while leader is true.
	leader        bool
	leaderState   *LeaderState
	followerState *FollowerState
	// changed records, under mu, that something a delayed operation waits
	// for happened; unlock then has them checked, once mu is released,
	// since their checks take mu.
	changed bool
	// verifications are the KIP-890 guards handed out while leading, by
	// producer id (partition_txn.go); nextGuard numbers them.
	verifications map[int64]uint64
	nextGuard     uint64
	// offline is set, under mu, once the partition's log dir failed: it
	// takes no role again in this process (Kafka's HostedPartition.Offline).
	offline atomic.Bool
	// suspended is set, under mu, while a leadership is suspended
	// (partition_suspend.go); read without mu by Metadata.
	suspended atomic.Bool
	// shrinking is set while the expiration task's check of this
	// partition runs (maybeShrinkIsrAside).
	shrinking atomic.Bool
	// stopped is set, under mu, by StopReplica and cleared by the next
	// role taken: a stopped follower serves no consumer (KIP-392).
	stopped bool
}

// DelayedOperations completes the delayed produces and fetches waiting on
// a partition (the broker's purgatory); Partition calls it, without holding
// its lock, after every change that may complete one.
type DelayedOperations interface {
	CheckAndComplete(p *Partition) int
}

// Options are what a partition's replication rules read.
type Options struct {
	LocalID           int32
	ReplicaLagTimeMax time.Duration
	MinInsyncReplicas int
	// FollowerSilenceMax: see LeaderConfig.
	FollowerSilenceMax time.Duration
	// SilentFollowerGrace: see LeaderConfig.
	SilentFollowerGrace time.Duration
	// FollowerFetchBackoff: see LeaderConfig.
	FollowerFetchBackoff time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// IsrWriter persists leader-made ISR changes (cluster mode); nil for a
	// standalone broker, whose ISR never changes.
	IsrWriter IsrWriter
	// IsrChanged, when set, hears every ISR change this leader made or
	// failed to make (metrics: IsrShrinksPerSec, IsrExpandsPerSec,
	// FailedIsrUpdatesPerSec).
	IsrChanged func(kind IsrChangeKind, failed bool)
	// Delayed hears of changes that may complete waiting produces and
	// fetches; nil when nothing ever waits on the partition (tests).
	Delayed DelayedOperations
	// VerifyTransactions refuses a client's transactional batch that opens
	// a transaction the coordinator has not confirmed
	// (transaction.partition.verification.enable).
	VerifyTransactions bool
}

// Status is a snapshot for metrics and debugging.
type Status struct {
	Leader          bool
	UnderReplicated bool // leader with an ISR smaller than the replicas
	UnderMinIsr     bool // leader with an ISR below min.insync.replicas
	HighWatermark   int64
	LogEndOffset    int64
	LogStartOffset  int64
	// LastStableOffset is the log's at the HW (docs/transactions-log.md).
	LastStableOffset int64
}

// Status reports the partition's replication state.
func (p *Partition) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	hw := p.highWatermarkLocked()
	s := Status{
		Leader:           p.leader,
		HighWatermark:    hw,
		LogEndOffset:     p.log.LogEndOffset(),
		LogStartOffset:   p.log.LogStartOffset(),
		LastStableOffset: p.log.LastStableOffset(hw),
	}
	if p.leader {
		s.UnderReplicated = p.leaderState.IsUnderReplicated()
		s.UnderMinIsr = p.leaderState.IsUnderMinIsr()
	}
	return s
}

// IsrWriter writes a leader-made ISR change to the partition's state znode,
// conditional on its version (so that a concurrent controller write wins),
// and records it for
// /isr_change_notification.
type IsrWriter interface {
	// WriteIsr returns an error wrapping ErrIsrWriteUnsent when the write
	// did not reach the store (no connection, no session): the change is
	// then proposed again later. Any other error is a refusal (the
	// partition changed or went), which waits for the controller.
	WriteIsr(topic string, partition int32, leader int32, c IsrChange) (newPartitionEpoch int32, err error)
	RecordIsrChange(topic string, partition int32)
}

// ErrIsrWriteUnsent: an ISR write that never reached ZooKeeper.
var ErrIsrWriteUnsent = errors.New("ISR write not sent")

// ErrIsrReplicaIneligible: the controller refused an ISR expansion because
// a member it would add is not live or is shutting down.
var ErrIsrReplicaIneligible = errors.New("ISR change names an ineligible replica")

// New returns a hosted partition that is neither leader nor follower yet;
// BecomeLeader or BecomeFollower (LeaderAndIsr) gives it a role. hw comes
// from replication-offset-checkpoint.
func New(topic string, index int32, topicID [16]byte, log logstore.Log, hw int64, opts Options) *Partition {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	leo := log.LogEndOffset()
	// The checkpointed HW is clamped to the log: the log may have lost its
	// tail in a crash after the checkpoint was written.
	hw = min(max(hw, log.LogStartOffset()), leo)
	return &Partition{
		Topic:         topic,
		Index:         index,
		TopicID:       topicID,
		log:           log,
		opts:          opts,
		leaderState:   NewLeaderState(opts.LocalID, LeaderConfig{ReplicaLagTimeMax: opts.ReplicaLagTimeMax, MinInsyncReplicas: opts.MinInsyncReplicas, FollowerSilenceMax: opts.FollowerSilenceMax, SilentFollowerGrace: opts.SilentFollowerGrace, FollowerFetchBackoff: opts.FollowerFetchBackoff}, hw, leo),
		followerState: NewFollowerState(-1, -1, min(hw, leo)),
	}
}

// NewLeader returns a standalone partition: this broker leads it at
// leaderEpoch and is its only replica and ISR. The id the state machine
// knows itself by is 0 (Options.LocalID): with no other replica, no rule
// ever compares it with another broker's.
func NewLeader(topic string, index int32, topicID [16]byte, log logstore.Log, leaderEpoch int32) *Partition {
	return NewLeaderWith(topic, index, topicID, log, leaderEpoch, nil)
}

// NewLeaderWith is NewLeader whose changes complete delayed operations.
func NewLeaderWith(topic string, index int32, topicID [16]byte, log logstore.Log, leaderEpoch int32, delayed DelayedOperations) *Partition {
	p := New(topic, index, topicID, log, log.LogEndOffset(), Options{Delayed: delayed})
	self := []int32{p.opts.LocalID}
	p.BecomeLeader(LeaderAndIsr{Leader: p.opts.LocalID, LeaderEpoch: leaderEpoch, Isr: self, Replicas: self})
	return p
}

// BecomeLeader applies a LeaderAndIsr naming this broker leader. It returns
// false for a stale state (leader epoch not newer), which changes nothing.
func (p *Partition) BecomeLeader(s LeaderAndIsr) bool {
	p.mu.Lock()
	defer p.unlock()
	if p.offline.Load() {
		return false
	}
	if p.leader && s.LeaderEpoch <= p.leaderState.LeaderEpoch() || !p.leader && s.LeaderEpoch <= p.followerState.LeaderEpoch() {
		return false
	}
	// A follower promoted keeps the HW it had learned.
	if !p.leader {
		p.leaderState = NewLeaderState(p.opts.LocalID, p.leaderState.cfg, p.followerState.HighWatermark(), p.log.LogEndOffset())
	}
	res := p.leaderState.BecomeLeader(s, p.log.LogEndOffset(), p.opts.Now())
	if !res.Applied {
		return false
	}
	if res.NewLeaderEpoch {
		// KAFKA-7415: the new epoch's start is recorded at election, so a
		// follower asking about it before the first append gets this
		// leader's answer, not the previous epoch's.
		if err := p.log.AssignLeaderEpoch(s.LeaderEpoch, res.EpochStartOffset); err != nil {
			p.leaderState.Resign()
			return false
		}
	}
	if !p.leader {
		// Guards of an earlier leadership may predate markers replicated
		// since; a newer epoch of the same leadership (an ISR change)
		// keeps the confirmations in flight valid.
		clear(p.verifications)
	}
	p.leader = true
	p.stopped = false
	p.suspended.Store(false)
	p.highWatermarkMovedLocked()
	return true
}

// BecomeFollower applies a LeaderAndIsr naming another broker leader. It
// returns false for a stale leader epoch.
func (p *Partition) BecomeFollower(leader, leaderEpoch int32) bool {
	p.mu.Lock()
	defer p.unlock()
	if p.offline.Load() {
		return false
	}
	if p.leader {
		if leaderEpoch <= p.leaderState.LeaderEpoch() {
			return false
		}
		p.leaderState.Resign()
		p.followerState = NewFollowerState(-1, -1, p.leaderState.HighWatermark())
	}
	if !p.followerState.BecomeFollower(leader, leaderEpoch) {
		return false
	}
	p.leader = false
	p.stopped = false
	p.suspended.Store(false)
	p.wakeLocked()
	return true
}

// Stop resigns any role: waiting fetches and produces wake and find the
// partition no longer led here (StopReplica).
func (p *Partition) Stop() {
	p.mu.Lock()
	defer p.unlock()
	if p.leader {
		p.leaderState.Resign()
		p.leader = false
	}
	p.stopped = true
	p.suspended.Store(false)
	p.wakeLocked()
}

// MarkOffline stops the partition for good because its log dir failed:
// it resigns any role, waiting produces and fetches wake to find it no
// longer led here, and BecomeLeader and BecomeFollower refuse from now on.
func (p *Partition) MarkOffline() {
	p.mu.Lock()
	defer p.unlock()
	p.offline.Store(true)
	if p.leader {
		p.leaderState.Resign()
		p.leader = false
	}
	p.suspended.Store(false)
	p.wakeLocked()
}

// Offline reports whether the partition's log dir failed (MarkOffline).
func (p *Partition) Offline() bool { return p.offline.Load() }

// highWatermarkMovedLocked tells the log, whose retention must not delete
// what consumers cannot read yet, and marks the change for waiters. The
// caller holds mu.
func (p *Partition) highWatermarkMovedLocked() {
	if s, ok := p.log.(logstore.HighWatermarkSetter); ok {
		s.SetHighWatermark(p.highWatermarkLocked())
	}
	p.wakeLocked()
}

// wakeLocked marks a change that waiting fetches and produces must
// re-check (the HW, the log end, the leadership); unlock has them checked.
// The caller holds mu.
func (p *Partition) wakeLocked() { p.changed = true }

// unlock releases mu and then, if a change was marked under it, has the
// delayed operations watching this partition checked: their checks take
// mu (and other partitions' locks), so they must run after it is released,
// as Kafka's tryCompleteDelayedRequests runs outside leaderIsrUpdateLock.
func (p *Partition) unlock() {
	changed, delayed := p.changed, p.opts.Delayed
	p.changed = false
	p.mu.Unlock()
	if changed && delayed != nil {
		delayed.CheckAndComplete(p)
	}
}

// Log is the partition's local log.
func (p *Partition) Log() logstore.Log { return p.log }

// IsLeader reports whether this broker leads the partition.
func (p *Partition) IsLeader() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader
}

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leaderEpochLocked()
}

func (p *Partition) leaderEpochLocked() int32 {
	if p.leader {
		return p.leaderState.LeaderEpoch()
	}
	return p.followerState.LeaderEpoch()
}

// HighWatermark is the offset below which records are committed and
// visible to consumers.
func (p *Partition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.highWatermarkLocked()
}

// LastStableOffset is the offset below which read_committed consumers
// read: every transaction below it is decided and its marker committed
// (logstore.Log.LastStableOffset at the current HW).
func (p *Partition) LastStableOffset() int64 {
	return p.log.LastStableOffset(p.HighWatermark())
}

func (p *Partition) highWatermarkLocked() int64 {
	if p.leader {
		return p.leaderState.HighWatermark()
	}
	return p.followerState.HighWatermark()
}

// Isr is the committed ISR while leader (nil otherwise).
func (p *Partition) Isr() []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.leader {
		return nil
	}
	return p.leaderState.Isr()
}

// LogStartOffset and LogEndOffset come from the log.
func (p *Partition) LogStartOffset() int64 { return p.log.LogStartOffset() }
func (p *Partition) LogEndOffset() int64   { return p.log.LogEndOffset() }

// AppendRules are the topic's settings a leader append applies.
type AppendRules struct {
	// LogAppendTime, when >= 0, stamps every batch with it
	// (message.timestamp.type=LogAppendTime); -1 keeps CreateTime.
	LogAppendTime int64
	// Origin says who wrote the batches: a client's batches are checked
	// against the producer table (epoch and sequence); the broker's own
	// coordinators write transactional batches whose sequence means
	// nothing and are checked for the epoch only, as Kafka's
	// AppendOrigin.COORDINATOR is.
	Origin AppendOrigin
	// VerificationGuard is the guard StartTxnVerification handed out for
	// the batch's producer, once the coordinator confirmed the partition;
	// 0 when none was needed. A transactional batch of either origin needs
	// it to open its producer's transaction.
	VerificationGuard uint64
}

// AppendOrigin is Kafka's AppendOrigin for a leader append; the log
// applies it (logstore.AppendOrigin).
type AppendOrigin = logstore.AppendOrigin

const (
	// OriginClient is a producer's Produce request (the zero value).
	OriginClient = logstore.OriginClient
	// OriginCoordinator is a group or transaction coordinator's write:
	// transactional offset commits and transaction markers.
	OriginCoordinator = logstore.OriginCoordinator
)

// AppendAsLeader is the leader's whole write, under mu as Kafka's
// Partition.appendRecordsToLeader runs under leaderIsrUpdateLock, so that
// neither the leadership nor the ISR changes between the checks and the
// append: only the leader appends (NOT_LEADER_OR_FOLLOWER); an acks=-1
// write needs an ISR of at least min.insync.replicas (NOT_ENOUGH_REPLICAS,
// nothing appended); then the log checks the batch against its producer
// table, appends it stamped with the leader epoch and records it, under
// its own lock. A retried batch of an idempotent producer comes back with
// AppendInfo.Duplicate and its original offsets.
func (p *Partition) AppendAsLeader(batches []logstore.Batch, acks int16, rules AppendRules) (logstore.AppendInfo, error) {
	p.mu.Lock()
	defer p.unlock()
	if !p.leadingLocked() {
		return logstore.AppendInfo{}, kerr.NotLeaderForPartition
	}
	if err := p.leaderState.CheckProduceBeforeAppend(acks); err != nil {
		return logstore.AppendInfo{}, err
	}
	// A group coordinator's transactional offset commit is checked as a
	// producer's batch is: it too may arrive after its transaction ended.
	txnProducer := int64(-1)
	if len(batches) > 0 && batches[0].Header.IsTransactional() {
		txnProducer = batches[0].Header.ProducerID
		if err := p.checkTxnVerificationLocked(txnProducer, rules); err != nil {
			return logstore.AppendInfo{}, err
		}
	}
	info, err := p.log.AppendAsLeaderFrom(batches, p.leaderState.LeaderEpoch(), rules.LogAppendTime, rules.Origin)
	if err != nil || info.Duplicate {
		return info, err
	}
	if txnProducer >= 0 {
		// The transaction is open now; its guard has served.
		delete(p.verifications, txnProducer)
	}
	p.appendedAsLeaderLocked()
	return info, nil
}

// AppendMarkerAsLeader writes a transaction marker for the transaction
// coordinator (WriteTxnMarkers), under the same rules as AppendAsLeader:
// only the leader (NOT_LEADER_OR_FOLLOWER), min.insync.replicas for
// acks=-1 (NOT_ENOUGH_REPLICAS); the log fences stale producer and
// coordinator epochs (logstore.Log.AppendMarkerAsLeader). The marker is
// stamped with the current time, as Kafka's withEndTransactionMarker.
func (p *Partition) AppendMarkerAsLeader(m logstore.Marker, acks int16) (logstore.AppendInfo, error) {
	p.mu.Lock()
	defer p.unlock()
	if !p.leadingLocked() {
		return logstore.AppendInfo{}, kerr.NotLeaderForPartition
	}
	if err := p.leaderState.CheckProduceBeforeAppend(acks); err != nil {
		return logstore.AppendInfo{}, err
	}
	info, err := p.log.AppendMarkerAsLeader(m, p.leaderState.LeaderEpoch(), p.opts.Now().UnixMilli())
	if err != nil {
		return info, err
	}
	// A confirmation given before the transaction ended no longer holds.
	delete(p.verifications, m.ProducerID)
	p.appendedAsLeaderLocked()
	return info, nil
}

// appendedAsLeaderLocked follows a leader append. Wake on every append,
// not only on HW moves: followers' long-polling fetches wait for new
// records, which they read past the HW. One wake serves both, so waiters
// are not woken twice for the same append. The caller holds mu.
func (p *Partition) appendedAsLeaderLocked() {
	if p.leaderState.AppendedAsLeader(p.log.LogEndOffset(), p.opts.Now()) {
		p.highWatermarkMovedLocked()
	} else {
		p.wakeLocked()
	}
}

// ProduceWaitState is what a delayed acks=-1 produce's verdict
// (CheckDelayedProduce) reads, taken under the partition's lock.
func (p *Partition) ProduceWaitState() ProduceWaitState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.leadingLocked() {
		return ProduceWaitState{}
	}
	return p.leaderState.ProduceWaitState()
}

// FetchWaitOffsets is what a delayed fetch's verdict reads of the
// partition: whether this broker still leads it at the leader epoch the
// fetch named (-1: any), and the offset the fetch may read to: the log end
// offset for a follower, the HW for a read_uncommitted consumer, the last
// stable offset for a read_committed one (Kafka's DelayedFetch with
// FetchIsolation LOG_END, HIGH_WATERMARK, TXN_COMMITTED), so that a
// read_committed long-poll wakes when the LSO moves, not the HW. The log
// end offset comes too, for the verdict.
//
// anyReplica is set for a consumer that may read a follower (Fetch v11+,
// KIP-392): then a follower serves too, to its own HW, and leading
// reports whether this broker still hosts the replica at that epoch.
func (p *Partition) FetchWaitOffsets(currentLeaderEpoch int32, isolation FetchIsolation, anyReplica bool) (leading bool, endOffset, logEndOffset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if anyReplica {
		if !p.servesConsumersLocked() || currentLeaderEpoch != -1 && currentLeaderEpoch != p.leaderEpochLocked() {
			return false, 0, 0
		}
	} else if !p.leader || currentLeaderEpoch != -1 && currentLeaderEpoch != p.leaderState.LeaderEpoch() {
		return false, 0, 0
	}
	leo := p.log.LogEndOffset()
	hw := p.highWatermarkLocked()
	switch isolation {
	case FetchLogEnd:
		return true, leo, leo
	case FetchTxnCommitted:
		return true, p.log.LastStableOffset(hw), leo
	}
	return true, hw, leo
}

// FetchIsolation is how far a fetch may read (Kafka's FetchIsolation).
type FetchIsolation int8

const (
	// FetchHighWatermark: a read_uncommitted consumer (isolation_level 0).
	FetchHighWatermark FetchIsolation = iota
	// FetchTxnCommitted: a read_committed consumer (isolation_level 1)
	// reads below the last stable offset.
	FetchTxnCommitted
	// FetchLogEnd: a follower reads to the log end.
	FetchLogEnd
)

// Follower is what this leader knows of follower id (its LEO, fetch and
// caught-up times); false when not leader or id is no replica.
func (p *Partition) Follower(id int32) (FollowerProgress, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.leader {
		return FollowerProgress{}, false
	}
	return p.leaderState.Follower(id)
}

// ReadInfo is what a consumer fetch needs besides the data.
type ReadInfo struct {
	HighWatermark    int64
	LogStartOffset   int64
	LogEndOffset     int64
	LastStableOffset int64
	// AbortedTransactions are, for a read_committed read, the aborted
	// transactions overlapping the records read; non-nil (perhaps empty)
	// exactly for read_committed reads, as Kafka answers null for the
	// others and a list for these.
	AbortedTransactions []logstore.AbortedTxn
}

// Read returns batches from offset, bounded by the high watermark
// (read_uncommitted).
func (p *Partition) Read(offset int64, maxBytes int, minOneBatch bool) (logstore.ReadResult, ReadInfo, error) {
	return p.ReadIsolated(offset, maxBytes, minOneBatch, FetchHighWatermark)
}

// ReadIsolated is a consumer's read at isolation FetchHighWatermark or
// FetchTxnCommitted. A read_committed one is bounded by the last stable
// offset and lists the aborted transactions that overlap what it read
// (Kafka's LocalLog.read with includeAbortedTxns): the consumer drops
// their records. The list is bounded by the LSO rather than by the last
// offset read, which can only add entries past the records that consumers
// never apply.
func (p *Partition) ReadIsolated(offset int64, maxBytes int, minOneBatch bool, isolation FetchIsolation) (logstore.ReadResult, ReadInfo, error) {
	info := p.readInfo()
	end := info.HighWatermark
	switch isolation {
	case FetchTxnCommitted:
		end = info.LastStableOffset
	case FetchLogEnd:
		end = info.LogEndOffset
	}
	res, err := p.log.Read(offset, end, maxBytes, minOneBatch)
	if err != nil || isolation != FetchTxnCommitted {
		return res, info, err
	}
	info.AbortedTransactions = []logstore.AbortedTxn{}
	if res.Len() > 0 {
		aborted, err := p.log.AbortedTransactions(offset, end)
		if err != nil {
			return nil, info, err
		}
		info.AbortedTransactions = append(info.AbortedTransactions, aborted...)
	}
	return res, info, nil
}

// DeleteRecordsBefore advances the log start offset; it may not pass the HW.
func (p *Partition) DeleteRecordsBefore(offset int64) (int64, error) {
	hw := p.HighWatermark()
	if offset < 0 {
		offset = hw
	}
	if offset > hw {
		return 0, logstore.ErrOffsetOutOfRange
	}
	if start := p.log.LogStartOffset(); offset <= start {
		return start, nil // already gone: nothing to do
	}
	if err := p.log.DeleteRecordsBefore(offset); err != nil {
		return 0, err
	}
	return p.log.LogStartOffset(), nil
}

// CheckLeaderEpoch validates the current_leader_epoch a client sent with
// Fetch, ListOffsets or OffsetForLeaderEpoch (KIP-320). -1 means the
// client does not know it and skips the check. An older epoch means the
// client's metadata is stale (FENCED_LEADER_EPOCH); a newer one means
// this broker has not yet learned of a leader change (UNKNOWN_LEADER_EPOCH).
func (p *Partition) CheckLeaderEpoch(requested int32) error {
	if requested == -1 {
		return nil
	}
	switch e := p.LeaderEpoch(); {
	case requested < e:
		return kerr.FencedLeaderEpoch
	case requested > e:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

// String names the partition in logs and panics.
func (p *Partition) String() string { return fmt.Sprintf("%s-%d", p.Topic, p.Index) }

// SetMinInsyncReplicas applies a changed min.insync.replicas to this
// partition; the HW may move at once when the bound fell.
func (p *Partition) SetMinInsyncReplicas(n int) {
	p.mu.Lock()
	defer p.unlock()
	p.opts.MinInsyncReplicas = n
	p.leaderState.SetMinInsyncReplicas(n)
	if p.leader && p.leaderState.MaybeIncrementHighWatermark(p.opts.Now()) {
		p.highWatermarkMovedLocked()
	}
}
