package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup serves SyncGroup (v0+). Followers block until the leader's
// assignment is stored in __consumer_offsets; the leader's call stores it.
func (c *Coordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	res, wait := c.sync(ctx, req)
	if wait != nil {
		select {
		case res = <-wait:
		case <-ctx.Done():
			res = syncResult{errorCode: kerr.RebalanceInProgress.Code}
		}
	}
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = req.Version
	resp.ErrorCode = res.errorCode
	resp.MemberAssignment = res.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	if res.errorCode == 0 {
		pt, p := res.protocolType, res.protocol
		resp.ProtocolType, resp.Protocol = &pt, &p
	}
	return resp
}

func (c *Coordinator) sync(ctx context.Context, req *kmsg.SyncGroupRequest) (syncResult, chan syncResult) {
	fail := func(code int16) (syncResult, chan syncResult) { return syncResult{errorCode: code}, nil }
	if req.Group == "" {
		return fail(kerr.InvalidGroupID.Code)
	}
	switch code := c.status(req.Group); code {
	case 0:
	case kerr.CoordinatorLoadInProgress.Code:
		// Kafka answers blindly while loading: the member will rejoin.
		return fail(kerr.RebalanceInProgress.Code)
	default:
		return fail(code)
	}
	g := c.lookup(req.Group)
	if g == nil {
		return fail(kerr.UnknownMemberID.Code)
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
		return fail(kerr.CoordinatorNotAvailable.Code)
	case g.staticFenced(instanceID, req.MemberID):
		return fail(kerr.FencedInstanceID.Code)
	case m == nil:
		return fail(kerr.UnknownMemberID.Code)
	case req.Generation != g.generation:
		return fail(kerr.IllegalGeneration.Code)
	case req.Version >= 5 && req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Version >= 5 && req.Protocol != nil && *req.Protocol != g.protocol:
		return fail(kerr.InconsistentGroupProtocol.Code)
	}
	switch g.state {
	case stateEmpty:
		return fail(kerr.UnknownMemberID.Code)
	case statePreparingRebalance:
		return fail(kerr.RebalanceInProgress.Code)
	case stateStable:
		c.removePendingSync(g, m.id)
		c.scheduleHeartbeat(g, m, m.sessionTimeout)
		return syncResult{protocolType: g.protocolType, protocol: g.protocol, assignment: m.assignment}, nil
	}
	// CompletingRebalance.
	if m.awaitingSync != nil {
		m.awaitingSync <- syncResult{errorCode: kerr.RebalanceInProgress.Code}
	}
	wait := make(chan syncResult, 1)
	m.awaitingSync = wait
	c.removePendingSync(g, m.id)
	if g.leader != m.id {
		return syncResult{}, wait
	}
	assignment := make(map[string][]byte, len(g.members))
	for _, a := range req.GroupAssignment {
		if g.members[a.MemberID] != nil {
			assignment[a.MemberID] = a.MemberAssignment
		}
	}
	for id := range g.members {
		if assignment[id] == nil {
			assignment[id] = []byte{}
		}
	}
	// The rebalance counts only once stored: a coordinator failover must
	// not lose the generation members were told about.
	if code := c.append(ctx, g.partition, []KV{{groupMetadataKey(g.id), groupMetadataValue(g, assignment)}}); code != 0 {
		c.resetAndPropagateAssignmentError(g, code)
		c.maybePrepareRebalance(g)
		return syncResult{}, wait
	}
	for id, mm := range g.members {
		mm.assignment = assignment[id]
	}
	c.propagateAssignment(g, 0)
	g.transition(stateStable, c.clock.Now())
	return syncResult{}, wait
}
