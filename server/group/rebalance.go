package group

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// This file is the rebalance state machine (Kafka's GroupCoordinator
// prepareRebalance / onCompleteJoin / heartbeat expiry). Every function here
// runs with g.mu held.

// scheduleHeartbeat (re)arms the member's session timer; d is its session
// timeout, or newMemberJoinTimeout for a member that has no id yet.
func (c *Coordinator) scheduleHeartbeat(g *group, m *member, d time.Duration) {
	if m.heartbeat != nil {
		m.heartbeat.Stop()
	}
	var t Timer
	t = c.clock.AfterFunc(d, func() { c.heartbeatExpired(g, m, &t) })
	m.heartbeat = t
}

func (c *Coordinator) heartbeatExpired(g *group, m *member, t *Timer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// A timer that was replaced or belongs to a removed member is stale.
	if g.state == stateDead || g.members[m.id] != m || m.heartbeat != *t {
		return
	}
	// Members blocked in JoinGroup or SyncGroup cannot heartbeat; the
	// rebalance and pending-sync timeouts bound them instead (Kafka's
	// hasSatisfiedHeartbeat).
	if !m.isNew && (m.awaitingJoin != nil || m.awaitingSync != nil) {
		c.scheduleHeartbeat(g, m, m.sessionTimeout)
		return
	}
	c.logger.Info("member session expired", "group", g.id, "member", m.id, "generation", g.generation)
	c.removeMemberAndUpdateGroup(g, m, kerr.UnknownMemberID.Code)
}

// removeMemberAndUpdateGroup drops a member that left or expired and moves
// the group on: a stable group rebalances, a rebalancing one may now have
// every remaining member joined.
func (c *Coordinator) removeMemberAndUpdateGroup(g *group, m *member, answer int16) {
	if m.awaitingJoin != nil {
		m.awaitingJoin <- joinResult{errorCode: answer, memberID: m.id, generation: -1}
		m.awaitingJoin = nil
	}
	if m.awaitingSync != nil {
		m.awaitingSync <- syncResult{errorCode: answer}
		m.awaitingSync = nil
	}
	g.remove(m.id)
	switch g.state {
	case stateStable, stateCompletingRebalance:
		c.prepareRebalance(g)
	case statePreparingRebalance:
		c.tryCompleteJoin(g)
	}
}

func (c *Coordinator) maybePrepareRebalance(g *group) {
	switch g.state {
	case stateStable, stateCompletingRebalance, stateEmpty:
		c.prepareRebalance(g)
	}
}

// prepareRebalance starts a join phase. An Empty group waits
// group.initial.rebalance.delay.ms (extended while new members keep
// arriving, up to the rebalance timeout) so that a whole fleet of starting
// consumers lands in one generation; otherwise the phase ends when every
// member rejoined or the rebalance timeout passes.
func (c *Coordinator) prepareRebalance(g *group) {
	if g.state == stateCompletingRebalance {
		c.resetAndPropagateAssignmentError(g, kerr.RebalanceInProgress.Code)
	}
	if g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	wasEmpty := g.state == stateEmpty
	g.transition(statePreparingRebalance, c.clock.Now())
	delay := c.cfg.GroupInitialRebalanceDelay
	if wasEmpty && delay > 0 {
		g.newMemberAdded = false
		g.initialRemaining = max(g.rebalanceTimeout()-delay, 0)
		c.armJoinTimer(g, delay, true)
		return
	}
	c.armJoinTimer(g, g.rebalanceTimeout(), false)
	c.tryCompleteJoin(g)
}

// joinTimerState lets tryCompleteJoin tell an initial delay (which only its
// timer may end) from an ordinary join phase.
func (c *Coordinator) armJoinTimer(g *group, d time.Duration, initial bool) {
	var t Timer
	t = c.clock.AfterFunc(d, func() { c.joinTimerFired(g, &t, initial) })
	g.joinTimer = t
	g.initialDelay = initial
}

func (c *Coordinator) joinTimerFired(g *group, t *Timer, initial bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.joinTimer != *t || g.state != statePreparingRebalance {
		return
	}
	g.joinTimer = nil
	if initial && g.newMemberAdded && g.initialRemaining > 0 {
		g.newMemberAdded = false
		d := min(c.cfg.GroupInitialRebalanceDelay, g.initialRemaining)
		g.initialRemaining = max(g.initialRemaining-c.cfg.GroupInitialRebalanceDelay, 0)
		c.armJoinTimer(g, d, true)
		return
	}
	c.completeJoin(g)
}

func (c *Coordinator) tryCompleteJoin(g *group) {
	if g.state != statePreparingRebalance || g.initialDelay || !g.allMembersJoined() {
		return
	}
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	c.completeJoin(g)
}

