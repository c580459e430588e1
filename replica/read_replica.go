package replica

import (
	"cmp"
	"time"
)

// Follower fetching (KIP-392): the leader of a partition tells a consumer
// which replica to read from, and followers serve consumers up to their
// own high watermark. The rules, from Kafka 3.9 (docs/follower-fetching.md):
// ReplicaManager.findPreferredReadReplica picks the candidates, the
// configured ReplicaSelector picks one of them, and a pick of the leader
// (or of a replica without an endpoint on the client's listener) answers
// no preferred replica (-1).

// ReplicaSelector is replica.selector.class: which of Kafka's two
// selectors the broker runs.
type ReplicaSelector int8

const (
	// SelectLeader is Kafka's LeaderSelector, and what an unset
	// replica.selector.class means: every consumer reads from the leader.
	SelectLeader ReplicaSelector = iota
	// SelectRackAware is Kafka's RackAwareReplicaSelector: a consumer
	// whose client.rack holds an in-sync replica and not the leader is
	// sent to the most caught-up replica of its rack.
	SelectRackAware
)

// ReadReplicaView is one replica a consumer might read from (Kafka's
// ReplicaView), with its rack from the metadata cache.
type ReadReplicaView struct {
	ID int32
	// Rack is nil for a broker without broker.rack; HasEndpoint is false
	// when the broker has no endpoint on the client's listener: Kafka then
	// uses Node.noNode(), whose rack is null, so it is in no rack.
	Rack        *string
	HasEndpoint bool
	// LogEndOffset is the replica's as the leader last saw it;
	// SinceCaughtUp the time since it was last caught up (0 for the
	// leader). They order the candidates of a rack (ReplicaView.comparator).
	LogEndOffset  int64
	SinceCaughtUp time.Duration
}

// ReadReplicaCandidate is a follower the leader may offer a consumer that
// fetches at some offset (LeaderState.ReadReplicaCandidates).
type ReadReplicaCandidate struct {
	ID            int32
	LogEndOffset  int64
	SinceCaughtUp time.Duration
}

// ReadReplicaCandidates are the followers a consumer fetching at
// fetchOffset may be sent to, as Kafka's findPreferredReadReplica filters
// the remote replicas: in the committed ISR (a lagging follower would keep
// the consumer behind the producers for as long as it lags), holding
// fetchOffset as of the follower's last fetch (log start <= fetchOffset <=
// log end). Nil when not leader.
func (s *LeaderState) ReadReplicaCandidates(fetchOffset int64, now time.Time) []ReadReplicaCandidate {
	if !s.isLeader {
		return nil
	}
	var out []ReadReplicaCandidate
	for _, id := range s.isr {
		f, ok := s.followers[id]
		if !ok || f.LogEndOffset < fetchOffset || f.LogStartOffset > fetchOffset {
			continue
		}
		out = append(out, ReadReplicaCandidate{ID: id, LogEndOffset: f.LogEndOffset, SinceCaughtUp: now.Sub(f.LastCaughtUpTime)})
	}
	return out
}

// SelectReadReplica is the replica selector's choice for a consumer in
// clientRack ("" when it sent none) among replicas (the candidates and
// the leader), turned into the Fetch response's preferred_read_replica:
// -1 for the leader (Kafka never sends the leader's id there).
//
// RackAwareReplicaSelector: with no client rack, or no replica in it, or
// the leader in it, the leader; otherwise the greatest replica of the rack
// by log end offset, then least time since caught up, then broker id.
func SelectReadReplica(sel ReplicaSelector, clientRack string, leader ReadReplicaView, replicas []ReadReplicaView) int32 {
	if sel != SelectRackAware || clientRack == "" {
		return -1
	}
	inRack := func(r ReadReplicaView) bool { return r.HasEndpoint && r.Rack != nil && *r.Rack == clientRack }
	if inRack(leader) {
		return -1
	}
	var best *ReadReplicaView
	for i := range replicas {
		r := &replicas[i]
		if r.ID == leader.ID || !inRack(*r) {
			continue
		}
		if best == nil || compareReadReplicas(*r, *best) > 0 {
			best = r
		}
	}
	if best == nil {
		return -1
	}
	return best.ID
}

// compareReadReplicas is Kafka's ReplicaView.comparator: more caught up
// is greater.
func compareReadReplicas(a, b ReadReplicaView) int {
	if c := cmp.Compare(a.LogEndOffset, b.LogEndOffset); c != 0 {
		return c
	}
	if c := cmp.Compare(b.SinceCaughtUp, a.SinceCaughtUp); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// servesConsumersLocked: a consumer that may read any replica reads this
// one while it leads or follows a leader, not once stopped or offline
// (Kafka's localLogWithEpochOrThrow with requireLeader false). The caller
// holds mu.
func (p *Partition) servesConsumersLocked() bool {
	return !p.stopped && !p.offline.Load() && (p.leader || p.followerState.LeaderID() >= 0)
}

// ServesConsumers reports whether a consumer fetching with Fetch v11+,
// which may read a follower, may read this replica (servesConsumersLocked).
func (p *Partition) ServesConsumers() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.servesConsumersLocked()
}

// PreferredReadReplica is, on the leader, the replica sel sends a consumer
// in clientRack fetching at fetchOffset to; -1 for the leader itself and
// on a follower (only the leader chooses). view gives a broker's rack and
// whether it has an endpoint on the client's listener, from the metadata
// cache; it is called once the partition's lock is released.
func (p *Partition) PreferredReadReplica(sel ReplicaSelector, clientRack string, fetchOffset int64, view func(id int32) (rack *string, hasEndpoint bool)) int32 {
	p.mu.Lock()
	if !p.leader {
		p.mu.Unlock()
		return -1
	}
	cands := p.leaderState.ReadReplicaCandidates(fetchOffset, p.opts.Now())
	leader := ReadReplicaView{ID: p.opts.LocalID, LogEndOffset: p.log.LogEndOffset()}
	p.mu.Unlock()
	if len(cands) == 0 {
		return -1 // the leader is the only choice
	}
	leader.Rack, leader.HasEndpoint = view(leader.ID)
	views := make([]ReadReplicaView, len(cands))
	for i, c := range cands {
		views[i] = ReadReplicaView{ID: c.ID, LogEndOffset: c.LogEndOffset, SinceCaughtUp: c.SinceCaughtUp}
		views[i].Rack, views[i].HasEndpoint = view(c.ID)
	}
	return SelectReadReplica(sel, clientRack, leader, views)
}
