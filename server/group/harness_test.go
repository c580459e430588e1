package group

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
)

const (
	testPartitions   = 4
	testSession      = 10 * time.Second
	testRebalance    = 20 * time.Second
	testInitialDelay = 3 * time.Second
)

type harness struct {
	t     *testing.T
	c     *Coordinator
	clock *clocktest.Fake
	log   *MemOffsetsLog
	cfg   Config
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.OffsetsTopicNumPartitions = testPartitions
	cfg.GroupInitialRebalanceDelay = testInitialDelay
	return cfg
}

func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	cfg := testConfig()
	if mod != nil {
		mod(&cfg)
	}
	h := &harness{t: t, clock: clocktest.NewFake(time.Unix(1_700_000_000, 0)), log: NewMemOffsetsLog(), cfg: cfg}
	h.start()
	return h
}

// start builds a coordinator over h.log and loads every partition, as a
// broker does after a restart.
func (h *harness) start() {
	h.t.Helper()
	h.c = New(h.cfg, h.log, h.clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for p := int32(0); p < testPartitions; p++ {
		if err := h.c.LoadPartition(p); err != nil {
			h.t.Fatalf("LoadPartition(%d): %v", p, err)
		}
	}
	h.t.Cleanup(h.c.Close)
}

func (h *harness) restart() {
	h.t.Helper()
	h.c.Close()
	h.start()
}

// waitFor polls cond; the state it waits for is reached by goroutines that
// only need scheduling, never by the passage of (fake) time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) counts(groupID string) (members, awaitingJoin, awaitingSync int, state groupState) {
	g := h.c.lookup(groupID)
	if g == nil {
		return 0, 0, 0, ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.members {
		if m.awaitingJoin != nil {
			awaitingJoin++
		}
		if m.awaitingSync != nil {
			awaitingSync++
		}
	}
	return len(g.members), awaitingJoin, awaitingSync, g.state
}

func (h *harness) waitJoining(groupID string, n int) {
	h.t.Helper()
	waitFor(h.t, "members awaiting join", func() bool { _, j, _, _ := h.counts(groupID); return j == n })
}

func (h *harness) waitSyncing(groupID string, n int) {
	h.t.Helper()
	waitFor(h.t, "members awaiting sync", func() bool { _, _, s, _ := h.counts(groupID); return s == n })
}

// advanceUntilJoined moves the fake clock in steps of the initial rebalance
// delay, which new members extend, until the join phase is over.
func (h *harness) advanceUntilJoined(groupID string) {
	h.t.Helper()
	for i := 0; i < 10 && h.state(groupID) == statePreparingRebalance; i++ {
		h.clock.Advance(testInitialDelay)
	}
	if s := h.state(groupID); s == statePreparingRebalance {
		h.t.Fatalf("group %s still %s", groupID, s)
	}
}

func (h *harness) state(groupID string) groupState {
	_, _, _, s := h.counts(groupID)
	return s
}

func subscription(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = 1
	m.Topics = topics
	return m.AppendTo(nil)
}

func joinRequest(version int16, groupID, memberID string, topics ...string) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version = version
	r.Group = groupID
	r.MemberID = memberID
	r.SessionTimeoutMillis = int32(testSession.Milliseconds())
	r.RebalanceTimeoutMillis = int32(testRebalance.Milliseconds())
	r.ProtocolType = consumerProtocolType
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", subscription(topics...)
	r.Protocols = []kmsg.JoinGroupRequestProtocol{p}
	return r
}

var clientCtx = WithClientInfo(context.Background(), ClientInfo{ClientID: "client", ClientHost: "/127.0.0.1"})

func (h *harness) joinAsync(req *kmsg.JoinGroupRequest) <-chan *kmsg.JoinGroupResponse {
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { ch <- h.c.JoinGroup(clientCtx, req) }()
	return ch
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("no response")
	}
	var zero T
	return zero
}

// newMemberID runs the v4+ MEMBER_ID_REQUIRED step and returns the id.
func (h *harness) memberID(groupID string) string {
	h.t.Helper()
	resp := h.c.JoinGroup(clientCtx, joinRequest(9, groupID, ""))
	if resp.ErrorCode != kerr.MemberIDRequired.Code || resp.MemberID == "" {
		h.t.Fatalf("first join: error %d member %q, want MEMBER_ID_REQUIRED", resp.ErrorCode, resp.MemberID)
	}
	return resp.MemberID
}

func syncRequest(groupID, memberID string, generation int32, assignment map[string][]byte) *kmsg.SyncGroupRequest {
	r := kmsg.NewPtrSyncGroupRequest()
	r.Version = 5
	r.Group, r.MemberID, r.Generation = groupID, memberID, generation
	pt, p := consumerProtocolType, "range"
	r.ProtocolType, r.Protocol = &pt, &p
	ids := make([]string, 0, len(assignment))
	for id := range assignment {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = id, assignment[id]
		r.GroupAssignment = append(r.GroupAssignment, a)
	}
	return r
}

func (h *harness) syncAsync(req *kmsg.SyncGroupRequest) <-chan *kmsg.SyncGroupResponse {
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	go func() { ch <- h.c.SyncGroup(clientCtx, req) }()
	return ch
}

