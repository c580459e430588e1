package group

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSimpleCommitAndFetch(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TopicPartitionExists = func(topic string, p int32) bool { return topic != "missing" && p < 6 }
	})
	// v1-style simple commit: generation -1, no member id.
	r := h.c.OffsetCommit(context.Background(), commitRequest(8, "simple", "", -1, "t", map[int32]int64{0: 10, 1: 20}))
	if codes := commitCodes(r); codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("commit codes %v", codes)
	}
	if codes := commitCodes(h.c.OffsetCommit(context.Background(), commitRequest(8, "simple", "", -1, "missing", map[int32]int64{0: 1}))); codes[0] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("commit to missing topic %v", codes)
	}
	big := commitRequest(8, "simple", "", -1, "t", map[int32]int64{2: 1})
	md := string(make([]byte, DefaultOffsetMetadataMaxSize+1))
	big.Topics[0].Partitions[0].Metadata = &md
	if codes := commitCodes(h.c.OffsetCommit(context.Background(), big)); codes[0] != kerr.OffsetMetadataTooLarge.Code {
		t.Fatalf("oversized metadata %v", codes)
	}

	// v5 fetch of listed partitions: uncommitted ones answer -1.
	f := kmsg.NewPtrOffsetFetchRequest()
	f.Version = 5
	f.Group = "simple"
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "t", []int32{0, 1, 2}
	f.Topics = []kmsg.OffsetFetchRequestTopic{ft}
	fr := h.c.OffsetFetch(context.Background(), f)
	want := []struct {
		offset int64
		epoch  int32
		md     string
	}{{10, 7, "md"}, {20, 7, "md"}, {-1, -1, ""}}
	if fr.ErrorCode != 0 || len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 3 {
		t.Fatalf("fetch %+v", fr)
	}
	for i, p := range fr.Topics[0].Partitions {
		if p.Offset != want[i].offset || p.LeaderEpoch != want[i].epoch || *p.Metadata != want[i].md || p.ErrorCode != 0 {
			t.Fatalf("partition %d: %+v want %+v", i, p, want[i])
		}
	}
	// v8: several groups at once, null topics = everything committed.
	f8 := kmsg.NewPtrOffsetFetchRequest()
	f8.Version = 8
	f8.RequireStable = true
	for _, g := range []string{"simple", "unknown-group"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		f8.Groups = append(f8.Groups, rg)
	}
	r8 := h.c.OffsetFetch(context.Background(), f8)
	if len(r8.Groups) != 2 || r8.Groups[0].ErrorCode != 0 || len(r8.Groups[0].Topics) != 1 || len(r8.Groups[0].Topics[0].Partitions) != 2 {
		t.Fatalf("v8 fetch %+v", r8)
	}
	if r8.Groups[1].ErrorCode != 0 || len(r8.Groups[1].Topics) != 0 {
		t.Fatalf("v8 fetch of unknown group %+v", r8.Groups[1])
	}
	// v0 (no group error field): errors are repeated per partition.
	h.c.UnloadPartition(h.c.PartitionFor("simple"))
	f.Version = 0
	fr = h.c.OffsetFetch(context.Background(), f)
	if fr.Topics[0].Partitions[0].ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("v0 fetch on unloaded partition %+v", fr.Topics[0].Partitions[0])
	}
}

func TestMemberCommitRules(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 2, "t")
	cases := []struct {
		name     string
		member   string
		gen      int32
		wantCode int16
	}{
		{"member of the current generation", ids[0], gen, 0},
		{"illegal generation", ids[0], gen + 5, kerr.IllegalGeneration.Code},
		{"unknown member", "stranger", gen, kerr.UnknownMemberID.Code},
		{"simple commit into a group with members", "", -1, kerr.UnknownMemberID.Code},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.c.OffsetCommit(context.Background(), commitRequest(8, "g", tc.member, tc.gen, "t", map[int32]int64{0: 5}))
			if code := commitCodes(r)[0]; code != tc.wantCode {
				t.Fatalf("got %v want %v", kerr.ErrorForCode(code), kerr.ErrorForCode(tc.wantCode))
			}
		})
	}
	// A generation for a group that does not exist is refused.
	if code := commitCodes(h.c.OffsetCommit(context.Background(), commitRequest(8, "nope", "m", 3, "t", map[int32]int64{0: 5})))[0]; code != kerr.IllegalGeneration.Code {
		t.Fatalf("commit to unknown group with generation: %v", kerr.ErrorForCode(code))
	}
	// A failed append is not acknowledged and changes nothing.
	h.log.FailAppends = errors.New("disk on fire")
	if code := commitCodes(h.c.OffsetCommit(context.Background(), commitRequest(8, "g", ids[0], gen, "t", map[int32]int64{0: 99})))[0]; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit with failing log: %v", kerr.ErrorForCode(code))
	}
	h.log.FailAppends = nil
	if _, got := h.fetchAll("g"); got[topicPartition{"t", 0}] != 5 {
		t.Fatalf("offsets after failed commit %v", got)
	}
}

