package replica

import (
	"slices"
	"time"
)

// IsrChangeKind says whether a leader-made ISR change adds or removes.
type IsrChangeKind int

const (
	IsrShrink IsrChangeKind = iota + 1
	IsrExpand
)

func (k IsrChangeKind) String() string {
	switch k {
	case IsrShrink:
		return "shrink"
	case IsrExpand:
		return "expand"
	}
	return "unknown"
}

// IsrChange is a leader-made ISR change to persist
// (Partition.prepareIsrShrink / prepareIsrExpand and
// ZkAlterPartitionManager): the owner writes {leader: LocalID, leader_epoch:
// LeaderEpoch, isr: Isr, controller_epoch: ControllerEpoch} to the
// partition's state znode with expected version PartitionEpoch, then calls
// CompleteIsrChange (success, with the znode's new version) or FailIsrChange
// (version conflict or no node). The leader epoch is unchanged: only
// controller-made changes bump it.
type IsrChange struct {
	Kind            IsrChangeKind
	Isr             []int32 // the proposed ISR
	Changed         []int32 // the replicas removed (shrink) or added (expand)
	LeaderEpoch     int32
	ControllerEpoch int32
	PartitionEpoch  int32 // the version the write is conditional on
	// FollowersFetching, on a shrink, says that the proposed ISR keeps a
	// follower and that every follower it keeps fetched within the last
	// half of FollowerSilenceMax: this leader still hears from them, so
	// it is not the broker cut off. Only then may the shrink be written
	// without the controller (server's controllerClient).
	FollowersFetching bool
}

func (c IsrChange) clone() IsrChange {
	c.Isr = slices.Clone(c.Isr)
	c.Changed = slices.Clone(c.Changed)
	return c
}

// MaybeShrinkIsr is the isr-expiration task's check
// (Partition.maybeShrinkIsr), run every replica.lag.time.max.ms / 2: every
// ISR follower that is not caught up (LEO below the leader's and last caught
// up more than the lag time ago) is proposed for removal. The leader never
// removes itself. Nothing is proposed while another ISR change is in flight,
// including one whose write failed (3.9 waits for the next LeaderAndIsr).
func (s *LeaderState) MaybeShrinkIsr(now time.Time) *IsrChange {
	if !s.isLeader || s.pending != nil {
		return nil
	}
	var out, silent []int32
	for _, id := range s.isr {
		if id == s.localID {
			continue
		}
		f, ok := s.followers[id]
		switch {
		case !ok:
			out = append(out, id)
		case s.silent(f, now) && f.isCaughtUp(s.logEndOffset, now, s.cfg.ReplicaLagTimeMax+s.cfg.SilentFollowerGrace):
			silent = append(silent, id)
		case !f.isCaughtUp(s.logEndOffset, now, s.cfg.ReplicaLagTimeMax):
			out = append(out, id)
		}
	}
	// Silence never takes the ISR below min.insync.replicas, nor does the
	// lag time within SilentFollowerGrace of it when the lagging follower
	// is also silent. When that many followers fall silent at once, this
	// leader is the likelier one to be cut off, and the controller's probes
	// move its leadership within seconds; an ISR of itself alone would
	// leave the controller no replica to elect in its place, and acks=all
	// writes are refused either way.
	if len(s.isr)-len(out)-len(silent) >= s.EffectiveMinIsr() {
		out = append(out, silent...)
	}
	if len(out) == 0 {
		return nil
	}
	newIsr := slices.DeleteFunc(slices.Clone(s.isr), func(id int32) bool { return slices.Contains(out, id) })
	c := s.propose(IsrShrink, newIsr, out)
	c.FollowersFetching = s.followersFetching(newIsr, now)
	return c
}

// followersFetching: isr keeps a follower, and every follower in it
// fetched within the last half of FollowerSilenceMax. A follower that is
// behind gets its fetch answered at once and fetches again, so one that
// is fetching is heard from every few milliseconds while records arrive;
// when this leader is the one cut off, every follower falls silent at
// once, and one that has not yet been judged silent has not been heard
// from for nearly FollowerSilenceMax either.
func (s *LeaderState) followersFetching(isr []int32, now time.Time) bool {
	if s.cfg.FollowerSilenceMax <= 0 {
		return false
	}
	heard := false
	for _, id := range isr {
		if id == s.localID {
			continue
		}
		f, ok := s.followers[id]
		if !ok || now.Sub(f.LastFetchTime) > s.cfg.FollowerSilenceMax/2 {
			return false
		}
		heard = true
	}
	return heard
}

// silent: the follower is behind and has sent no fetch for
// FollowerSilenceMax. A live follower fetches continuously (a fetch parked
// at the leader waits at most replica.fetch.wait.max.ms), so one that has
// gone quiet is dead, paused or cut off, and every acks=all write waits
// for it until it leaves the ISR: by Kafka's rule alone that is
// replica.lag.time.max.ms after it was last caught up (30 s by default).
// Its last fetch, or its last catch-up if later (set for every ISR member
// when this broker became leader), is when it was last heard from. One
// that has not fetched since this broker became leader gets
// FollowerFetchBackoff more: its fetcher may have asked before this broker
// knew of the leadership, and backs off before asking again.
func (s *LeaderState) silent(f *FollowerProgress, now time.Time) bool {
	if s.cfg.FollowerSilenceMax <= 0 || f.LogEndOffset >= s.logEndOffset {
		return false
	}
	limit := s.cfg.FollowerSilenceMax
	if !f.LastFetchTime.After(s.leaderSince) {
		limit += s.cfg.FollowerFetchBackoff
	}
	return now.Sub(later(f.LastFetchTime, f.LastCaughtUpTime)) > limit
}