// completeJoin ends the join phase (Kafka's onCompleteJoin).
func (c *Coordinator) completeJoin(g *group) {
	// Dynamic members that did not rejoin in time are gone; static ones
	// keep their place and get their assignment when they come back.
	for _, id := range append([]string(nil), g.memberOrder...) {
		m := g.members[id]
		if m.awaitingJoin == nil && m.instanceID == nil {
			c.logger.Info("member did not rejoin in time", "group", g.id, "member", id)
			g.remove(id)
		}
	}
	if !c.electJoinedLeader(g) && len(g.members) > 0 {
		// Only static members that have not rejoined remain: wait for them
		// (or for their sessions to expire) another rebalance timeout.
		c.armJoinTimer(g, g.rebalanceTimeout(), false)
		return
	}
	now := c.clock.Now()
	g.generation++
	clear(g.pendingSync)
	if len(g.members) == 0 {
		g.protocol = ""
		g.subscribedTopics = nil
		g.transition(stateEmpty, now)
		// The empty generation is persisted so a restart does not reuse a
		// generation id, and the group comes back Empty with its offsets.
		if code := c.append(context.Background(), g.partition, []KV{{groupMetadataKey(g.id), groupMetadataValue(g, nil)}}); code != 0 {
			c.logger.Warn("could not store empty group", "group", g.id, "generation", g.generation, "error", kerr.ErrorForCode(code))
		}
		return
	}
	g.protocol = g.selectProtocol()
	g.subscribedTopics = g.computeSubscribedTopics()
	g.transition(stateCompletingRebalance, now)
	c.logger.Info("group rebalanced", "group", g.id, "generation", g.generation, "members", len(g.members), "protocol", g.protocol)
	for _, id := range g.memberOrder {
		m := g.members[id]
		if m.awaitingJoin != nil {
			m.awaitingJoin <- c.joinResultFor(g, m, false)
			m.awaitingJoin = nil
		}
		m.isNew = false
		c.scheduleHeartbeat(g, m, m.sessionTimeout)
		g.pendingSync[id] = true
	}
	gen := g.generation
	g.syncTimer = c.clock.AfterFunc(g.rebalanceTimeout(), func() { c.syncTimerFired(g, gen) })
}

func (c *Coordinator) joinResultFor(g *group, m *member, skipAssignment bool) joinResult {
	r := joinResult{
		memberID:       m.id,
		generation:     g.generation,
		protocolType:   g.protocolType,
		protocol:       g.protocol,
		leader:         g.leader,
		skipAssignment: skipAssignment,
	}
	if g.leader == m.id {
		r.members = g.currentMemberMetadata()
	}
	return r
}

// electJoinedLeader keeps the leader if it rejoined, else hands leadership
// to any member that did; false when no member rejoined.
func (c *Coordinator) electJoinedLeader(g *group) bool {
	if l, ok := g.members[g.leader]; ok && l.awaitingJoin != nil {
		return true
	}
	for _, id := range g.memberOrder {
		if g.members[id].awaitingJoin != nil {
			g.leader = id
			return true
		}
	}
	return false
}

// syncTimerFired removes members that joined a generation but never sent
// SyncGroup within the rebalance timeout (Kafka 3.x's DelayedSync):
// without it a silent member would block the group's assignment.
func (c *Coordinator) syncTimerFired(g *group, gen int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.generation != gen || (g.state != stateCompletingRebalance && g.state != stateStable) {
		return
	}
	g.syncTimer = nil
	if len(g.pendingSync) == 0 {
		return
	}
	for id := range g.pendingSync {
		c.logger.Info("member did not sync in time", "group", g.id, "member", id)
		if m := g.members[id]; m != nil {
			if m.awaitingJoin != nil {
				m.awaitingJoin <- joinResult{errorCode: kerr.UnknownMemberID.Code, memberID: id, generation: -1}
				m.awaitingJoin = nil
			}
		}
		g.remove(id)
	}
	c.prepareRebalance(g)
}

func (c *Coordinator) removePendingSync(g *group, id string) {
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 && g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
}

func (c *Coordinator) resetAndPropagateAssignmentError(g *group, code int16) {
	for _, m := range g.members {
		m.assignment = nil
	}
	c.propagateAssignment(g, code)
}

func (c *Coordinator) propagateAssignment(g *group, code int16) {
	for _, id := range g.memberOrder {
		m := g.members[id]
		if m.awaitingSync == nil {
			continue
		}
		r := syncResult{errorCode: code, assignment: m.assignment}
		if code == 0 {
			r.protocolType, r.protocol = g.protocolType, g.protocol
		}
		m.awaitingSync <- r
		m.awaitingSync = nil
		// A session that ran out while the member waited for the leader was
		// kept alive; it starts afresh now.
		c.scheduleHeartbeat(g, m, m.sessionTimeout)
	}
}