func TestRestartRestoresOffsetsAndGroups(t *testing.T) {
	h := newHarness(t, nil)
	// A group whose members all left: it must come back Empty.
	left, lgen := h.stableGroup("left", 1, "u")
	h.c.OffsetCommit(context.Background(), commitRequest(8, "left", left[0], lgen, "u", map[int32]int64{1: 11}))
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 1
	lr.Group, lr.MemberID = "left", left[0]
	h.c.LeaveGroup(context.Background(), lr)
	h.clock.Advance(testRebalance)
	if s := h.state("left"); s != stateEmpty {
		t.Fatalf("left group state %s", s)
	}
	ids, gen := h.stableGroup("stable", 2, "t")
	commitRequestV := commitRequest(8, "stable", ids[0], gen, "t", map[int32]int64{0: 100, 3: 300})
	if codes := commitCodes(h.c.OffsetCommit(context.Background(), commitRequestV)); codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("commit %v", codes)
	}
	// A simple consumer group: offsets only.
	h.c.OffsetCommit(context.Background(), commitRequest(2, "simple", "", -1, "t", map[int32]int64{2: 22}))

	h.restart()

	for _, tc := range []struct {
		group string
		want  map[topicPartition]int64
	}{
		{"stable", map[topicPartition]int64{{"t", 0}: 100, {"t", 3}: 300}},
		{"left", map[topicPartition]int64{{"u", 1}: 11}},
		{"simple", map[topicPartition]int64{{"t", 2}: 22}},
	} {
		code, got := h.fetchAll(tc.group)
		if code != 0 || len(got) != len(tc.want) {
			t.Fatalf("%s: code %d offsets %v want %v", tc.group, code, got, tc.want)
		}
		for tp, o := range tc.want {
			if got[tp] != o {
				t.Fatalf("%s %v: %d want %d", tc.group, tp, got[tp], o)
			}
		}
	}
	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Version = 5
	d.Groups = []string{"stable", "left", "simple"}
	dr := h.c.DescribeGroups(context.Background(), d)
	if g := dr.Groups[0]; g.State != "Stable" || len(g.Members) != 2 || g.Protocol != "range" {
		t.Fatalf("stable after restart %+v", g)
	}
	if g := dr.Groups[1]; g.State != "Empty" || g.ProtocolType != "consumer" || len(g.Members) != 0 {
		t.Fatalf("left after restart %+v", g)
	}
	if g := dr.Groups[2]; g.State != "Empty" || g.ProtocolType != "" {
		t.Fatalf("simple after restart %+v", g)
	}
	// The reloaded members keep their generation and may go on.
	if code := h.heartbeat("stable", ids[1], gen); code != 0 {
		t.Fatalf("heartbeat after restart: %v", kerr.ErrorForCode(code))
	}
	// The next generation of the emptied group continues from the stored one.
	c := h.joinAsync(joinRequest(3, "left", "", "u"))
	h.waitJoining("left", 1)
	h.advanceUntilJoined("left")
	if r := recv(t, c); r.Generation != lgen+2 {
		t.Fatalf("generation %d after restart, want %d", r.Generation, lgen+2)
	}
}

func TestDeleteGroups(t *testing.T) {
	h := newHarness(t, nil)
	h.stableGroup("busy", 1, "t")
	h.c.OffsetCommit(context.Background(), commitRequest(2, "idle", "", -1, "t", map[int32]int64{0: 1, 1: 2}))
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version = 2
	req.Groups = []string{"busy", "idle", "never"}
	resp := h.c.DeleteGroups(context.Background(), req)
	want := []int16{kerr.NonEmptyGroup.Code, 0, kerr.GroupIDNotFound.Code}
	for i, g := range resp.Groups {
		if g.ErrorCode != want[i] {
			t.Fatalf("%s: %v want %v", g.Group, kerr.ErrorForCode(g.ErrorCode), kerr.ErrorForCode(want[i]))
		}
	}
	if _, got := h.fetchAll("idle"); len(got) != 0 {
		t.Fatalf("offsets after delete %v", got)
	}
	h.restart()
	if _, got := h.fetchAll("idle"); len(got) != 0 {
		t.Fatalf("offsets after delete and restart %v", got)
	}
	lg := kmsg.NewPtrListGroupsRequest()
	for _, g := range h.c.ListGroups(context.Background(), lg).Groups {
		if g.Group == "idle" {
			t.Fatal("deleted group listed after restart")
		}
	}
}

