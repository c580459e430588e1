package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat serves Heartbeat (v0+): it keeps the member's session alive and
// tells it of a rebalance with REBALANCE_IN_PROGRESS.
func (c *Coordinator) Heartbeat(_ context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = req.Version
	resp.ErrorCode = c.heartbeat(req)
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) int16 {
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	switch code := c.status(req.Group); code {
	case 0:
	case kerr.CoordinatorLoadInProgress.Code:
		return 0 // Kafka answers blindly while the group loads
	default:
		return code
	}
	g := c.lookup(req.Group)
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var instanceID *string
	if req.Version >= 3 {
		instanceID = req.InstanceID
	}
	m := g.members[req.MemberID]
	switch {
	case g.state == stateDead:
		return kerr.CoordinatorNotAvailable.Code
	case g.staticFenced(instanceID, req.MemberID):
		return kerr.FencedInstanceID.Code
	case m == nil:
		return kerr.UnknownMemberID.Code
	case req.Generation != g.generation:
		return kerr.IllegalGeneration.Code
	}
	switch g.state {
	case stateEmpty:
		return kerr.UnknownMemberID.Code
	case statePreparingRebalance:
		c.scheduleHeartbeat(g, m, m.sessionTimeout)
		return kerr.RebalanceInProgress.Code
	}
	c.scheduleHeartbeat(g, m, m.sessionTimeout)
	return 0
}

// LeaveGroup serves LeaveGroup: v0-2 for one member id, v3+ for a batch of
// members that may be named by group.instance.id alone (KIP-345).
func (c *Coordinator) LeaveGroup(_ context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := kmsg.NewPtrLeaveGroupResponse()
	resp.Version = req.Version
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	code, results := c.leave(req.Group, leaving)
	resp.ErrorCode = code
	if req.Version >= 3 {
		resp.Members = results
		return resp
	}
	if code == 0 && len(results) > 0 {
		resp.ErrorCode = results[0].ErrorCode
	}
	return resp
}

func (c *Coordinator) leave(groupID string, leaving []kmsg.LeaveGroupRequestMember) (int16, []kmsg.LeaveGroupResponseMember) {
	if groupID == "" {
		return kerr.InvalidGroupID.Code, nil
	}
	if code := c.status(groupID); code != 0 {
		return code, nil
	}
	results := make([]kmsg.LeaveGroupResponseMember, 0, len(leaving))
	answer := func(l kmsg.LeaveGroupRequestMember, code int16) {
		r := kmsg.NewLeaveGroupResponseMember()
		r.MemberID, r.InstanceID, r.ErrorCode = l.MemberID, l.InstanceID, code
		results = append(results, r)
	}
	g := c.lookup(groupID)
	if g == nil {
		for _, l := range leaving {
			answer(l, kerr.UnknownMemberID.Code)
		}
		return 0, results
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	for _, l := range leaving {
		answer(l, c.leaveOne(g, l))
	}
	return 0, results
}

func (c *Coordinator) leaveOne(g *group, l kmsg.LeaveGroupRequestMember) int16 {
	if l.MemberID == unknownMemberID {
		if l.InstanceID == nil {
			return kerr.UnknownMemberID.Code
		}
		id, ok := g.static[*l.InstanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		c.logger.Info("static member left", "group", g.id, "member", id, "instance", *l.InstanceID)
		c.removeMemberAndUpdateGroup(g, g.members[id], kerr.UnknownMemberID.Code)
		return 0
	}
	if t, ok := g.pending[l.MemberID]; ok {
		t.Stop()
		delete(g.pending, l.MemberID)
		c.tryCompleteJoin(g)
		return 0
	}
	if g.staticFenced(l.InstanceID, l.MemberID) {
		return kerr.FencedInstanceID.Code
	}
	m := g.members[l.MemberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	c.logger.Info("member left", "group", g.id, "member", m.id)
	c.removeMemberAndUpdateGroup(g, m, kerr.UnknownMemberID.Code)
	return 0
}
