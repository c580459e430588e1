package server

// Rows of the authorization matrix: groups and their coordinator.

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupCases: the group coordinator's APIs, and FindCoordinator.
func groupCases(f *authzFixture) []authzCase {
	offsetFetchV9 := func(group string, topics ...string) *kmsg.OffsetFetchRequest {
		req := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group
		for _, n := range topics {
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic, rt.Partitions = n, []int32{0}
			rg.Topics = append(rg.Topics, rt)
		}
		req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
		return req
	}
	groupTopic := func(rt kmsg.OffsetFetchResponseGroupTopic) string { return rt.Topic }
	readersOffsets := []aclSpec{groupACL(opDescribe, "readers"), topicACL(opDescribe, "orders")}
	readersAlt := [][]aclSpec{{groupACL(opRead, "readers"), topicACL(opRead, "orders")}}
	findCoordinator := func(typ int8, key string) *kmsg.FindCoordinatorRequest {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = typ, key, []string{key}
		return req
	}
	checkCoordinator := func(t *testing.T, ph *authzPhase, code int16, node, port int32, host string) {
		t.Helper()
		if ph.denied {
			wantCode(t, "coordinator", code, ph.code)
			if node != -1 || port != -1 || host != "" {
				t.Errorf("denied answer names node %d at %s:%d", node, host, port)
			}
			return
		}
		wantCode(t, "coordinator", code, 0)
		if node != 0 || port <= 0 {
			t.Errorf("coordinator %d at %s:%d", node, host, port)
		}
	}
	return []authzCase{
		{
			name: "OffsetCommit", key: 8, version: 9,
			acls:  []aclSpec{groupACL(opRead, "commit-").prefixed(), topicACL(opRead, "orders")},
			codes: []int16{groupDenied, topicDenied},
			notEnough: []authzShortfall{
				{[]aclSpec{groupACL(opDescribe, "commit-").prefixed(), topicACL(opRead, "orders")}, groupDenied},
				{[]aclSpec{groupACL(opRead, "commit-").prefixed(), topicACL(opDescribe, "orders")}, topicDenied},
			},
			// Denying the topic, not the group.
			deny:     []aclSpec{topicACL(opRead, "orders").denial()},
			denyCode: &topicDenied,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return offsetCommitRequest("commit-"+ph.tag, "orders", 1)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.OffsetCommitResponse)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				code := r.Topics[0].Partitions[0].ErrorCode
				got := e.committed(t, "commit-"+ph.tag, "orders")
				if ph.denied {
					wantCode(t, "partition", code, ph.code)
					if got != -1 {
						t.Errorf("denied commit stored offset %d", got)
					}
					return
				}
				wantCode(t, "partition", code, 0)
				if got != 1 {
					t.Errorf("committed offset %d, want 1", got)
				}
			},
		},
		{
			name: "OffsetFetch/named topics", key: 9, version: 9,
			acls: readersOffsets, codes: []int16{groupDenied, topicDenied}, alternatives: readersAlt,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return offsetFetchV9("readers", "orders")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				g := resp.(*kmsg.OffsetFetchResponse).Groups[0]
				if ph.denied && ph.code == groupDenied {
					wantCode(t, "group", g.ErrorCode, ph.code)
					if len(g.Topics) != 0 {
						t.Errorf("denied group lists %d topics", len(g.Topics))
					}
					return
				}
				wantCode(t, "group", g.ErrorCode, 0)
				if len(g.Topics) != 1 || len(g.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", g.Topics)
				}
				p := g.Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", p.ErrorCode, ph.code)
					if p.Offset != -1 || p.LeaderEpoch != -1 || p.Metadata == nil || *p.Metadata != "" {
						t.Errorf("denied topic leaks %+v", p)
					}
					return
				}
				wantCode(t, "partition", p.ErrorCode, 0)
				if p.Offset != 2 {
					t.Errorf("offset %d, want 2", p.Offset)
				}
			},
		},
		{
			// All of a group's offsets: the topics the principal may not
			// describe are left out.
			name: "OffsetFetch/all topics", key: 9, version: 9,
			acls: readersOffsets, codes: []int16{groupDenied, 0}, alternatives: readersAlt,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return offsetFetchV9("readers")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				g := resp.(*kmsg.OffsetFetchResponse).Groups[0]
				switch {
				case ph.denied && ph.code == groupDenied:
					wantCode(t, "group", g.ErrorCode, ph.code)
					wantTopics(t, "topics", g.Topics, groupTopic)
				case ph.denied:
					wantCode(t, "group", g.ErrorCode, 0)
					wantTopics(t, "topics", g.Topics, groupTopic)
				case ph.super:
					wantTopics(t, "topics", g.Topics, groupTopic, "orders", "secret")
				default:
					wantTopics(t, "topics", g.Topics, groupTopic, "orders")
				}
			},
		},
		{
			name: "OffsetFetch/one group", key: 9, version: 7,
			acls: readersOffsets, codes: []int16{groupDenied, topicDenied}, alternatives: readersAlt,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.Group = "readers"
				req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "orders", Partitions: []int32{0}}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.OffsetFetchResponse)
				if ph.denied && ph.code == groupDenied {
					wantCode(t, "group", r.ErrorCode, ph.code)
					if len(r.Topics) != 0 {
						t.Errorf("denied group lists %d topics", len(r.Topics))
					}
					return
				}
				wantCode(t, "group", r.ErrorCode, 0)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				p := r.Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", p.ErrorCode, ph.code)
					if p.Offset != -1 {
						t.Errorf("denied topic leaks offset %d", p.Offset)
					}
					return
				}
				if p.Offset != 2 {
					t.Errorf("offset %d, want 2", p.Offset)
				}
			},
		},
		{
			name: "FindCoordinator/group", key: 10, version: 6,
			acls:         []aclSpec{groupACL(opDescribe, "readers")},
			codes:        []int16{groupDenied},
			alternatives: [][]aclSpec{{groupACL(opRead, "readers")}, {groupACL(opDelete, "read").prefixed()}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribe)}, groupDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return findCoordinator(coordinatorGroup, "readers")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				c := resp.(*kmsg.FindCoordinatorResponse).Coordinators[0]
				checkCoordinator(t, ph, c.ErrorCode, c.NodeID, c.Port, c.Host)
				if c.ErrorMessage != nil {
					// v4+ coordinators carry no message in Kafka.
					t.Errorf("message %q", *c.ErrorMessage)
				}
			},
		},
		{
			name: "FindCoordinator/transaction", key: 10, version: 6,
			acls:         []aclSpec{txnACL(opDescribe, "ongoing")},
			codes:        []int16{txnDenied},
			alternatives: [][]aclSpec{{txnACL(opWrite, "ongoing")}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return findCoordinator(coordinatorTransaction, "ongoing")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				c := resp.(*kmsg.FindCoordinatorResponse).Coordinators[0]
				checkCoordinator(t, ph, c.ErrorCode, c.NodeID, c.Port, c.Host)
			},
		},
		{
			name: "FindCoordinator/one key", key: 10, version: 3,
			acls:  []aclSpec{groupACL(opDescribe, "readers")},
			codes: []int16{groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return findCoordinator(coordinatorGroup, "readers")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.FindCoordinatorResponse)
				checkCoordinator(t, ph, r.ErrorCode, r.NodeID, r.Port, r.Host)
				if ph.denied && stringOr(r.ErrorMessage) != "Group authorization failed." {
					t.Errorf("message %v", r.ErrorMessage)
				}
			},
		},
		{
			name: "JoinGroup", key: 11, version: 9,
			acls:      []aclSpec{groupACL(opRead, "join-").prefixed()},
			codes:     []int16{groupDenied},
			notEnough: []authzShortfall{{[]aclSpec{groupACL(opDescribe, "join-").prefixed()}, groupDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group, req.InstanceID, req.ProtocolType = "join-"+ph.tag, strp("i"), "consumer"
				req.MemberID = "m-from-the-client"
				req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 300000, 60000
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = "range", []byte("subscription")
				req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
				if !ph.denied {
					// A new static member joins without an id.
					req.MemberID = ""
				}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.JoinGroupResponse)
				if ph.denied {
					wantCode(t, "JoinGroup", r.ErrorCode, ph.code)
					if r.MemberID != "" || r.LeaderID != "" || r.Generation != -1 || r.Protocol != nil || len(r.Members) != 0 {
						t.Errorf("denied answer: %+v", r)
					}
					if g := e.groupState(t, "join-"+ph.tag); len(g.Members) != 0 {
						t.Errorf("denied join added a member: %+v", g)
					}
					return
				}
				wantCode(t, "JoinGroup", r.ErrorCode, 0)
				if r.MemberID == "" || r.Generation < 1 {
					t.Errorf("joined as %q, generation %d", r.MemberID, r.Generation)
				}
			},
		},
		{
			name: "Heartbeat", key: 12, version: 4,
			acls:  []aclSpec{groupACL(opRead, "live")},
			codes: []int16{groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrHeartbeatRequest()
				req.Group, req.Generation, req.MemberID, req.InstanceID = f.live.group, f.live.generation, f.live.memberID, &f.live.instanceID
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				code := resp.(*kmsg.HeartbeatResponse).ErrorCode
				if ph.denied {
					wantCode(t, "Heartbeat", code, ph.code)
					return
				}
				wantCode(t, "Heartbeat", code, 0)
			},
		},
		{
			name: "LeaveGroup", key: 13, version: 5,
			acls:  []aclSpec{groupACL(opRead, "leave-").prefixed()},
			codes: []int16{groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				ph.m = e.joinGroup(t, "leave-"+ph.tag, "i", nil)
				req := kmsg.NewPtrLeaveGroupRequest()
				req.Group = ph.m.group
				lm := kmsg.NewLeaveGroupRequestMember()
				lm.MemberID, lm.InstanceID = ph.m.memberID, &ph.m.instanceID
				req.Members = []kmsg.LeaveGroupRequestMember{lm}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.LeaveGroupResponse)
				members := len(e.groupState(t, ph.m.group).Members)
				if ph.denied {
					wantCode(t, "LeaveGroup", r.ErrorCode, ph.code)
					if len(r.Members) != 0 || members != 1 {
						t.Errorf("denied leave: %d members answered, %d left in the group", len(r.Members), members)
					}
					return
				}
				wantCode(t, "LeaveGroup", r.ErrorCode, 0)
				if len(r.Members) != 1 || r.Members[0].ErrorCode != 0 || members != 0 {
					t.Errorf("leave: %+v, %d members left", r.Members, members)
				}
			},
		},
		{
			name: "SyncGroup", key: 14, version: 5,
			acls:  []aclSpec{groupACL(opRead, "live")},
			codes: []int16{groupDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return syncGroupRequest(f.live)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.SyncGroupResponse)
				if ph.denied {
					wantCode(t, "SyncGroup", r.ErrorCode, ph.code)
					if len(r.MemberAssignment) != 0 {
						t.Errorf("denied sync leaks the assignment %q", r.MemberAssignment)
					}
					return
				}
				wantCode(t, "SyncGroup", r.ErrorCode, 0)
				if string(r.MemberAssignment) != liveAssignment {
					t.Errorf("assignment %q", r.MemberAssignment)
				}
			},
		},
		{
			name: "DescribeGroups", key: 15, version: 5,
			acls:         []aclSpec{groupACL(opDescribe, "live")},
			codes:        []int16{groupDenied},
			alternatives: [][]aclSpec{{groupACL(opRead, "live")}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribe)}, groupDenied}},
			// A DENY of every operation overrides an ALLOW of one.
			deny: []aclSpec{groupACL(kmsg.ACLOperationAll, "live").denial()},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Groups, req.IncludeAuthorizedOperations = []string{"live"}, true
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				g := resp.(*kmsg.DescribeGroupsResponse).Groups[0]
				if g.Group != "live" {
					t.Fatalf("group %q", g.Group)
				}
				if ph.denied {
					wantCode(t, "group", g.ErrorCode, ph.code)
					if g.State != "" || g.ProtocolType != "" || g.Protocol != "" || len(g.Members) != 0 || g.AuthorizedOperations != -2147483648 {
						t.Errorf("denied group leaks %+v", g)
					}
					return
				}
				wantCode(t, "group", g.ErrorCode, 0)
				if len(g.Members) != 1 || string(g.Members[0].MemberAssignment) != liveAssignment {
					t.Errorf("members %+v", g.Members)
				}
				want := opsBits(opDescribe)
				switch {
				case ph.super:
					want = allGroupOps
				case ph.kind == "alternative":
					want = opsBits(opRead, opDescribe)
				}
				if g.AuthorizedOperations != want {
					t.Errorf("authorized operations %b, want %b", g.AuthorizedOperations, want)
				}
			},
		},
		{
			// The groups the principal may describe, or all of them with
			// DESCRIBE on the cluster.
			name: "ListGroups", key: 16, version: 5,
			acls:         []aclSpec{groupACL(opDescribe, "live")},
			codes:        []int16{0},
			alternatives: [][]aclSpec{{clusterACL(opDescribe)}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return kmsg.NewPtrListGroupsRequest()
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ListGroupsResponse)
				wantCode(t, "ListGroups", r.ErrorCode, 0)
				name := func(g kmsg.ListGroupsResponseGroup) string { return g.Group }
				switch {
				case ph.denied:
					wantTopics(t, "groups", r.Groups, name)
				case ph.super || ph.kind == "alternative":
					for _, g := range []string{"live", "readers", "hidden"} {
						if !has(r.Groups, name, g) {
							t.Errorf("group %s not listed", g)
						}
					}
				default:
					wantTopics(t, "groups", r.Groups, name, "live")
				}
			},
		},
		{
			name: "DeleteGroups", key: 42, version: 2,
			acls:      []aclSpec{groupACL(opDelete, "dg-").prefixed()},
			codes:     []int16{groupDenied},
			notEnough: []authzShortfall{{[]aclSpec{groupACL(opRead, "dg-").prefixed()}, groupDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.commitOffset(t, "dg-"+ph.tag, "orders", 1)
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{"dg-" + ph.tag}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DeleteGroupsResponse)
				if len(r.Groups) != 1 {
					t.Fatalf("groups %+v", r.Groups)
				}
				got := e.committed(t, "dg-"+ph.tag, "orders")
				if ph.denied {
					wantCode(t, "group", r.Groups[0].ErrorCode, ph.code)
					if got != 1 {
						t.Errorf("denied delete: committed offset %d", got)
					}
					return
				}
				wantCode(t, "group", r.Groups[0].ErrorCode, 0)
				if got != -1 {
					t.Errorf("deleted group still has offset %d", got)
				}
			},
		},
		{
			name: "OffsetDelete", key: 47, version: 0,
			acls:  []aclSpec{groupACL(opDelete, "od-").prefixed(), topicACL(opRead, "orders")},
			codes: []int16{groupDenied, topicDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.commitOffset(t, "od-"+ph.tag, "orders", 1)
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = "od-" + ph.tag
				rt := kmsg.NewOffsetDeleteRequestTopic()
				rt.Topic = "orders"
				rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
				req.Topics = []kmsg.OffsetDeleteRequestTopic{rt}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.OffsetDeleteResponse)
				got := e.committed(t, "od-"+ph.tag, "orders")
				if ph.denied && ph.code == groupDenied {
					wantCode(t, "group", r.ErrorCode, ph.code)
					if len(r.Topics) != 0 || got != 1 {
						t.Errorf("denied: %d topics answered, committed offset %d", len(r.Topics), got)
					}
					return
				}
				wantCode(t, "group", r.ErrorCode, 0)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				code := r.Topics[0].Partitions[0].ErrorCode
				if ph.denied {
					wantCode(t, "partition", code, ph.code)
					if got != 1 {
						t.Errorf("denied: committed offset %d", got)
					}
					return
				}
				wantCode(t, "partition", code, 0)
				if got != -1 {
					t.Errorf("offset still committed: %d", got)
				}
			},
		},
	}
}