// MaybeExpandIsr is Partition.maybeExpandIsr, run after each follower fetch:
// a follower outside the ISR joins when it is eligible (its broker alive),
// its LEO reached the leader's HW (not LEO: lag time is deliberately not
// checked on the way in), and it holds everything from earlier epochs (LEO >=
// the leader-epoch start offset), so that it cannot become leader while
// missing committed data.
func (s *LeaderState) MaybeExpandIsr(replicaID int32) *IsrChange {
	if !s.isLeader || s.pending != nil || slices.Contains(s.isr, replicaID) || !s.isIsrEligible(replicaID) {
		return nil
	}
	f, ok := s.followers[replicaID]
	if !ok || f.LogEndOffset < s.highWatermark || f.LogEndOffset < s.leaderEpochStartOffset {
		return nil
	}
	return s.propose(IsrExpand, append(slices.Clone(s.isr), replicaID), []int32{replicaID})
}

func (s *LeaderState) propose(kind IsrChangeKind, isr, changed []int32) *IsrChange {
	c := IsrChange{
		Kind:            kind,
		Isr:             isr,
		Changed:         changed,
		LeaderEpoch:     s.leaderEpoch,
		ControllerEpoch: s.controllerEpoch,
		PartitionEpoch:  s.partitionEpoch,
	}
	s.pending = &c
	s.pendingFailed = false
	out := c.clone()
	return &out
}

// CompleteIsrChange applies an ISR change whose conditional znode write
// succeeded with newPartitionEpoch as the znode's new version (a BADVERSION
// whose read-back equals the proposed data counts as success: it was our own
// write whose reply was lost). A shrink may let the HW advance. It reports
// false for a change that is not the one in flight (a LeaderAndIsr replaced
// it meanwhile): then nothing changes.
func (s *LeaderState) CompleteIsrChange(c IsrChange, newPartitionEpoch int32, now time.Time) (applied, highWatermarkMoved bool) {
	if !s.isPending(c) {
		return false, false
	}
	s.isr = slices.Clone(c.Isr)
	s.partitionEpoch = newPartitionEpoch
	s.pending = nil
	return true, s.MaybeIncrementHighWatermark(now)
}

// FailIsrChange records that the write failed (BADVERSION with other data, or
// NONODE). As in 3.9 the committed ISR is unchanged and the change stays in
// flight: no further ISR change is attempted until the controller's next
// LeaderAndIsr, which carries the newer state. Kafka 3.9 in ZooKeeper mode
// does not retry or clear the pending change on such a failure: only a
// LeaderAndIsr ends it, so we do the same. The leader never re-reads the
// znode itself.
func (s *LeaderState) FailIsrChange(c IsrChange) bool {
	if !s.isPending(c) {
		return false
	}
	s.pendingFailed = true
	return true
}

// AbandonIsrChange drops a pending change whose write never reached the
// store, so that the next check may propose one again.
func (s *LeaderState) AbandonIsrChange(c IsrChange) bool {
	if !s.isPending(c) {
		return false
	}
	s.pending = nil
	return true
}

// IneligibleReplicaBackoff is how long a leader leaves out of its ISR
// proposals a follower the controller refused as ineligible. Kafka's
// leader proposes it again on the follower's next fetch; a caught-up
// follower of a broker in controlled shutdown fetches every few
// milliseconds under load, and the refusals flooded the controller while it
// was moving that broker's leaderships.
const IneligibleReplicaBackoff = time.Second

// RefuseIsrChange drops a pending expansion the controller refused because
// a new member is not eligible (INELIGIBLE_REPLICA, or
// OPERATION_NOT_ATTEMPTED before AlterPartition v2). The members it would
// have added are not proposed again for IneligibleReplicaBackoff, and they
// stop holding the HW back as caught-up followers until they fetch after
// it: a broker in controlled shutdown stops fetching when it leaves, and
// waiting for it would hold every acks=all write until it counted as
// silent.
func (s *LeaderState) RefuseIsrChange(c IsrChange, now time.Time) bool {
	if !s.isPending(c) {
		return false
	}
	s.pending = nil
	if c.Kind == IsrExpand {
		for _, id := range c.Changed {
			s.refusedUntil[id] = now.Add(IneligibleReplicaBackoff)
		}
	}
	return true
}

// IsrUpdateBlocked reports a failed ISR write awaiting a LeaderAndIsr.
func (s *LeaderState) IsrUpdateBlocked() bool { return s.pending != nil && s.pendingFailed }

func (s *LeaderState) isPending(c IsrChange) bool {
	return s.isLeader && s.pending != nil && !s.pendingFailed && s.pending.Kind == c.Kind &&
		s.pending.PartitionEpoch == c.PartitionEpoch && slices.Equal(s.pending.Isr, c.Isr)
}

// HasSilentIsrFollower reports an ISR follower that is behind and has not
// fetched for FollowerSilenceMax: this leader may be the one cut off.
func (s *LeaderState) HasSilentIsrFollower(now time.Time) bool {
	if !s.isLeader {
		return false
	}
	for _, id := range s.isr {
		if f, ok := s.followers[id]; ok && id != s.localID && s.silent(f, now) {
			return true
		}
	}
	return false
}