func TestOffsetDelete(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 1, "t")
	h.c.OffsetCommit(context.Background(), commitRequest(8, "g", ids[0], gen, "t", map[int32]int64{0: 1}))
	h.c.OffsetCommit(context.Background(), commitRequest(8, "g", ids[0], gen, "u", map[int32]int64{0: 2}))
	del := func(group string, topics ...string) *kmsg.OffsetDeleteResponse {
		r := kmsg.NewPtrOffsetDeleteRequest()
		r.Group = group
		for _, tn := range topics {
			rt := kmsg.NewOffsetDeleteRequestTopic()
			rt.Topic = tn
			rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
			r.Topics = append(r.Topics, rt)
		}
		return h.c.OffsetDelete(context.Background(), r)
	}
	r := del("g", "t", "u")
	if r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code || r.Topics[1].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete on subscribed group %+v", r)
	}
	if _, got := h.fetchAll("g"); len(got) != 1 || got[topicPartition{"t", 0}] != 1 {
		t.Fatalf("offsets %v", got)
	}
	if r := del("nope", "t"); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("unknown group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	// Once the group is empty, any offset may go; the last one takes the
	// group with it.
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 2
	lr.Group, lr.MemberID = "g", ids[0]
	h.c.LeaveGroup(context.Background(), lr)
	h.clock.Advance(testRebalance)
	if r := del("g", "t"); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete on empty group %+v", r)
	}
	if h.c.lookup("g") != nil {
		t.Fatal("empty group without offsets should be gone")
	}
}

func TestListGroupsFilters(t *testing.T) {
	h := newHarness(t, nil)
	h.stableGroup("stable", 1, "t")
	h.c.OffsetCommit(context.Background(), commitRequest(2, "empty", "", -1, "t", map[int32]int64{0: 1}))
	list := func(version int16, states, types []string) []string {
		r := kmsg.NewPtrListGroupsRequest()
		r.Version, r.StatesFilter, r.TypesFilter = version, states, types
		var out []string
		for _, g := range h.c.ListGroups(context.Background(), r).Groups {
			out = append(out, g.Group+"/"+g.GroupState+"/"+g.ProtocolType+"/"+g.GroupType)
		}
		return out
	}
	cases := []struct {
		name    string
		version int16
		states  []string
		types   []string
		want    []string
	}{
		{"all", 5, nil, nil, []string{"empty/Empty//classic", "stable/Stable/consumer/classic"}},
		{"states", 4, []string{"stable"}, nil, []string{"stable/Stable/consumer/classic"}},
		{"states ignored before v4", 3, []string{"Stable"}, nil, []string{"empty/Empty//classic", "stable/Stable/consumer/classic"}},
		{"type classic", 5, nil, []string{"Classic"}, []string{"empty/Empty//classic", "stable/Stable/consumer/classic"}},
		{"type consumer", 5, nil, []string{"consumer"}, nil},
		{"both", 5, []string{"Empty", "Dead"}, []string{"classic"}, []string{"empty/Empty//classic"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := list(tc.version, tc.states, tc.types)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v want %v", got, tc.want)
				}
			}
		})
	}
}

func TestOffsetExpiry(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.OffsetsRetention = time.Hour
		c.OffsetsRetentionCheckInterval = time.Minute
	})
	h.c.OffsetCommit(context.Background(), commitRequest(2, "simple", "", -1, "t", map[int32]int64{0: 1}))
	ret := commitRequest(2, "short", "", -1, "t", map[int32]int64{0: 1})
	ret.RetentionTimeMillis = (10 * time.Minute).Milliseconds()
	h.c.OffsetCommit(context.Background(), ret)
	ids, gen := h.stableGroup("live", 1, "t")
	h.c.OffsetCommit(context.Background(), commitRequest(8, "live", ids[0], gen, "t", map[int32]int64{0: 5}))
	h.c.OffsetCommit(context.Background(), commitRequest(8, "live", ids[0], gen, "gone", map[int32]int64{0: 6}))

	for elapsed := time.Duration(0); elapsed < 11*time.Minute; elapsed += testSession / 2 {
		h.clock.Advance(testSession / 2)
		h.heartbeat("live", ids[0], gen)
	}
	if _, got := h.fetchAll("short"); len(got) != 0 {
		t.Fatalf("explicit retention not applied: %v", got)
	}
	if _, got := h.fetchAll("simple"); len(got) != 1 {
		t.Fatalf("simple offsets expired early: %v", got)
	}
	for elapsed := time.Duration(0); elapsed < time.Hour; elapsed += testSession / 2 {
		h.clock.Advance(testSession / 2)
		h.heartbeat("live", ids[0], gen)
	}
	if _, got := h.fetchAll("simple"); len(got) != 0 {
		t.Fatalf("simple offsets not expired: %v", got)
	}
	if h.c.lookup("simple") != nil {
		t.Fatal("simple group should be gone with its last offset")
	}
	// A Stable consumer group keeps the offsets of topics it subscribes to.
	if _, got := h.fetchAll("live"); len(got) != 1 || got[topicPartition{"t", 0}] != 5 {
		t.Fatalf("live group offsets %v", got)
	}
}
