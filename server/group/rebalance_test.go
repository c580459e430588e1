package group

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestJoinSyncThreeMembersRangeAssignment(t *testing.T) {
	h := newHarness(t, nil)
	var ids []string
	var chans []<-chan *kmsg.JoinGroupResponse
	for i := 0; i < 3; i++ {
		id := h.memberID("g")
		ids = append(ids, id)
		chans = append(chans, h.joinAsync(joinRequest(9, "g", id, "t")))
	}
	h.waitJoining("g", 3)
	if s := h.state("g"); s != statePreparingRebalance {
		t.Fatalf("state %s, want PreparingRebalance during the initial delay", s)
	}
	h.advanceUntilJoined("g")

	var leader *kmsg.JoinGroupResponse
	leaderID := ""
	for _, ch := range chans {
		r := recv(t, ch)
		if r.ErrorCode != 0 || r.Generation != 1 || r.Protocol == nil || *r.Protocol != "range" {
			t.Fatalf("join response %+v", r)
		}
		if leaderID == "" {
			leaderID = r.LeaderID
		}
		if r.LeaderID != leaderID || !slices.Contains(ids, leaderID) {
			t.Fatalf("leader %s, want one leader among %v", r.LeaderID, ids)
		}
		if r.MemberID == r.LeaderID {
			leader = r
			continue
		}
		if len(r.Members) != 0 {
			t.Fatalf("follower got %d members, only the leader gets metadata", len(r.Members))
		}
	}
	if leader == nil || len(leader.Members) != 3 {
		t.Fatalf("leader response %+v", leader)
	}
	if s := h.state("g"); s != stateCompletingRebalance {
		t.Fatalf("state %s, want CompletingRebalance", s)
	}
	syncs := map[string]<-chan *kmsg.SyncGroupResponse{}
	for _, id := range ids {
		if id != leaderID {
			syncs[id] = h.syncAsync(syncRequest("g", id, 1, nil))
		}
	}
	h.waitSyncing("g", 2)
	assignment := rangeAssign(t, leader.Members, "t", 6)
	lr := h.c.SyncGroup(clientCtx, syncRequest("g", leaderID, 1, assignment))
	got := map[string][]int32{leaderID: assignedPartitions(t, lr.MemberAssignment)}
	for id, ch := range syncs {
		r := recv(t, ch)
		if r.ErrorCode != 0 {
			t.Fatalf("sync %s: %v", id, kerr.ErrorForCode(r.ErrorCode))
		}
		got[id] = assignedPartitions(t, r.MemberAssignment)
	}
	var all []int32
	for _, id := range ids {
		if len(got[id]) != 2 {
			t.Fatalf("member %s got %v, want 2 partitions", id, got[id])
		}
		all = append(all, got[id]...)
	}
	slices.Sort(all)
	if !slices.Equal(all, []int32{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("partitions %v", all)
	}
	if s := h.state("g"); s != stateStable {
		t.Fatalf("state %s, want Stable", s)
	}
	for _, id := range ids {
		if code := h.heartbeat("g", id, 1); code != 0 {
			t.Fatalf("heartbeat: %v", kerr.ErrorForCode(code))
		}
	}
	// Describe shows metadata and assignments of a Stable group.
	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Version = 5
	d.Groups = []string{"g"}
	dg := h.c.DescribeGroups(clientCtx, d).Groups[0]
	if dg.State != "Stable" || dg.Protocol != "range" || dg.ProtocolType != "consumer" || len(dg.Members) != 3 {
		t.Fatalf("describe %+v", dg)
	}
	for _, m := range dg.Members {
		if !slices.Equal(assignedPartitions(t, m.MemberAssignment), got[m.MemberID]) || m.ClientID != "client" || m.ClientHost != "/127.0.0.1" {
			t.Fatalf("describe member %+v", m)
		}
	}
}

func TestInitialDelayExtendsWhileMembersArrive(t *testing.T) {
	h := newHarness(t, nil)
	a := h.joinAsync(joinRequest(3, "g", ""))
	h.waitJoining("g", 1)
	h.clock.Advance(2 * time.Second)
	b := h.joinAsync(joinRequest(3, "g", ""))
	h.waitJoining("g", 2)
	h.clock.Advance(time.Second) // first delay ends, but a member arrived: extended
	if s := h.state("g"); s != statePreparingRebalance {
		t.Fatalf("state %s, want the delay extended", s)
	}
	h.clock.Advance(testInitialDelay)
	ra, rb := recv(t, a), recv(t, b)
	if ra.ErrorCode != 0 || rb.ErrorCode != 0 || ra.Generation != 1 || rb.Generation != 1 {
		t.Fatalf("joins %+v %+v", ra, rb)
	}
}

func TestRebalanceOnNewMemberAndOnLeave(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 2, "t")

	// A third member triggers a rebalance; old members learn it from
	// their heartbeat and rejoin.
	newID := h.memberID("g")
	c3 := h.joinAsync(joinRequest(9, "g", newID, "t"))
	waitFor(t, "rebalance", func() bool { return h.state("g") == statePreparingRebalance })
	for _, id := range ids {
		if code := h.heartbeat("g", id, gen); code != kerr.RebalanceInProgress.Code {
			t.Fatalf("heartbeat during rebalance: %v", kerr.ErrorForCode(code))
		}
	}
	c1 := h.joinAsync(joinRequest(9, "g", ids[0], "t"))
	c2 := h.joinAsync(joinRequest(9, "g", ids[1], "t"))
	// No clock advance: the phase ends as soon as every member rejoined.
	for _, ch := range []<-chan *kmsg.JoinGroupResponse{c1, c2, c3} {
		if r := recv(t, ch); r.ErrorCode != 0 || r.Generation != gen+1 {
			t.Fatalf("rejoin %+v", r)
		}
	}
	if code := h.heartbeat("g", ids[0], gen); code != kerr.IllegalGeneration.Code {
		t.Fatalf("old generation heartbeat: %v", kerr.ErrorForCode(code))
	}

	// A leave of the third member rebalances again.
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 3
	lr.Group = "g"
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = newID
	unknown := kmsg.NewLeaveGroupRequestMember()
	unknown.MemberID = "nobody"
	lr.Members = []kmsg.LeaveGroupRequestMember{m, unknown}
	resp := h.c.LeaveGroup(clientCtx, lr)
	if resp.ErrorCode != 0 || resp.Members[0].ErrorCode != 0 || resp.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave %+v", resp)
	}
	if s := h.state("g"); s != statePreparingRebalance {
		t.Fatalf("state after leave %s", s)
	}
	c1 = h.joinAsync(joinRequest(9, "g", ids[0], "t"))
	c2 = h.joinAsync(joinRequest(9, "g", ids[1], "t"))
	for _, ch := range []<-chan *kmsg.JoinGroupResponse{c1, c2} {
		r := recv(t, ch)
		if r.ErrorCode != 0 || r.Generation != gen+2 {
			t.Fatalf("rejoin after leave %+v", r)
		}
		if r.MemberID == r.LeaderID && len(r.Members) != 2 {
			t.Fatalf("leader sees %d members", len(r.Members))
		}
	}
}

