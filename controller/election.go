package controller

import (
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
)

// noLeader is the leader id of a partition without a leader.
const noLeader int32 = -1

// leaderAndIsr is a partition's leadership as its state znode stores it,
// plus the znode's version (the partition epoch).
type leaderAndIsr struct {
	Leader              int32
	LeaderEpoch         int32
	ISR                 []int32
	LeaderRecoveryState int8
	PartitionEpoch      int32 // zkVersion of the state znode it was read at
}

// next is the state after a leadership decision: every election and every
// ISR removal by the controller bumps the leader epoch by one. The
// partition epoch is unchanged here; it moves when the write succeeds.
func (l leaderAndIsr) next(leader int32, isr []int32, recovery int8) leaderAndIsr {
	return leaderAndIsr{
		Leader:              leader,
		LeaderEpoch:         l.LeaderEpoch + 1,
		ISR:                 isr,
		LeaderRecoveryState: recovery,
		PartitionEpoch:      l.PartitionEpoch,
	}
}

// liveness is the controller's view of which replicas of one partition can
// serve. Live holds registered brokers, including those in controlled
// shutdown; OfflineReplicas the replicas of this partition on failed log
// directories.
type liveness struct {
	Live            map[int32]bool
	ShuttingDown    map[int32]bool
	OfflineReplicas map[int32]bool
}

// online is Kafka's ControllerContext.isReplicaOnline: a shutting-down
// broker counts only when asked (the controlled-shutdown election).
func (l liveness) online(replica int32, includeShuttingDown bool) bool {
	if !l.Live[replica] || l.OfflineReplicas[replica] {
		return false
	}
	return includeShuttingDown || !l.ShuttingDown[replica]
}

func (l liveness) filterOnline(replicas []int32, includeShuttingDown bool) []int32 {
	out := []int32{}
	for _, r := range replicas {
		if l.online(r, includeShuttingDown) {
			out = append(out, r)
		}
	}
	return out
}

// electionResult is one partition's election. When Elected is false no
// replica qualified and the partition keeps its state (Offline stays
// offline, Online keeps its leader). Recipients get the LeaderAndIsr.
type electionResult struct {
	Elected    bool
	New        leaderAndIsr
	Unclean    bool // the leader came from outside the ISR
	Recipients []int32
}

// All strategies pick the first replica in assignment order that passes
// their filter (Kafka's PartitionLeaderElectionAlgorithms in Election.scala).

// electOffline elects for a partition whose leader is gone (broker failure,
// new partition retried, UNCLEAN ElectLeaders): the first live ISR member;
// failing that, only when unclean election is allowed (the topic's
// effective unclean.leader.election.enable, or an admin UNCLEAN election),
// the first live replica — which may lose committed data. The new ISR is
// the old one without offline replicas, or just the unclean leader, which
// then recovers (KIP-704) when the IBP supports it.
func electOffline(assignment []int32, cur leaderAndIsr, l liveness, allowUnclean, leaderRecoverySupported bool) electionResult {
	live := l.filterOnline(assignment, false)
	res := electionResult{Recipients: live}
	leader, ok := firstMatch(assignment, func(r int32) bool {
		return l.online(r, false) && slices.Contains(cur.ISR, r)
	})
	if !ok && allowUnclean && len(live) > 0 {
		leader, ok, res.Unclean = live[0], true, true
	}
	if !ok {
		return res
	}
	res.Elected = true
	if res.Unclean {
		recovery := kafkazk.LeaderRecovered
		if leaderRecoverySupported {
			recovery = kafkazk.LeaderRecovering
		}
		res.New = cur.next(leader, []int32{leader}, recovery)
		return res
	}
	res.New = cur.next(leader, l.filterOnline(cur.ISR, false), cur.LeaderRecoveryState)
	return res
}

// electReassign elects from the reassignment's target replicas: the first
// live ISR member among them. The ISR is unchanged.
func electReassign(target []int32, cur leaderAndIsr, l liveness) electionResult {
	res := electionResult{Recipients: slices.Clone(target)}
	leader, ok := firstMatch(target, func(r int32) bool {
		return l.online(r, false) && slices.Contains(cur.ISR, r)
	})
	if ok {
		res.Elected = true
		res.New = cur.next(leader, slices.Clone(cur.ISR), cur.LeaderRecoveryState)
	}
	return res
}

// electPreferred moves leadership to the preferred replica, assignment[0],
// and only to it, when it is live and in the ISR. The ISR is unchanged.
// Whether the election is needed at all (leader already preferred) is the
// caller's question (ELECTION_NOT_NEEDED).
func electPreferred(assignment []int32, cur leaderAndIsr, l liveness) electionResult {
	res := electionResult{Recipients: slices.Clone(assignment)}
	if len(assignment) == 0 {
		return res
	}
	preferred := assignment[0]
	if l.online(preferred, false) && slices.Contains(cur.ISR, preferred) {
		res.Elected = true
		res.New = cur.next(preferred, slices.Clone(cur.ISR), cur.LeaderRecoveryState)
	}
	return res
}

// electControlledShutdown moves leadership off shutting-down brokers: the
// first ISR member that is live and not shutting down. Every shutting-down
// broker leaves the ISR. Shutting-down replicas still receive the
// LeaderAndIsr, so the old leader becomes a follower before it stops.
func electControlledShutdown(assignment []int32, cur leaderAndIsr, l liveness) electionResult {
	res := electionResult{Recipients: l.filterOnline(assignment, true)}
	leader, ok := firstMatch(assignment, func(r int32) bool {
		return l.online(r, true) && slices.Contains(cur.ISR, r) && !l.ShuttingDown[r]
	})
	if !ok {
		return res
	}
	isr := []int32{}
	for _, r := range cur.ISR {
		if !l.ShuttingDown[r] {
			isr = append(isr, r)
		}
	}
	res.Elected = true
	res.New = cur.next(leader, isr, cur.LeaderRecoveryState)
	return res
}

// initialLeaderAndIsr is the New → Online transition of a new partition:
// leader the first live replica, ISR every live replica in assignment
// order, leader epoch 0. No live replica: the partition stays New.
func initialLeaderAndIsr(assignment []int32, l liveness) (leaderAndIsr, bool) {
	live := l.filterOnline(assignment, false)
	if len(live) == 0 {
		return leaderAndIsr{}, false
	}
	return leaderAndIsr{Leader: live[0], LeaderEpoch: 0, ISR: live}, true
}

// removeFromIsr is the controller's ISR removal when a replica goes
// offline (broker failure, controlled shutdown of a follower): the replica
// leaves the ISR unless it is the last member — an ISR is never written
// empty, so the last member stays as a record of who has the data — and if
// it led, the partition is left without a leader. Changed is false when the
// replica was not in the ISR: nothing to write.
func removeFromIsr(cur leaderAndIsr, replica int32) (next leaderAndIsr, changed bool) {
	if !slices.Contains(cur.ISR, replica) {
		return cur, false
	}
	isr := slices.Clone(cur.ISR)
	if len(isr) > 1 {
		isr = slices.DeleteFunc(isr, func(r int32) bool { return r == replica })
	}
	leader := cur.Leader
	if leader == replica {
		leader = noLeader
	}
	return cur.next(leader, isr, cur.LeaderRecoveryState), true
}

func firstMatch(replicas []int32, ok func(int32) bool) (int32, bool) {
	for _, r := range replicas {
		if ok(r) {
			return r, true
		}
	}
	return noLeader, false
}
