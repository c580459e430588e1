package group

import "testing"

// With group.initial.rebalance.delay.ms=0 (the sample server.properties) a
// lone member's join completes inside its own JoinGroup call; the answer
// must still be that member's join result, not an empty one.
func TestJoinCompletesSynchronouslyWithoutInitialDelay(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GroupInitialRebalanceDelay = 0 })
	id := h.memberID("g")
	resp := recv(t, h.joinAsync(joinRequest(9, "g", id, "t")))
	if resp.ErrorCode != 0 || resp.MemberID != id || resp.Generation != 1 || resp.LeaderID != id {
		t.Fatalf("join: error %d member %q generation %d leader %q; want 0 %q 1 %q", resp.ErrorCode, resp.MemberID, resp.Generation, resp.LeaderID, id, id)
	}
	if resp.ProtocolType == nil || *resp.ProtocolType != consumerProtocolType || resp.Protocol == nil || *resp.Protocol != "range" {
		t.Fatalf("join: protocol type %v protocol %v", resp.ProtocolType, resp.Protocol)
	}
}
