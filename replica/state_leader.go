package replica

import (
	"errors"
	"slices"
	"time"
)

// DefaultReplicaLagTimeMax is replica.lag.time.max.ms's default (30 s since
// Kafka 2.5, KIP-537).
const DefaultReplicaLagTimeMax = 30 * time.Second

// UnknownOffset is a follower's LEO or log start before its first fetch in
// this leadership (Kafka's UnifiedLog.UnknownOffset).
const UnknownOffset int64 = -1

// ErrUnknownReplica: a fetch from a broker that is not an assigned replica.
// The server answers UNKNOWN_LEADER_EPOCH when the request carried a leader
// epoch, NOT_LEADER_OR_FOLLOWER otherwise
// (Partition.updateFollowerFetchState).
var ErrUnknownReplica = errors.New("replica is not assigned to this partition")

// ErrNotLeader: the state machine is not (or no longer) the leader.
var ErrNotLeader = errors.New("not the leader of this partition")

// LeaderConfig holds the settings the leader's rules read.
type LeaderConfig struct {
	// ReplicaLagTimeMax is replica.lag.time.max.ms.
	ReplicaLagTimeMax time.Duration
	// MinInsyncReplicas is the topic's min.insync.replicas (or the broker
	// default).
	MinInsyncReplicas int
	// FollowerSilenceMax, when positive, also takes out of the ISR a
	// follower that is behind and has not fetched for this long, however
	// recently it was caught up (isr.go, MaybeShrinkIsr). Zero: only
	// ReplicaLagTimeMax applies, as in Kafka.
	FollowerSilenceMax time.Duration
	// SilentFollowerGrace keeps a follower that is both silent and past
	// ReplicaLagTimeMax in an ISR at min.insync.replicas this much longer
	// (isr.go, MaybeShrinkIsr): room for the controller, which handles a
	// broker that stopped answering, to move a cut-off leader's
	// partitions while their ISR still names a replica to elect. Zero:
	// the lag time alone, as in Kafka.
	SilentFollowerGrace time.Duration
	// FollowerFetchBackoff is the followers' replica.fetch.backoff.ms. A
	// follower that heard of this leadership before this broker did had
	// its first fetch refused (UNKNOWN_TOPIC_ID, a newer leader epoch) and
	// waits this long before the next one; until it has fetched in this
	// leadership, its silence may be this much longer.
	FollowerFetchBackoff time.Duration
}

// LeaderAndIsr is the part of a LeaderAndIsr partition state (or of the
// state znode) that the replication rules read.
type LeaderAndIsr struct {
	ControllerEpoch int32
	Leader          int32
	LeaderEpoch     int32
	Isr             []int32
	// PartitionEpoch is the state znode's version (zkVersion); leader-made
	// ISR writes are conditional on it.
	PartitionEpoch int32
	Replicas       []int32
}

// LeaderState is the leader's view of one partition (Partition.scala's leader
// half): assignment, ISR, epochs, local LEO and HW, and what it knows of each
// follower. It is pure: no IO, no clock, no locks. The owner serialises calls
// (in kbroker, under Partition.mu) and feeds it the time and the log's end
// offset.
//
// Invariants (checked by checkInvariants in tests):
//   - HW <= LEO, and the HW never moves backwards while leading (consumers
//     may already have read up to it);
//   - the leader is always in the ISR and never removes itself;
//   - the leader epoch never decreases (an older one is a stale request);
//   - at most one ISR change is in flight; while one is, no other is proposed
//     (Kafka 3.x's pending ISR state).
type LeaderState struct {
	localID int32
	cfg     LeaderConfig

	isLeader               bool
	replicas               []int32
	isr                    []int32 // committed: what the state znode says
	pending                *IsrChange
	pendingFailed          bool
	leaderEpoch            int32
	partitionEpoch         int32
	controllerEpoch        int32
	leaderEpochStartOffset int64

	logEndOffset  int64
	highWatermark int64
	// leaderSince is when this broker took the current leader epoch.
	leaderSince time.Time

	followers map[int32]*FollowerProgress
	// offline holds brokers not alive in the metadata cache: they may not
	// join the ISR and do not hold the HW back as "caught up" (3.x,
	// isReplicaIsrEligible).
	offline map[int32]bool
	// refusedUntil holds followers the controller would not let join the
	// ISR (not live, or shutting down) and until when the leader proposes
	// them no more; see RefuseIsrChange. An entry ends at the follower's
	// first fetch after that time.
	refusedUntil map[int32]time.Time
}

// FollowerProgress is what the leader knows about one follower (Kafka's
// ReplicaState in Replica.scala).
type FollowerProgress struct {
	LogStartOffset int64
	LogEndOffset   int64
	// LastFetchLeaderLogEndOffset is the leader's LEO when the previous
	// fetch arrived; reaching it counts as caught up as of that fetch.
	LastFetchLeaderLogEndOffset int64
	LastFetchTime               time.Time
	// LastCaughtUpTime is the last time the follower was known to hold
	// everything the leader had; zero means never in this leadership.
	LastCaughtUpTime time.Time
}

// isCaughtUp is ReplicaState.isCaughtUp: at the leader's LEO now, or caught
// up within the lag time.
func (f *FollowerProgress) isCaughtUp(leaderLogEndOffset int64, now time.Time, lag time.Duration) bool {
	return f.LogEndOffset == leaderLogEndOffset || now.Sub(f.LastCaughtUpTime) <= lag
}