func (h *harness) heartbeat(groupID, memberID string, generation int32) int16 {
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version = 4
	r.Group, r.MemberID, r.Generation = groupID, memberID, generation
	return h.c.Heartbeat(context.Background(), r).ErrorCode
}

// rangeAssign is what a consumer leader's range assignor computes for one
// topic: members sorted by id, contiguous partition ranges, the first
// members taking one extra partition when the split is uneven.
func rangeAssign(t *testing.T, members []kmsg.JoinGroupResponseMember, topic string, partitions int32) map[string][]byte {
	t.Helper()
	ids := make([]string, 0, len(members))
	for _, m := range members {
		var s kmsg.ConsumerMemberMetadata
		if err := s.ReadFrom(m.ProtocolMetadata); err != nil {
			t.Fatalf("member %s metadata: %v", m.MemberID, err)
		}
		if slices.Contains(s.Topics, topic) {
			ids = append(ids, m.MemberID)
		}
	}
	slices.Sort(ids)
	out := make(map[string][]byte)
	n := int32(len(ids))
	next := int32(0)
	for i, id := range ids {
		count := partitions / n
		if int32(i) < partitions%n {
			count++
		}
		a := kmsg.NewConsumerMemberAssignment()
		at := kmsg.NewConsumerMemberAssignmentTopic()
		at.Topic = topic
		for p := next; p < next+count; p++ {
			at.Partitions = append(at.Partitions, p)
		}
		next += count
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{at}
		out[id] = a.AppendTo(nil)
	}
	return out
}

func assignedPartitions(t *testing.T, b []byte) []int32 {
	t.Helper()
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(b); err != nil {
		t.Fatalf("assignment: %v", err)
	}
	var ps []int32
	for _, at := range a.Topics {
		ps = append(ps, at.Partitions...)
	}
	return ps
}

// stableGroup forms a group of n members subscribed to topics and returns
// their ids (leader first) and the generation.
func (h *harness) stableGroup(groupID string, n int, topics ...string) ([]string, int32) {
	h.t.Helper()
	var chans []<-chan *kmsg.JoinGroupResponse
	for i := 0; i < n; i++ {
		id := h.memberID(groupID)
		chans = append(chans, h.joinAsync(joinRequest(9, groupID, id, topics...)))
	}
	h.waitJoining(groupID, n)
	h.advanceUntilJoined(groupID)
	var leader *kmsg.JoinGroupResponse
	var followers []string
	var gen int32
	for _, ch := range chans {
		r := recv(h.t, ch)
		if r.ErrorCode != 0 {
			h.t.Fatalf("join: %v", kerr.ErrorForCode(r.ErrorCode))
		}
		gen = r.Generation
		if r.LeaderID == r.MemberID {
			leader = r
		} else {
			followers = append(followers, r.MemberID)
		}
	}
	if leader == nil {
		h.t.Fatal("no leader")
	}
	var syncs []<-chan *kmsg.SyncGroupResponse
	for _, id := range followers {
		syncs = append(syncs, h.syncAsync(syncRequest(groupID, id, gen, nil)))
	}
	h.waitSyncing(groupID, len(followers))
	topic := "t"
	if len(topics) > 0 {
		topic = topics[0]
	}
	assignment := rangeAssign(h.t, leader.Members, topic, 6)
	if r := h.c.SyncGroup(clientCtx, syncRequest(groupID, leader.MemberID, gen, assignment)); r.ErrorCode != 0 {
		h.t.Fatalf("leader sync: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	for _, ch := range syncs {
		if r := recv(h.t, ch); r.ErrorCode != 0 {
			h.t.Fatalf("follower sync: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	if s := h.state(groupID); s != stateStable {
		h.t.Fatalf("state %s, want Stable", s)
	}
	return append([]string{leader.MemberID}, followers...), gen
}

func commitRequest(version int16, groupID, memberID string, generation int32, topic string, offsets map[int32]int64) *kmsg.OffsetCommitRequest {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version = version
	r.Group, r.MemberID, r.Generation = groupID, memberID, generation
	r.RetentionTimeMillis = -1
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = topic
	ps := make([]int32, 0, len(offsets))
	for p := range offsets {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = p, offsets[p], 7
		md := "md"
		rp.Metadata = &md
		t.Partitions = append(t.Partitions, rp)
	}
	r.Topics = []kmsg.OffsetCommitRequestTopic{t}
	return r
}

func commitCodes(r *kmsg.OffsetCommitResponse) []int16 {
	var out []int16
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			out = append(out, p.ErrorCode)
		}
	}
	return out
}

// fetchAll fetches every committed offset of a group with OffsetFetch v8
// (null topics) as topic/partition -> offset.
func (h *harness) fetchAll(groupID string) (int16, map[topicPartition]int64) {
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version = 8
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = groupID
	r.Groups = []kmsg.OffsetFetchRequestGroup{g}
	resp := h.c.OffsetFetch(context.Background(), r)
	out := make(map[topicPartition]int64)
	for _, t := range resp.Groups[0].Topics {
		for _, p := range t.Partitions {
			out[topicPartition{t.Topic, p.Partition}] = p.Offset
		}
	}
	return resp.Groups[0].ErrorCode, out
}
