package group

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LoadPartition makes this coordinator serve the groups of __consumer_offsets
// partition p (the broker became its leader): it replays the partition and
// rebuilds groups and committed offsets. Until it returns, requests for
// those groups get COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) LoadPartition(p int32) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errors.New("group coordinator closed")
	}
	if ps := c.partitions[p]; ps != nil {
		c.mu.Unlock()
		return nil // already loaded or loading
	}
	c.loadEpoch++
	epoch := c.loadEpoch
	c.partitions[p] = &partitionState{status: partitionLoading, epoch: epoch}
	c.mu.Unlock()

	start := c.clock.Now()
	r := newReplayedPartition()
	skipped := 0
	err := c.log.Replay(p, func(b ReplayedBatch) error {
		n, err := r.applyBatch(b)
		skipped += n
		return err
	})
	if err != nil {
		c.mu.Lock()
		if ps := c.partitions[p]; ps != nil && ps.epoch == epoch {
			delete(c.partitions, p)
		}
		c.mu.Unlock()
		return fmt.Errorf("loading __consumer_offsets-%d: %w", p, err)
	}

	now := c.clock.Now()
	groups := make(map[string]*group)
	for id, v := range r.groups {
		groups[id] = c.groupFromRecord(id, p, v, r.offsets[id], now)
	}
	// Groups that only committed offsets (simple consumers, or groups
	// whose metadata was never written or was deleted), or only have
	// offsets in an open transaction, come back Empty so OffsetFetch and
	// DescribeGroups keep working after a restart, as in Kafka.
	orphan := func(id string) *group {
		g := groups[id]
		if g == nil {
			g = newGroup(id, p, now)
			groups[id] = g
		}
		return g
	}
	for id, offs := range r.offsets {
		if _, ok := r.groups[id]; !ok {
			orphan(id).offsets = offs
		}
	}
	txnGroups := make(map[int64]map[string]struct{})
	for pid, byGroup := range r.pending {
		for id, offs := range byGroup {
			orphan(id).pendingTxn[pid] = offs
			if txnGroups[pid] == nil {
				txnGroups[pid] = make(map[string]struct{})
			}
			txnGroups[pid][id] = struct{}{}
		}
	}

	c.mu.Lock()
	ps := c.partitions[p]
	if ps == nil || ps.epoch != epoch {
		c.mu.Unlock()
		return nil // unloaded while loading: drop what was read
	}
	for _, g := range groups {
		c.groups[g.id] = g
	}
	ps.txnGroups = txnGroups
	c.mu.Unlock()
	if !c.applyDeferredMarkers(p, epoch) {
		return nil
	}

	// Members of a loaded group get a fresh session; those that do not
	// heartbeat again expire and trigger a rebalance, as in Kafka.
	for _, g := range groups {
		g.mu.Lock()
		for _, m := range g.members {
			c.scheduleHeartbeat(g, m, m.sessionTimeout)
		}
		g.mu.Unlock()
	}
	c.logger.Info("loaded __consumer_offsets partition", "partition", p, "groups", len(groups),
		"skipped_records", skipped, "took", c.clock.Now().Sub(start))
	return nil
}

// applyDeferredMarkers applies, in order, the transaction markers reported
// while partition p loaded, then opens the partition to requests. Markers
// that the replay already read find nothing left to complete; those
// appended after the replay's last read are applied here, before any
// TxnOffsetCommit of a next transaction can reach the groups. It reports
// false when an unload or reload overtook the load.
func (c *Coordinator) applyDeferredMarkers(p int32, epoch uint64) bool {
	for {
		c.mu.Lock()
		ps := c.partitions[p]
		if ps == nil || ps.epoch != epoch {
			c.mu.Unlock()
			return false
		}
		markers := ps.deferredMarkers
		ps.deferredMarkers = nil
		if len(markers) == 0 {
			ps.status = partitionLoaded
			c.mu.Unlock()
			return true
		}
		c.mu.Unlock()
		for _, m := range markers {
			c.completeTransaction(p, m.producerID, m.commit, true)
		}
	}
}

func (c *Coordinator) groupFromRecord(id string, p int32, v *kmsg.GroupMetadataValue, offs map[topicPartition]committedOffset, now time.Time) *group {
	g := newGroup(id, p, now)
	if offs != nil {
		g.offsets = offs
	}
	g.protocolType = v.ProtocolType
	g.generation = v.Generation
	if v.Protocol != nil {
		g.protocol = *v.Protocol
	}
	if v.Leader != nil {
		g.leader = *v.Leader
	}
	if v.CurrentStateTimestamp >= 0 {
		g.stateTimestamp = time.UnixMilli(v.CurrentStateTimestamp)
	} else {
		g.stateTimestamp = time.Time{}
	}
	for _, mv := range v.Members {
		m := &member{
			id:               mv.MemberID,
			instanceID:       mv.InstanceID,
			clientID:         mv.ClientID,
			clientHost:       mv.ClientHost,
			rebalanceTimeout: time.Duration(mv.RebalanceTimeoutMillis) * time.Millisecond,
			sessionTimeout:   time.Duration(mv.SessionTimeoutMillis) * time.Millisecond,
			protocolType:     v.ProtocolType,
			protocols:        []protocol{{name: g.protocol, metadata: mv.Subscription}},
			assignment:       mv.Assignment,
		}
		if m.rebalanceTimeout <= 0 {
			m.rebalanceTimeout = m.sessionTimeout
		}
		g.members[m.id] = m
		g.memberOrder = append(g.memberOrder, m.id)
		if m.instanceID != nil {
			g.static[*m.instanceID] = m.id
		}
	}
	if len(g.members) > 0 {
		g.state = stateStable
		if _, ok := g.members[g.leader]; !ok {
			g.leader = g.memberOrder[0]
		}
		g.subscribedTopics = g.computeSubscribedTopics()
	} else {
		g.leader = ""
	}
	return g
}

// UnloadPartition stops serving partition p's groups (leadership moved):
// they turn Dead, waiting joins and syncs answer NOT_COORDINATOR, and their
// timers stop.
func (c *Coordinator) UnloadPartition(p int32) {
	c.mu.Lock()
	delete(c.partitions, p)
	var gs []*group
	for id, g := range c.groups {
		if g.partition == p {
			gs = append(gs, g)
			delete(c.groups, id)
		}
	}
	c.mu.Unlock()
	now := c.clock.Now()
	for _, g := range gs {
		g.mu.Lock()
		for _, m := range g.members {
			if m.awaitingJoin != nil {
				m.awaitingJoin <- joinResult{errorCode: kerr.NotCoordinator.Code, memberID: m.id, generation: -1}
				m.awaitingJoin = nil
			}
			if m.awaitingSync != nil {
				m.awaitingSync <- syncResult{errorCode: kerr.NotCoordinator.Code}
				m.awaitingSync = nil
			}
		}
		g.stopTimers()
		g.transition(stateDead, now)
		g.mu.Unlock()
	}
	if len(gs) > 0 {
		c.logger.Info("unloaded __consumer_offsets partition", "partition", p, "groups", len(gs))
	}
}
