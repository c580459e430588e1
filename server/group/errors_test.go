package group

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
)

func TestMembershipErrors(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 2, "t")
	type call func() int16
	hb := func(group, member string, gen int32) call {
		return func() int16 { return h.heartbeat(group, member, gen) }
	}
	sync := func(group, member string, gen int32) call {
		return func() int16 { return h.c.SyncGroup(clientCtx, syncRequest(group, member, gen, nil)).ErrorCode }
	}
	join := func(group, member string, sessionTimeout time.Duration) call {
		return func() int16 {
			r := joinRequest(9, group, member, "t")
			r.SessionTimeoutMillis = int32(sessionTimeout.Milliseconds())
			return h.c.JoinGroup(clientCtx, r).ErrorCode
		}
	}
	cases := []struct {
		name string
		call call
		want int16
	}{
		{"heartbeat ok", hb("g", ids[1], gen), 0},
		{"heartbeat illegal generation", hb("g", ids[1], gen-1), kerr.IllegalGeneration.Code},
		{"heartbeat unknown member", hb("g", "who", gen), kerr.UnknownMemberID.Code},
		{"heartbeat unknown group", hb("nope", "who", 1), kerr.UnknownMemberID.Code},
		{"heartbeat empty group id", hb("", "who", 1), kerr.InvalidGroupID.Code},
		{"sync in stable group", sync("g", ids[1], gen), 0},
		{"sync illegal generation", sync("g", ids[1], gen+1), kerr.IllegalGeneration.Code},
		{"sync unknown member", sync("g", "who", gen), kerr.UnknownMemberID.Code},
		{"join unknown member of existing group", join("g", "who", testSession), kerr.UnknownMemberID.Code},
		{"join unknown member of unknown group", join("nope", "who", testSession), kerr.UnknownMemberID.Code},
		{"join session timeout too small", join("g", "", time.Second), kerr.InvalidSessionTimeout.Code},
		{"join session timeout too large", join("g", "", time.Hour), kerr.InvalidSessionTimeout.Code},
		{"join empty group id", join("", "", testSession), kerr.InvalidGroupID.Code},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.call(); got != tc.want {
				t.Fatalf("got %v want %v", kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
			}
		})
	}
	// Sync with a mismatching protocol name (v5).
	sr := syncRequest("g", ids[1], gen, nil)
	other := "roundrobin"
	sr.Protocol = &other
	if code := h.c.SyncGroup(clientCtx, sr).ErrorCode; code != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("sync with other protocol: %v", kerr.ErrorForCode(code))
	}
}

// blockingLog holds Replay until released, to observe a partition loading.
type blockingLog struct {
	*MemOffsetsLog
	release chan struct{}
}

func (l *blockingLog) Replay(p int32, fn func(ReplayedBatch) error) error {
	<-l.release
	return l.MemOffsetsLog.Replay(p, fn)
}

func TestCoordinatorOwnership(t *testing.T) {
	log := &blockingLog{MemOffsetsLog: NewMemOffsetsLog(), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(log.release) }) }
	t.Cleanup(release) // a failing test must not leave the load goroutine blocked
	clock := clocktest.NewFake(time.Unix(1_700_000_000, 0))
	c := New(testConfig(), log, clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer c.Close()
	p := c.PartitionFor("g")
	loaded := make(chan error, 1)
	go func() { loaded <- c.LoadPartition(p) }()
	waitFor(t, "loading", func() bool { return c.status("g") == kerr.CoordinatorLoadInProgress.Code })

	commit := func(group string) int16 {
		return commitCodes(c.OffsetCommit(context.Background(), commitRequest(8, group, "", -1, "t", map[int32]int64{0: 1})))[0]
	}
	if code := commit("g"); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("commit while loading: %v", kerr.ErrorForCode(code))
	}
	hbr := kmsg.NewPtrHeartbeatRequest()
	hbr.Group, hbr.MemberID = "g", "m"
	if code := c.Heartbeat(context.Background(), hbr).ErrorCode; code != 0 {
		t.Fatalf("heartbeat while loading answers blindly, got %v", kerr.ErrorForCode(code))
	}
	lg := c.ListGroups(context.Background(), kmsg.NewPtrListGroupsRequest())
	if lg.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("list groups while loading: %v", kerr.ErrorForCode(lg.ErrorCode))
	}
	other := "x"
	for i := 0; i < 100 && c.PartitionFor(other) == p; i++ {
		other += "x"
	}
	if code := commit(other); code != kerr.NotCoordinator.Code {
		t.Fatalf("commit for a partition not loaded: %v", kerr.ErrorForCode(code))
	}
	release()
	if err := recv(t, loaded); err != nil {
		t.Fatal(err)
	}
	if code := commit("g"); code != 0 {
		t.Fatalf("commit after load: %v", kerr.ErrorForCode(code))
	}
}

func TestUnloadAnswersWaitingJoins(t *testing.T) {
	h := newHarness(t, nil)
	ch := h.joinAsync(joinRequest(3, "g", "", "t"))
	h.waitJoining("g", 1)
	h.c.UnloadPartition(h.c.PartitionFor("g"))
	if r := recv(t, ch); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("waiting join after unload: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if n := h.clock.Pending(); n != 1 { // only the retention check remains
		t.Fatalf("%d timers left after unload", n)
	}
}

func TestJoinReturnsWhenContextEnds(t *testing.T) {
	h := newHarness(t, nil)
	ctx, cancel := context.WithCancel(clientCtx)
	done := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { done <- h.c.JoinGroup(ctx, joinRequest(3, "g", "", "t")) }()
	h.waitJoining("g", 1)
	cancel()
	if r := recv(t, done); r.ErrorCode == 0 {
		t.Fatalf("cancelled join answered %+v", r)
	}
}

func TestSyncStoreFailureRestartsRebalance(t *testing.T) {
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
	fs := h.syncAsync(syncRequest("g", follower.MemberID, 1, nil))
	h.waitSyncing("g", 1)
	h.log.FailAppends = errors.New("no replicas")
	lr := h.c.SyncGroup(clientCtx, syncRequest("g", leader.MemberID, 1, rangeAssign(t, leader.Members, "t", 6)))
	if lr.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("leader sync with failing log: %v", kerr.ErrorForCode(lr.ErrorCode))
	}
	if r := recv(t, fs); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("follower sync with failing log: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if s := h.state("g"); s != statePreparingRebalance {
		t.Fatalf("state %s, want a new rebalance", s)
	}
}

func TestAppendErrorMapping(t *testing.T) {
	h := newHarness(t, nil)
	cases := []struct {
		err         error
		group, offs int16
	}{
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator.Code, kerr.NotCoordinator.Code},
		{kerr.RequestTimedOut, kerr.RebalanceInProgress.Code, kerr.RequestTimedOut.Code},
		{kerr.MessageTooLarge, kerr.UnknownServerError.Code, kerr.InvalidCommitOffsetSize.Code},
		{context.DeadlineExceeded, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorNotAvailable.Code},
	}
	for _, tc := range cases {
		h.log.FailAppends = tc.err
		if got := h.c.append(context.Background(), 0, []KV{{Key: []byte{0, 2}}}); got != tc.group {
			t.Errorf("%v for group metadata: %v want %v", tc.err, kerr.ErrorForCode(got), kerr.ErrorForCode(tc.group))
		}
		if _, got := h.c.appendOffsets(context.Background(), 0, []KV{{Key: []byte{0, 1}}}); got != tc.offs {
			t.Errorf("%v for offsets: %v want %v", tc.err, kerr.ErrorForCode(got), kerr.ErrorForCode(tc.offs))
		}
	}
}
