package replica

import "slices"

// Read-only views of LeaderState. Slices are copies.

func (s *LeaderState) LocalID() int32        { return s.localID }
func (s *LeaderState) LeaderEpoch() int32    { return s.leaderEpoch }
func (s *LeaderState) PartitionEpoch() int32 { return s.partitionEpoch }
func (s *LeaderState) LogEndOffset() int64   { return s.logEndOffset }
func (s *LeaderState) HighWatermark() int64  { return s.highWatermark }

// Isr is the committed ISR: what the state znode holds.
func (s *LeaderState) Isr() []int32 { return slices.Clone(s.isr) }

// MaximalIsr is the committed ISR plus a replica whose addition is in
// flight (a pending shrink still counts its victims): the HW and acks=-1
// use it, because assuming the larger set is the safe side (3.x).
func (s *LeaderState) MaximalIsr() []int32 { return slices.Clone(s.maximalIsr()) }

// maximalIsr is MaximalIsr without the copy, for the HW and acks=-1
// checks, which only read it.
func (s *LeaderState) maximalIsr() []int32 {
	if s.pending != nil && s.pending.Kind == IsrExpand {
		return s.pending.Isr
	}
	return s.isr
}

// Follower returns a copy of what the leader knows about follower id.
func (s *LeaderState) Follower(id int32) (FollowerProgress, bool) {
	f, ok := s.followers[id]
	if !ok {
		return FollowerProgress{}, false
	}
	return *f, true
}

// EffectiveMinIsr is min(min.insync.replicas, replication factor) (3.7+;
// 2.6 used the configured value and failed every acks=-1 write when it
// exceeded the replication factor).
func (s *LeaderState) EffectiveMinIsr() int {
	return min(s.cfg.MinInsyncReplicas, len(s.followers)+1)
}

// IsUnderMinIsr: the committed ISR is smaller than the effective min ISR.
// The HW does not advance then (KAFKA-15583) and acks=-1 is refused.
func (s *LeaderState) IsUnderMinIsr() bool {
	return s.isLeader && len(s.isr) < s.EffectiveMinIsr()
}

// IsAtMinIsr: the ISR is exactly at min.insync.replicas (AtMinIsr metric).
func (s *LeaderState) IsAtMinIsr() bool {
	return s.isLeader && len(s.isr) == s.EffectiveMinIsr()
}

// IsUnderReplicated: the ISR is smaller than the assignment
// (UnderReplicatedPartitions, --under-replicated-partitions).
func (s *LeaderState) IsUnderReplicated() bool {
	return s.isLeader && len(s.isr) < len(s.replicas)
}

// SetMinInsyncReplicas applies a changed min.insync.replicas (a topic
// config change); it takes effect at the next HW or produce check.
func (s *LeaderState) SetMinInsyncReplicas(n int) {
	if n <= 0 {
		n = 1
	}
	s.cfg.MinInsyncReplicas = n
}
