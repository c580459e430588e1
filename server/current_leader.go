package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KIP-951: a NOT_LEADER_OR_FOLLOWER (or FENCED_LEADER_EPOCH) answer to
// Produce v10+ and Fetch v12+ names the partition's current leader and
// epoch, and (Produce v10+, Fetch v16+) that leader's endpoint, so the
// client redirects without a Metadata round trip.

// leaderHint is the current leader of a partition as the metadata cache
// knows it.
type leaderHint struct {
	ID, Epoch int32
}

// currentLeader returns the leader hint for errors that warrant one: the
// metadata cache's leader, or this broker's own replica's leader when its
// LeaderAndIsr is newer. Leadership moves by LeaderAndIsr first and
// UpdateMetadata just after, so a request that leadership left in between
// (a produce waiting for acks=all when this broker became a follower) would
// otherwise be pointed back at this broker.
func (b *Broker) currentLeader(t *Topic, partition int32, code int16) (leaderHint, bool) {
	if code != kerr.NotLeaderForPartition.Code && code != kerr.FencedLeaderEpoch.Code {
		return leaderHint{}, false
	}
	s, ok := t.state(partition)
	if !ok {
		return leaderHint{}, false
	}
	h := leaderHint{ID: s.Leader, Epoch: s.LeaderEpoch}
	if int(partition) < len(t.Partitions) {
		if p := t.Partitions[partition]; p != nil && !p.Offline() && !p.IsLeader() {
			if id, epoch := p.LeaderID(), p.LeaderEpoch(); id >= 0 && epoch > h.Epoch {
				h = leaderHint{ID: id, Epoch: epoch}
			}
		}
	}
	if h.ID < 0 || h.ID == b.cfg.BrokerID && t.leadershipSuspended(partition) {
		return leaderHint{}, false
	}
	return h, true
}

// leaderEndpoints are the named brokers' endpoints on a listener.
func (b *Broker) leaderEndpoints(listener string, ids map[int32]bool) []brokerInfo {
	var out []brokerInfo
	for _, bi := range b.brokersFor(listener) {
		if ids[bi.ID] {
			out = append(out, bi)
		}
	}
	return out
}

// addProduceLeaderHints fills CurrentLeader and the node endpoints of a
// Produce v10+ response.
func (b *Broker) addProduceLeaderHints(resp *kmsg.ProduceResponse, listener string) {
	if resp.Version < 10 {
		return
	}
	ids := map[int32]bool{}
	for ti := range resp.Topics {
		rt := &resp.Topics[ti]
		t := b.topic(rt.Topic)
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			if h, ok := b.currentLeader(t, rp.Partition, rp.ErrorCode); ok {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = h.ID, h.Epoch
				ids[h.ID] = true
			}
		}
	}
	for _, bi := range b.leaderEndpoints(listener, ids) {
		nb := kmsg.NewProduceResponseBroker()
		nb.NodeID, nb.Host, nb.Port, nb.Rack = bi.ID, bi.Host, bi.Port, bi.Rack
		resp.Brokers = append(resp.Brokers, nb)
	}
}

// addFetchLeaderHints does the same for Fetch v12+ (endpoints from v16).
func (b *Broker) addFetchLeaderHints(resp *kmsg.FetchResponse, listener string) {
	if resp.Version < 12 {
		return
	}
	ids := map[int32]bool{}
	for ti := range resp.Topics {
		rt := &resp.Topics[ti]
		var t *Topic
		if resp.Version >= 13 {
			t = b.topicByID(rt.TopicID)
		} else {
			t = b.topic(rt.Topic)
		}
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			if h, ok := b.currentLeader(t, rp.Partition, rp.ErrorCode); ok {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = h.ID, h.Epoch
				ids[h.ID] = true
			}
		}
	}
	if resp.Version < 16 {
		return
	}
	for _, bi := range b.leaderEndpoints(listener, ids) {
		nb := kmsg.NewFetchResponseBroker()
		nb.NodeID, nb.Host, nb.Port, nb.Rack = bi.ID, bi.Host, bi.Port, bi.Rack
		resp.Brokers = append(resp.Brokers, nb)
	}
}