// NewLeaderState returns the state of a partition this broker hosts but does
// not lead yet. highWatermark comes from replication-offset-checkpoint (or
// the follower's HW when a follower is promoted).
func NewLeaderState(localID int32, cfg LeaderConfig, highWatermark, logEndOffset int64) *LeaderState {
	if cfg.ReplicaLagTimeMax <= 0 {
		cfg.ReplicaLagTimeMax = DefaultReplicaLagTimeMax
	}
	if cfg.MinInsyncReplicas <= 0 {
		cfg.MinInsyncReplicas = 1
	}
	return &LeaderState{
		localID:        localID,
		cfg:            cfg,
		leaderEpoch:    -1,
		partitionEpoch: -1,
		logEndOffset:   logEndOffset,
		highWatermark:  min(highWatermark, logEndOffset),
		followers:      map[int32]*FollowerProgress{},
		offline:        map[int32]bool{},
		refusedUntil:   map[int32]time.Time{},
	}
}

// BecomeLeaderResult says what BecomeLeader did.
type BecomeLeaderResult struct {
	// Applied is false for a stale request (not a newer leader epoch, or an
	// older partition epoch); nothing changed.
	Applied bool
	// NewLeaderEpoch: the caller must append (LeaderEpoch, EpochStartOffset)
	// to the log's epoch cache and checkpoint now, before any write
	// (KAFKA-7415: a new leader's first write must find its epoch in the
	// cache, else followers truncate wrongly).
	NewLeaderEpoch   bool
	EpochStartOffset int64
	// HighWatermarkMoved: complete delayed operations.
	HighWatermarkMoved bool
}

// BecomeLeader applies a LeaderAndIsr naming this broker leader
// (Partition.makeLeader). In ZooKeeper mode a broker accepts only a strictly
// higher leader epoch (ReplicaManager.becomeLeaderOrFollower takes an equal
// one only from a KRaft controller); logEndOffset is the local log's LEO.
func (s *LeaderState) BecomeLeader(req LeaderAndIsr, logEndOffset int64, now time.Time) BecomeLeaderResult {
	if req.Leader != s.localID || req.LeaderEpoch <= s.leaderEpoch || req.PartitionEpoch < s.partitionEpoch {
		return BecomeLeaderResult{}
	}
	wasLeader := s.isLeader
	s.isLeader = true
	s.replicas = slices.Clone(req.Replicas)
	s.isr = slices.Clone(req.Isr)
	s.pending = nil
	s.pendingFailed = false
	clear(s.refusedUntil)
	s.controllerEpoch = req.ControllerEpoch
	s.partitionEpoch = req.PartitionEpoch
	s.leaderEpoch = req.LeaderEpoch
	s.leaderEpochStartOffset = logEndOffset
	s.logEndOffset = logEndOffset
	s.highWatermark = min(s.highWatermark, logEndOffset)
	s.leaderSince = now

	remote := map[int32]*FollowerProgress{}
	for _, id := range s.replicas {
		if id == s.localID {
			continue
		}
		f := s.followers[id]
		if f == nil || !wasLeader {
			f = &FollowerProgress{LogStartOffset: UnknownOffset, LogEndOffset: UnknownOffset, LastFetchLeaderLogEndOffset: UnknownOffset}
		}
		resetFollower(f, wasLeader, slices.Contains(s.isr, id), logEndOffset, now)
		remote[id] = f
	}
	s.followers = remote
	return BecomeLeaderResult{
		Applied:            true,
		NewLeaderEpoch:     true,
		EpochStartOffset:   logEndOffset,
		HighWatermarkMoved: s.MaybeIncrementHighWatermark(now),
	}
}

// resetFollower is ReplicaState.resetReplicaState. A follower outside the new
// ISR gets LastCaughtUpTime zero so that it does not hold the HW back
// (maybeIncrementLeaderHW ignores it); on re-election its LEO is kept but it
// must fetch again before it can rejoin (LastFetchTime zero).
func resetFollower(f *FollowerProgress, reElected, inIsr bool, epochStartOffset int64, now time.Time) {
	f.LastCaughtUpTime = time.Time{}
	if inIsr {
		f.LastCaughtUpTime = now
	}
	if !reElected {
		f.LastFetchTime = time.Time{}
		return
	}
	f.LastFetchLeaderLogEndOffset = epochStartOffset
	f.LastFetchTime = time.Time{}
	if inIsr {
		f.LastFetchTime = now
	}
}

// Resign marks the state as no longer leading (this broker became a
// follower or stopped hosting the partition). Every later call that needs
// leadership fails or reports nothing; pending delayed operations must be
// completed with NOT_LEADER_OR_FOLLOWER by the owner.
func (s *LeaderState) Resign() { s.isLeader = false; s.pending = nil }

// IsLeader reports whether this state is leading.
func (s *LeaderState) IsLeader() bool { return s.isLeader }

// AppendedAsLeader records the log's new LEO after a leader append and
// tries to advance the HW (the ISR may be just the leader).
func (s *LeaderState) AppendedAsLeader(logEndOffset int64, now time.Time) (highWatermarkMoved bool) {
	if logEndOffset > s.logEndOffset {
		s.logEndOffset = logEndOffset
	}
	return s.MaybeIncrementHighWatermark(now)
}

// SetBrokerAlive records whether a broker is alive in the metadata cache
// (ZooKeeper mode's ISR eligibility: Partition.isReplicaIsrEligible).
func (s *LeaderState) SetBrokerAlive(id int32, alive bool) {
	if alive {
		delete(s.offline, id)
	} else {
		s.offline[id] = true
	}
}

func (s *LeaderState) isIsrEligible(id int32) bool {
	_, refused := s.refusedUntil[id]
	return !s.offline[id] && !refused
}
