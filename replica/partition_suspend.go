package replica

// A leader can be replaced without hearing of it: when it is cut off from
// ZooKeeper, its session expires and the controller elects another leader,
// but the LeaderAndIsr that would tell it cannot reach it while it has no
// session. Until then it would keep answering Metadata as the leader and
// keep clients waiting on acks=all writes that its followers, now fetching
// from the new leader, never acknowledge. Suspending the leadership makes
// it refuse writes (NOT_LEADER_OR_FOLLOWER) and lets the broker's Metadata
// name no leader, so clients ask elsewhere and find the new one. The
// suspension is no decision about the partition: it keeps its leader epoch
// and HW, and ends with the next word from ZooKeeper or the controller —
// ResumeLeadership when ZooKeeper still names this broker, a LeaderAndIsr
// (BecomeLeader, BecomeFollower) or a deposition otherwise.

// SuspendLeadership suspends this broker's leadership of the partition.
// It reports false when there was nothing to suspend: not the leader, or
// already suspended.
func (p *Partition) SuspendLeadership() bool {
	p.mu.Lock()
	defer p.unlock()
	if !p.leader || p.suspended.Load() {
		return false
	}
	p.suspended.Store(true)
	// Waiting acks=all produces are answered now, not at their timeout.
	p.wakeLocked()
	return true
}

// ResumeLeadership ends a suspension when ZooKeeper still names this
// broker leader at the epoch it leads: its session survived, or nobody
// acted on its expiry yet. It reports whether the leadership resumed.
func (p *Partition) ResumeLeadership(leaderEpoch int32) bool {
	p.mu.Lock()
	defer p.unlock()
	if !p.leader || !p.suspended.Load() || p.leaderState.LeaderEpoch() != leaderEpoch {
		return false
	}
	p.suspended.Store(false)
	return true
}

// LeadershipSuspended reports a suspended leadership (SuspendLeadership).
func (p *Partition) LeadershipSuspended() bool { return p.suspended.Load() }

// leadingLocked is whether the partition takes writes here: led and not
// suspended. The caller holds mu.
func (p *Partition) leadingLocked() bool { return p.leader && !p.suspended.Load() }
