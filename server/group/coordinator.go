package group

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/internal/coordpartition"
)

type partitionStatus int

const (
	partitionLoading partitionStatus = iota + 1
	partitionLoaded
)

type partitionState struct {
	status partitionStatus
	epoch  uint64 // tells a finished load whether an unload or reload overtook it
	// txnGroups names, by producer id, the groups holding pending
	// transactional offsets of the producer.
	txnGroups map[int64]map[string]struct{}
	// deferredMarkers are the CompleteTransaction calls made while the
	// partition loaded, applied in order before it serves requests.
	deferredMarkers []txnMarker
}

// Coordinator is the classic group coordinator for the __consumer_offsets
// partitions loaded on this broker.
type Coordinator struct {
	cfg    Config
	log    OffsetsLog
	clock  Clock
	logger *slog.Logger

	// mu guards partitions, groups, closed and retentionTimer. It is a leaf
	// lock: never take a group's lock while holding it.
	mu             sync.Mutex
	partitions     map[int32]*partitionState
	groups         map[string]*group
	loadEpoch      uint64
	closed         bool
	retentionTimer Timer
}

// New builds a coordinator that owns no partition yet; call LoadPartition
// for each __consumer_offsets partition this broker leads.
func New(cfg Config, log OffsetsLog, clock Clock, logger *slog.Logger) *Coordinator {
	if clock == nil {
		clock = RealClock{}
	}
	if logger == nil {
		logger = slog.Default()
	}
	c := &Coordinator{
		cfg:        cfg.withDefaults(),
		log:        log,
		clock:      clock,
		logger:     logger.With("component", "group-coordinator"),
		partitions: make(map[int32]*partitionState),
		groups:     make(map[string]*group),
	}
	c.scheduleRetention()
	return c
}

// Close stops the coordinator's timers and unloads every partition; waiting
// JoinGroup/SyncGroup calls answer NOT_COORDINATOR.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.closed = true
	if c.retentionTimer != nil {
		c.retentionTimer.Stop()
	}
	var ps []int32
	for p := range c.partitions {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	for _, p := range ps {
		c.UnloadPartition(p)
	}
}

// PartitionFor is the __consumer_offsets partition of a group, Kafka's
// Utils.abs(groupId.hashCode) % offsets.topic.num.partitions.
func (c *Coordinator) PartitionFor(groupID string) int32 {
	return coordpartition.For(groupID, c.cfg.OffsetsTopicNumPartitions)
}

// status is Kafka's validateGroupStatus minus the group id check: the
// error code a request for groupID gets before touching the group.
func (c *Coordinator) status(groupID string) int16 {
	p := c.PartitionFor(groupID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return kerr.CoordinatorNotAvailable.Code
	}
	ps := c.partitions[p]
	switch {
	case ps == nil:
		return kerr.NotCoordinator.Code
	case ps.status == partitionLoading:
		return kerr.CoordinatorLoadInProgress.Code
	}
	return 0
}

func (c *Coordinator) lookup(groupID string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[groupID]
}

// getOrCreate returns the group, creating an Empty one when create is set.
// It returns nil if the group's partition is no longer loaded.
func (c *Coordinator) getOrCreate(groupID string, create bool) *group {
	p := c.PartitionFor(groupID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.groups[groupID]; g != nil || !create {
		return g
	}
	if ps := c.partitions[p]; ps == nil || ps.status != partitionLoaded {
		return nil
	}
	g := newGroup(groupID, p, c.clock.Now())
	c.groups[groupID] = g
	return g
}

// removeGroup drops a Dead group from the cache, unless it was already
// replaced. Called with g.mu held (g.mu may be taken before c.mu).
func (c *Coordinator) removeGroup(g *group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.groups[g.id] == g {
		delete(c.groups, g.id)
	}
	if ps := c.partitions[g.partition]; ps != nil {
		for pid := range g.pendingTxn {
			delete(ps.txnGroups[pid], g.id)
			if len(ps.txnGroups[pid]) == 0 {
				delete(ps.txnGroups, pid)
			}
		}
	}
}

// append writes group metadata or tombstones to the group's partition,
// bounded by offsets.commit.timeout.ms, and maps a failure to the error code
// Kafka gives clients (GroupMetadataManager.storeGroup).
func (c *Coordinator) append(ctx context.Context, partition int32, records []KV) int16 {
	_, err := c.write(ctx, partition, func(ctx context.Context) (int64, error) {
		return c.log.Append(ctx, partition, records)
	})
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable.Code
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator.Code
	case kerr.RequestTimedOut:
		return kerr.RebalanceInProgress.Code
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return kerr.UnknownServerError.Code
	}
	return ke.Code
}

// appendOffsets is append for offset commits, whose error mapping differs
// (GroupMetadataManager.storeOffsets); it returns the batch's base offset.
func (c *Coordinator) appendOffsets(ctx context.Context, partition int32, records []KV) (int64, int16) {
	base, err := c.write(ctx, partition, func(ctx context.Context) (int64, error) {
		return c.log.Append(ctx, partition, records)
	})
	return base, offsetCommitErrorCode(err)
}

// appendTxnOffsets is appendOffsets for a transactional batch.
func (c *Coordinator) appendTxnOffsets(ctx context.Context, partition int32, producerID int64, producerEpoch int16, guard VerificationGuard, records []KV) (int64, int16) {
	base, err := c.write(ctx, partition, func(ctx context.Context) (int64, error) {
		return c.log.AppendTransactional(ctx, partition, producerID, producerEpoch, guard, records)
	})
	return base, offsetCommitErrorCode(err)
}

// write runs one append bounded by offsets.commit.timeout.ms.
func (c *Coordinator) write(ctx context.Context, partition int32, appendFn func(context.Context) (int64, error)) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.OffsetCommitTimeout)
	defer cancel()
	base, err := appendFn(ctx)
	if err != nil {
		c.logger.Warn("append to __consumer_offsets failed", "partition", partition, "err", err)
	}
	return base, err
}

// offsetCommitErrorCode is Kafka's maybeConvertOffsetCommitError, for
// failed offset appends and failed KIP-890 verifications alike; an error
// that is not Kafka's means the log could not be reached.
func offsetCommitErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable.Code
	}
	switch ke {
	case kerr.NetworkException:
		// A verification that could not reach the transaction
		// coordinator: older clients retry this one without looking the
		// coordinator up again.
		return kerr.CoordinatorLoadInProgress.Code
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator.Code
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return kerr.InvalidCommitOffsetSize.Code
	}
	return ke.Code
}
