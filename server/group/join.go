package group

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinGroup serves JoinGroup (v0+). It blocks until the join phase of the
// rebalance completes, ctx ends, or the answer is immediate (errors,
// MEMBER_ID_REQUIRED, a rejoin that changes nothing).
func (c *Coordinator) JoinGroup(ctx context.Context, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	res, wait := c.join(ctx, req)
	if wait != nil {
		select {
		case res = <-wait:
		case <-ctx.Done():
			// The member stays in the group; its session or the rebalance
			// timeout removes it if it does not come back.
			res = joinResult{errorCode: kerr.RebalanceInProgress.Code, memberID: req.MemberID, generation: -1}
		}
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = req.Version
	resp.ErrorCode = res.errorCode
	resp.Generation = res.generation
	resp.MemberID = res.memberID
	resp.LeaderID = res.leader
	resp.SkipAssignment = res.skipAssignment
	if res.errorCode == 0 {
		pt, p := res.protocolType, res.protocol
		resp.ProtocolType = &pt
		resp.Protocol = &p
		resp.Members = res.members
	}
	if resp.Members == nil {
		resp.Members = []kmsg.JoinGroupResponseMember{}
	}
	return resp
}

func joinError(code int16, memberID string) joinResult {
	return joinResult{errorCode: code, memberID: memberID, generation: -1}
}

// joinParams is the validated request.
type joinParams struct {
	memberID         string
	instanceID       *string
	client           ClientInfo
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []protocol
	version          int16
}

func (c *Coordinator) join(ctx context.Context, req *kmsg.JoinGroupRequest) (joinResult, chan joinResult) {
	if req.Group == "" {
		return joinError(kerr.InvalidGroupID.Code, req.MemberID), nil
	}
	if code := c.status(req.Group); code != 0 {
		return joinError(code, req.MemberID), nil
	}
	p := joinParams{
		memberID:         req.MemberID,
		client:           clientInfoFrom(ctx),
		sessionTimeout:   time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		rebalanceTimeout: time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
		protocolType:     req.ProtocolType,
		version:          req.Version,
	}
	if req.Version >= 5 {
		p.instanceID = req.InstanceID
	}
	if req.Version == 0 || p.rebalanceTimeout <= 0 {
		p.rebalanceTimeout = p.sessionTimeout // v0 has no rebalance timeout
	}
	for _, pr := range req.Protocols {
		p.protocols = append(p.protocols, protocol{name: pr.Name, metadata: pr.Metadata})
	}
	if p.sessionTimeout < c.cfg.GroupMinSessionTimeout || p.sessionTimeout > c.cfg.GroupMaxSessionTimeout {
		return joinError(kerr.InvalidSessionTimeout.Code, req.MemberID), nil
	}
	unknown := p.memberID == unknownMemberID
	g := c.getOrCreate(req.Group, unknown)
	if g == nil {
		if unknown {
			return joinError(kerr.NotCoordinator.Code, p.memberID), nil
		}
		return joinError(kerr.UnknownMemberID.Code, p.memberID), nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var (
		res  joinResult
		wait chan joinResult
	)
	if !c.acceptJoiningMember(g, p.memberID) {
		if m := g.members[p.memberID]; m != nil {
			c.removeMemberAndUpdateGroup(g, m, kerr.GroupMaxSizeReached.Code)
		}
		res = joinError(kerr.GroupMaxSizeReached.Code, unknownMemberID)
	} else if unknown {
		res, wait = c.joinNewMember(ctx, g, p)
	} else {
		res, wait = c.joinCurrentMember(g, p)
	}
	if g.state == statePreparingRebalance {
		c.tryCompleteJoin(g)
	}
	return res, wait
}

// acceptJoiningMember enforces group.max.size: members already in the
// group may always rejoin.
func (c *Coordinator) acceptJoiningMember(g *group, memberID string) bool {
	max := c.cfg.GroupMaxSize
	switch g.state {
	case statePreparingRebalance:
		m := g.members[memberID]
		return (m != nil && m.awaitingJoin != nil) || g.numAwaitingJoin() < max
	case stateCompletingRebalance, stateStable:
		return g.members[memberID] != nil || len(g.members) < max
	}
	return true
}

func (c *Coordinator) joinNewMember(ctx context.Context, g *group, p joinParams) (joinResult, chan joinResult) {
	if g.state == stateDead {
		return joinError(kerr.CoordinatorNotAvailable.Code, p.memberID), nil
	}
	if !g.supportsProtocols(p.protocolType, p.protocols) {
		return joinError(kerr.InconsistentGroupProtocol.Code, p.memberID), nil
	}
	p.memberID = newMemberID(p.client.ClientID, p.instanceID)
	if p.instanceID != nil {
		if old, ok := g.static[*p.instanceID]; ok {
			return c.replaceStaticMember(ctx, g, old, p)
		}
		return c.addMemberAndRebalance(g, p)
	}
	if p.version >= 4 {
		// KIP-394: hand out the id first and make the client rejoin with
		// it, so a client whose JoinGroup times out does not leave an
		// orphan member behind.
		if len(g.pending) >= c.cfg.GroupMaxSize {
			return joinError(kerr.GroupMaxSizeReached.Code, unknownMemberID), nil
		}
		id := p.memberID
		g.pending[id] = c.clock.AfterFunc(p.sessionTimeout, func() { c.pendingMemberExpired(g, id) })
		return joinError(kerr.MemberIDRequired.Code, id), nil
	}
	return c.addMemberAndRebalance(g, p)
}

func (c *Coordinator) pendingMemberExpired(g *group, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.pending[id]; !ok {
		return
	}
	delete(g.pending, id)
	c.tryCompleteJoin(g)
}

func (c *Coordinator) joinCurrentMember(g *group, p joinParams) (joinResult, chan joinResult) {
	if g.state == stateDead {
		return joinError(kerr.CoordinatorNotAvailable.Code, p.memberID), nil
	}
	if !g.supportsProtocols(p.protocolType, p.protocols) {
		return joinError(kerr.InconsistentGroupProtocol.Code, p.memberID), nil
	}
	if t, ok := g.pending[p.memberID]; ok {
		t.Stop()
		delete(g.pending, p.memberID)
		return c.addMemberAndRebalance(g, p)
	}
	if g.staticFenced(p.instanceID, p.memberID) {
		return joinError(kerr.FencedInstanceID.Code, p.memberID), nil
	}
	m := g.members[p.memberID]
	if m == nil || (p.instanceID != nil && g.static[*p.instanceID] == "") {
		return joinError(kerr.UnknownMemberID.Code, p.memberID), nil
	}
	switch g.state {
	case statePreparingRebalance:
		return c.updateMemberAndRebalance(g, m, p)
	case stateCompletingRebalance:
		if m.matches(p.protocols) {
			// The member lost our JoinGroup answer: repeat it.
			return c.joinResultFor(g, m, false), nil
		}
		return c.updateMemberAndRebalance(g, m, p)
	case stateStable:
		// The leader's rejoin forces a rebalance: it may have seen a change
		// (new partitions) that member metadata does not show.
		if g.leader == m.id || !m.matches(p.protocols) {
			return c.updateMemberAndRebalance(g, m, p)
		}
		r := c.joinResultFor(g, m, false)
		return r, nil
	}
	return joinError(kerr.UnknownMemberID.Code, p.memberID), nil
}

func (c *Coordinator) addMemberAndRebalance(g *group, p joinParams) (joinResult, chan joinResult) {
	m := &member{
		id:               p.memberID,
		instanceID:       p.instanceID,
		clientID:         p.client.ClientID,
		clientHost:       p.client.ClientHost,
		rebalanceTimeout: p.rebalanceTimeout,
		sessionTimeout:   p.sessionTimeout,
		protocolType:     p.protocolType,
		protocols:        p.protocols,
		isNew:            true,
	}
	// The channel is kept here: a join that completes synchronously
	// (group.initial.rebalance.delay.ms=0) answers it and clears the field.
	wait := make(chan joinResult, 1)
	m.awaitingJoin = wait
	if g.state == statePreparingRebalance && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.add(m)
	c.scheduleHeartbeat(g, m, newMemberJoinTimeout)
	c.maybePrepareRebalance(g)
	return joinResult{}, wait
}

func (c *Coordinator) updateMemberAndRebalance(g *group, m *member, p joinParams) (joinResult, chan joinResult) {
	m.protocols = p.protocols
	m.rebalanceTimeout = p.rebalanceTimeout
	m.sessionTimeout = p.sessionTimeout
	if m.awaitingJoin != nil {
		// A duplicate JoinGroup supersedes the earlier one.
		m.awaitingJoin <- joinError(kerr.RebalanceInProgress.Code, m.id)
	}
	wait := make(chan joinResult, 1)
	m.awaitingJoin = wait
	c.maybePrepareRebalance(g)
	return joinResult{}, wait
}

// replaceStaticMember gives a known group.instance.id a new member id (a
// static member restarted, KIP-345). The old id is fenced. In a Stable group
// whose protocol would not change, no rebalance happens: the member gets
// the current generation and keeps its assignment.
func (c *Coordinator) replaceStaticMember(ctx context.Context, g *group, oldID string, p joinParams) (joinResult, chan joinResult) {
	m := g.members[oldID]
	if m.awaitingJoin != nil {
		m.awaitingJoin <- joinError(kerr.FencedInstanceID.Code, oldID)
		m.awaitingJoin = nil
	}
	if m.awaitingSync != nil {
		m.awaitingSync <- syncResult{errorCode: kerr.FencedInstanceID.Code}
		m.awaitingSync = nil
	}
	saved := *m
	wasLeader := g.leader == oldID
	hadPendingSync := g.pendingSync[oldID]
	c.renameMember(g, m, oldID, p.memberID)
	m.protocols, m.rebalanceTimeout, m.sessionTimeout = p.protocols, p.rebalanceTimeout, p.sessionTimeout
	m.clientID, m.clientHost = p.client.ClientID, p.client.ClientHost
	c.scheduleHeartbeat(g, m, m.sessionTimeout)

	switch g.state {
	case stateStable:
		if g.selectProtocol() != g.protocol {
			wait := make(chan joinResult, 1)
			m.awaitingJoin = wait
			c.prepareRebalance(g)
			return joinResult{}, wait
		}
		assignment := make(map[string][]byte, len(g.members))
		for id, mm := range g.members {
			assignment[id] = mm.assignment
		}
		if code := c.append(ctx, g.partition, []KV{{groupMetadataKey(g.id), groupMetadataValue(g, assignment)}}); code != 0 {
			// Undo: the old member id stays valid, as nothing was stored.
			c.renameMember(g, m, p.memberID, oldID)
			hb := m.heartbeat
			*m = saved
			m.heartbeat = hb
			if wasLeader {
				g.leader = oldID
			}
			if hadPendingSync {
				g.pendingSync[oldID] = true
			}
			return joinError(code, unknownMemberID), nil
		}
		return c.joinResultFor(g, m, g.leader == m.id && p.version >= 9), nil
	case stateCompletingRebalance:
		// The leader may already assign to the old id: rebalance so the new
		// id gets an assignment.
		wait := make(chan joinResult, 1)
		m.awaitingJoin = wait
		c.prepareRebalance(g)
		return joinResult{}, wait
	}
	wait := make(chan joinResult, 1)
	m.awaitingJoin = wait
	return joinResult{}, wait
}

func (c *Coordinator) renameMember(g *group, m *member, from, to string) {
	delete(g.members, from)
	g.members[to] = m
	m.id = to
	for i, id := range g.memberOrder {
		if id == from {
			g.memberOrder[i] = to
		}
	}
	if m.instanceID != nil {
		g.static[*m.instanceID] = to
	}
	if g.leader == from {
		g.leader = to
	}
	if g.pendingSync[from] {
		delete(g.pendingSync, from)
		g.pendingSync[to] = true
	}
}