func TestLeaveV0LastMemberEmptiesGroup(t *testing.T) {
	h := newHarness(t, nil)
	ids, _ := h.stableGroup("g", 1, "t")
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 0
	lr.Group, lr.MemberID = "g", ids[0]
	if r := h.c.LeaveGroup(clientCtx, lr); r.ErrorCode != 0 {
		t.Fatalf("leave: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	// Empty groups go through the initial delay before the empty
	// generation is stored.
	h.clock.Advance(testRebalance)
	if s := h.state("g"); s != stateEmpty {
		t.Fatalf("state %s, want Empty", s)
	}
	if r := h.c.LeaveGroup(clientCtx, lr); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("second leave: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestSessionExpiry(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 2, "t")
	// Only the first member heartbeats.
	for i := 0; i < 3; i++ {
		h.clock.Advance(testSession / 2)
		if code := h.heartbeat("g", ids[0], gen); code != 0 && code != kerr.RebalanceInProgress.Code {
			t.Fatalf("heartbeat: %v", kerr.ErrorForCode(code))
		}
	}
	members, _, _, state := h.counts("g")
	if members != 1 || state != statePreparingRebalance {
		t.Fatalf("members %d state %s after expiry", members, state)
	}
	if code := h.heartbeat("g", ids[1], gen); code != kerr.UnknownMemberID.Code {
		t.Fatalf("expired member heartbeat: %v", kerr.ErrorForCode(code))
	}
	r := recv(t, h.joinAsync(joinRequest(9, "g", ids[0], "t")))
	if r.ErrorCode != 0 || r.Generation != gen+1 || len(r.Members) != 1 {
		t.Fatalf("rejoin %+v", r)
	}
}

func TestRebalanceTimeoutRemovesMembersThatDoNotRejoin(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 2, "t")
	// The leader rejoins (forcing a rebalance); the follower never does
	// but keeps heartbeating.
	c1 := h.joinAsync(joinRequest(9, "g", ids[0], "t"))
	h.waitJoining("g", 1)
	for elapsed := time.Duration(0); elapsed < testRebalance-testSession/2; elapsed += testSession / 2 {
		h.clock.Advance(testSession / 2)
		if code := h.heartbeat("g", ids[1], gen); code != kerr.RebalanceInProgress.Code {
			t.Fatalf("heartbeat after %v: %v", elapsed, kerr.ErrorForCode(code))
		}
	}
	h.clock.Advance(testSession / 2)
	r := recv(t, c1)
	if r.ErrorCode != 0 || r.Generation != gen+1 || len(r.Members) != 1 || r.Members[0].MemberID != ids[0] {
		t.Fatalf("join after rebalance timeout %+v", r)
	}
	if code := h.heartbeat("g", ids[1], gen); code != kerr.UnknownMemberID.Code {
		t.Fatalf("kicked member heartbeat: %v", kerr.ErrorForCode(code))
	}
}

func TestMemberThatNeverSyncsIsRemoved(t *testing.T) {
	h := newHarness(t, nil)
	id1, id2 := h.memberID("g"), h.memberID("g")
	c1 := h.joinAsync(joinRequest(9, "g", id1, "t"))
	c2 := h.joinAsync(joinRequest(9, "g", id2, "t"))
	h.waitJoining("g", 2)
	h.advanceUntilJoined("g")
	r1, r2 := recv(t, c1), recv(t, c2)
	leader, follower := r1, r2
	if r2.MemberID == r2.LeaderID {
		leader, follower = r2, r1
	}
	// The leader syncs; the follower never does.
	if r := h.c.SyncGroup(clientCtx, syncRequest("g", leader.MemberID, 1, rangeAssign(t, leader.Members, "t", 6))); r.ErrorCode != 0 {
		t.Fatalf("leader sync: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	for elapsed := time.Duration(0); elapsed < testRebalance; elapsed += testSession / 2 {
		h.heartbeat("g", leader.MemberID, 1)
		h.heartbeat("g", follower.MemberID, 1)
		h.clock.Advance(testSession / 2)
	}
	members, _, _, s := h.counts("g")
	if members != 1 || s != statePreparingRebalance {
		t.Fatalf("members %d state %s, want the silent member removed and a rebalance", members, s)
	}
	if code := h.heartbeat("g", follower.MemberID, 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("removed member heartbeat: %v", kerr.ErrorForCode(code))
	}
}

func TestStaticMemberRejoinKeepsAssignment(t *testing.T) {
	h := newHarness(t, nil)
	instance := "instance-1"
	req := joinRequest(9, "g", "", "t")
	req.InstanceID = &instance
	c1 := h.joinAsync(req)
	h.waitJoining("g", 1)
	h.advanceUntilJoined("g")
	r := recv(t, c1)
	if r.ErrorCode != 0 || r.Generation != 1 {
		t.Fatalf("static join %+v", r)
	}
	oldID := r.MemberID
	if len(oldID) < len(instance) || oldID[:len(instance)] != instance {
		t.Fatalf("static member id %q should start with the instance id", oldID)
	}
	assignment := rangeAssign(t, r.Members, "t", 6)
	sr := kmsg.NewPtrSyncGroupRequest()
	*sr = *syncRequest("g", oldID, 1, assignment)
	sr.InstanceID = &instance
	if resp := h.c.SyncGroup(clientCtx, sr); resp.ErrorCode != 0 {
		t.Fatalf("sync: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	// The instance restarts: it joins with no member id and gets a new one,
	// the same generation and no rebalance.
	r2 := h.c.JoinGroup(clientCtx, req)
	if r2.ErrorCode != 0 || r2.Generation != 1 || r2.MemberID == oldID || !r2.SkipAssignment {
		t.Fatalf("static rejoin %+v", r2)
	}
	if s := h.state("g"); s != stateStable {
		t.Fatalf("state %s, want Stable (no rebalance)", s)
	}
	sr.MemberID = r2.MemberID
	sr.GroupAssignment = nil
	resp := h.c.SyncGroup(clientCtx, sr)
	if resp.ErrorCode != 0 || len(assignedPartitions(t, resp.MemberAssignment)) != 6 {
		t.Fatalf("static sync after rejoin %+v", resp)
	}
	// The old incarnation is fenced.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	hb.Group, hb.MemberID, hb.Generation, hb.InstanceID = "g", oldID, 1, &instance
	if code := h.c.Heartbeat(clientCtx, hb).ErrorCode; code != kerr.FencedInstanceID.Code {
		t.Fatalf("old static member heartbeat: %v", kerr.ErrorForCode(code))
	}
	// Leaving by instance id alone removes it.
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 4
	lr.Group = "g"
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.InstanceID = &instance
	lr.Members = []kmsg.LeaveGroupRequestMember{lm}
	if resp := h.c.LeaveGroup(clientCtx, lr); resp.ErrorCode != 0 || resp.Members[0].ErrorCode != 0 {
		t.Fatalf("static leave %+v", resp)
	}
	if members, _, _, _ := h.counts("g"); members != 0 {
		t.Fatalf("%d members after static leave", members)
	}
}

func TestMemberIDRequired(t *testing.T) {
	h := newHarness(t, nil)
	// v4+: the first join only hands out an id.
	id := h.memberID("g")
	if members, _, _, _ := h.counts("g"); members != 0 {
		t.Fatalf("pending member counted as member")
	}
	// v3: the member is added at once.
	old := h.joinAsync(joinRequest(3, "g", "", "t"))
	h.waitJoining("g", 1)
	c := h.joinAsync(joinRequest(9, "g", id, "t"))
	h.waitJoining("g", 2)
	h.advanceUntilJoined("g")
	r1, r2 := recv(t, old), recv(t, c)
	if r1.ErrorCode != 0 || r2.ErrorCode != 0 || r2.MemberID != id {
		t.Fatalf("joins %+v %+v", r1, r2)
	}
	// An unused pending id expires with the session timeout.
	unused := h.memberID("g")
	h.clock.Advance(testSession)
	if r := h.c.JoinGroup(clientCtx, joinRequest(9, "g", unused, "t")); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("expired pending member join: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestGroupMaxSize(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GroupMaxSize = 1 })
	c1 := h.joinAsync(joinRequest(3, "g", "", "t"))
	h.waitJoining("g", 1)
	r := h.c.JoinGroup(clientCtx, joinRequest(3, "g", "", "t"))
	if r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("second join: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	h.advanceUntilJoined("g")
	if r := recv(t, c1); r.ErrorCode != 0 {
		t.Fatalf("first join: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestProtocolSelectionByVote(t *testing.T) {
	h := newHarness(t, nil)
	mk := func(names ...string) *kmsg.JoinGroupRequest {
		r := joinRequest(3, "g", "", "t")
		r.Protocols = nil
		for _, n := range names {
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name, p.Metadata = n, subscription("t")
			r.Protocols = append(r.Protocols, p)
		}
		return r
	}
	a := h.joinAsync(mk("range", "roundrobin", "sticky"))
	h.waitJoining("g", 1)
	b := h.joinAsync(mk("roundrobin", "range"))
	c := h.joinAsync(mk("roundrobin", "sticky", "range"))
	h.waitJoining("g", 3)
	// A member sharing no protocol with the group is refused.
	if r := h.c.JoinGroup(clientCtx, mk("cooperative-sticky")); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("incompatible join: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	h.advanceUntilJoined("g")
	for _, ch := range []<-chan *kmsg.JoinGroupResponse{a, b, c} {
		if r := recv(t, ch); r.ErrorCode != 0 || *r.Protocol != "roundrobin" {
			t.Fatalf("protocol %v error %d, want roundrobin (2 votes of 3)", r.Protocol, r.ErrorCode)
		}
	}
}

func TestStaticMemberKeptWhenItMissesARebalance(t *testing.T) {
	h := newHarness(t, nil)
	inst := "static-1"
	sreq := joinRequest(9, "g", "", "t")
	sreq.InstanceID = &inst
	cs := h.joinAsync(sreq)
	dynID := h.memberID("g")
	cd := h.joinAsync(joinRequest(9, "g", dynID, "t"))
	h.waitJoining("g", 2)
	h.advanceUntilJoined("g")
	rs, rd := recv(t, cs), recv(t, cd)
	if rs.ErrorCode != 0 || rd.ErrorCode != 0 {
		t.Fatalf("joins %+v %+v", rs, rd)
	}
	// The dynamic member rejoins with a new subscription; the static one
	// does not rejoin but keeps heartbeating until the rebalance timeout.
	again := h.joinAsync(joinRequest(9, "g", dynID, "t", "u"))
	h.waitJoining("g", 1)
	for elapsed := time.Duration(0); elapsed < testRebalance; elapsed += testSession / 2 {
		h.heartbeat("g", rs.MemberID, rs.Generation)
		h.clock.Advance(testSession / 2)
	}
	r := recv(t, again)
	if r.ErrorCode != 0 || r.Generation != rs.Generation+1 {
		t.Fatalf("rejoin %+v", r)
	}
	if members, _, _, _ := h.counts("g"); members != 2 {
		t.Fatalf("%d members, the static member must stay", members)
	}
}
