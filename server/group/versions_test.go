package group

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestResponsesEncodeAtEveryVersion answers each API at every version kmsg
// knows and checks that the response has the request's version and
// survives an encode/decode round trip (no field that a version cannot
// carry, no nil where a version needs a value).
func TestResponsesEncodeAtEveryVersion(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 1, "t")
	ctx := context.Background()
	check := func(name string, req kmsg.Request, resp kmsg.Response) {
		t.Helper()
		if resp.GetVersion() != req.GetVersion() {
			t.Fatalf("%s v%d answered with v%d", name, req.GetVersion(), resp.GetVersion())
		}
		b := resp.AppendTo(nil)
		back := resp.Key()
		decoded := kmsg.ResponseForKey(back)
		decoded.SetVersion(resp.GetVersion())
		if err := decoded.ReadFrom(b); err != nil {
			t.Fatalf("%s v%d: %v", name, req.GetVersion(), err)
		}
	}
	for v := int16(0); v <= kmsg.NewPtrHeartbeatRequest().MaxVersion(); v++ {
		r := kmsg.NewPtrHeartbeatRequest()
		r.Version, r.Group, r.MemberID, r.Generation = v, "g", ids[0], gen
		check("Heartbeat", r, h.c.Heartbeat(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrSyncGroupRequest().MaxVersion(); v++ {
		r := syncRequest("g", ids[0], gen, nil)
		r.Version = v
		check("SyncGroup", r, h.c.SyncGroup(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrJoinGroupRequest().MaxVersion(); v++ {
		r := joinRequest(v, "g", "", "t")
		r.SessionTimeoutMillis = 1 // refused at once: INVALID_SESSION_TIMEOUT
		check("JoinGroup", r, h.c.JoinGroup(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrOffsetCommitRequest().MaxVersion(); v++ {
		r := commitRequest(v, "g", ids[0], gen, "t", map[int32]int64{0: int64(v)})
		check("OffsetCommit", r, h.c.OffsetCommit(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrTxnOffsetCommitRequest().MaxVersion(); v++ {
		r := txnCommitRequest(v, "g", 7, "t", map[int32]int64{1: int64(v)})
		r.MemberID, r.Generation = ids[0], gen
		check("TxnOffsetCommit", r, h.c.TxnOffsetCommit(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrOffsetFetchRequest().MaxVersion(); v++ {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group = v, "g"
		ft := kmsg.NewOffsetFetchRequestTopic()
		ft.Topic, ft.Partitions = "t", []int32{0}
		r.Topics = []kmsg.OffsetFetchRequestTopic{ft}
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = "g"
		r.Groups = []kmsg.OffsetFetchRequestGroup{rg}
		check("OffsetFetch", r, h.c.OffsetFetch(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrListGroupsRequest().MaxVersion(); v++ {
		r := kmsg.NewPtrListGroupsRequest()
		r.Version = v
		check("ListGroups", r, h.c.ListGroups(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrDescribeGroupsRequest().MaxVersion(); v++ {
		r := kmsg.NewPtrDescribeGroupsRequest()
		r.Version, r.Groups = v, []string{"g", "none"}
		check("DescribeGroups", r, h.c.DescribeGroups(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrOffsetDeleteRequest().MaxVersion(); v++ {
		r := kmsg.NewPtrOffsetDeleteRequest()
		r.Version, r.Group = v, "g"
		check("OffsetDelete", r, h.c.OffsetDelete(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrDeleteGroupsRequest().MaxVersion(); v++ {
		r := kmsg.NewPtrDeleteGroupsRequest()
		r.Version, r.Groups = v, []string{"g"}
		check("DeleteGroups", r, h.c.DeleteGroups(ctx, r))
	}
	for v := int16(0); v <= kmsg.NewPtrLeaveGroupRequest().MaxVersion(); v++ {
		r := kmsg.NewPtrLeaveGroupRequest()
		r.Version, r.Group, r.MemberID = v, "g", "nobody"
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = "nobody"
		r.Members = []kmsg.LeaveGroupRequestMember{m}
		check("LeaveGroup", r, h.c.LeaveGroup(ctx, r))
	}
	// The last commit (the highest version) is what OffsetFetch returns.
	if _, got := h.fetchAll("g"); got[topicPartition{"t", 0}] != int64(kmsg.NewPtrOffsetCommitRequest().MaxVersion()) {
		t.Fatalf("offsets %v", got)
	}
}
