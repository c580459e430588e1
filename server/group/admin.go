package group

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListGroups serves ListGroups: every group of the loaded partitions, with
// the v4+ states filter and the v5+ types filter (case-insensitive, as
// Kafka). All groups here are "classic".
func (c *Coordinator) ListGroups(_ context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := kmsg.NewPtrListGroupsResponse()
	resp.Version = req.Version
	c.mu.Lock()
	gs := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		gs = append(gs, g)
	}
	for _, ps := range c.partitions {
		if ps.status == partitionLoading {
			// Kafka still lists what it has, flagged as incomplete.
			resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
		}
	}
	c.mu.Unlock()
	if req.Version >= 5 && len(req.TypesFilter) > 0 && !slices.ContainsFunc(req.TypesFilter, func(t string) bool {
		return strings.EqualFold(t, classicGroupType)
	}) {
		resp.Groups = []kmsg.ListGroupsResponseGroup{}
		return resp
	}
	var states []string
	if req.Version >= 4 {
		states = req.StatesFilter
	}
	for _, g := range gs {
		g.mu.Lock()
		state, pt := string(g.state), g.protocolType
		g.mu.Unlock()
		if state == string(stateDead) {
			continue
		}
		if len(states) > 0 && !slices.ContainsFunc(states, func(s string) bool { return strings.EqualFold(s, state) }) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.id, pt, state, classicGroupType
		resp.Groups = append(resp.Groups, lg)
	}
	slices.SortFunc(resp.Groups, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
	if resp.Groups == nil {
		resp.Groups = []kmsg.ListGroupsResponseGroup{}
	}
	return resp
}

// DescribeGroups serves DescribeGroups. Member metadata and assignments are
// shown only for Stable groups, as Kafka does. A group that does not exist
// is described as Dead; v6+ adds GROUP_ID_NOT_FOUND (KIP-1043).
func (c *Coordinator) DescribeGroups(_ context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := kmsg.NewPtrDescribeGroupsResponse()
	resp.Version = req.Version
	for _, id := range req.Groups {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group = id
		dg.AuthorizedOperations = authorizedOperationsOmitted
		if req.IncludeAuthorizedOperations {
			dg.AuthorizedOperations = allGroupAuthorizedOperations
		}
		dg.Members = []kmsg.DescribeGroupsResponseGroupMember{}
		if code := c.status(id); code != 0 {
			dg.ErrorCode = code
			resp.Groups = append(resp.Groups, dg)
			continue
		}
		g := c.lookup(id)
		if g == nil {
			dg.State = string(stateDead)
			if req.Version >= 6 {
				dg.ErrorCode = kerr.GroupIDNotFound.Code
				msg := "Group " + id + " not found."
				dg.ErrorMessage = &msg
			}
			resp.Groups = append(resp.Groups, dg)
			continue
		}
		g.mu.Lock()
		dg.State, dg.ProtocolType = string(g.state), g.protocolType
		stable := g.state == stateStable
		if stable {
			dg.Protocol = g.protocol
		}
		for _, mid := range g.memberOrder {
			m := g.members[mid]
			dm := kmsg.NewDescribeGroupsResponseGroupMember()
			dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
			dm.ProtocolMetadata, dm.MemberAssignment = []byte{}, []byte{}
			if stable {
				dm.ProtocolMetadata = m.metadata(g.protocol)
				dm.MemberAssignment = m.assignment
			}
			dg.Members = append(dg.Members, dm)
		}
		g.mu.Unlock()
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

// DeleteGroups serves DeleteGroups: only Empty groups may go
// (NON_EMPTY_GROUP otherwise); their offsets and metadata get tombstones.
func (c *Coordinator) DeleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := kmsg.NewPtrDeleteGroupsResponse()
	resp.Version = req.Version
	for _, id := range req.Groups {
		r := kmsg.NewDeleteGroupsResponseGroup()
		r.Group = id
		r.ErrorCode = c.deleteGroup(ctx, id)
		resp.Groups = append(resp.Groups, r)
	}
	return resp
}

func (c *Coordinator) deleteGroup(ctx context.Context, id string) int16 {
	if code := c.status(id); code != 0 {
		return code
	}
	g := c.lookup(id)
	if g == nil {
		return kerr.GroupIDNotFound.Code
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.state {
	case stateDead:
		return kerr.GroupIDNotFound.Code
	case stateEmpty:
	default:
		return kerr.NonEmptyGroup.Code
	}
	tps := make([]topicPartition, 0, len(g.offsets))
	for tp := range g.offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b topicPartition) int {
		if a.topic != b.topic {
			return strings.Compare(a.topic, b.topic)
		}
		return cmp.Compare(a.partition, b.partition)
	})
	if code := c.deleteOffsets(ctx, g, tps, removeGroup); code != 0 {
		return code
	}
	c.logger.Info("group deleted", "group", id, "offsets", len(tps))
	return 0
}
