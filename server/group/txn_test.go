package group

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
)

func txnCommitRequest(version int16, groupID string, producerID int64, topic string, offsets map[int32]int64) *kmsg.TxnOffsetCommitRequest {
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	r.Version = version
	r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch = "txn", groupID, producerID, 3
	t := kmsg.NewTxnOffsetCommitRequestTopic()
	t.Topic = topic
	ps := make([]int32, 0, len(offsets))
	for p := range offsets {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = p, offsets[p], 9
		md := "txn-md"
		rp.Metadata = &md
		t.Partitions = append(t.Partitions, rp)
	}
	r.Topics = []kmsg.TxnOffsetCommitRequestTopic{t}
	return r
}

func txnCodes(r *kmsg.TxnOffsetCommitResponse) []int16 {
	var out []int16
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			out = append(out, p.ErrorCode)
		}
	}
	return out
}

func (h *harness) txnCommit(groupID string, producerID int64, topic string, offsets map[int32]int64) {
	h.t.Helper()
	codes := txnCodes(h.c.TxnOffsetCommit(context.Background(), txnCommitRequest(3, groupID, producerID, topic, offsets)))
	for _, code := range codes {
		if code != 0 {
			h.t.Fatalf("TxnOffsetCommit %s: %v", groupID, kerr.ErrorForCode(code))
		}
	}
}

// endTxn writes the marker and reports it, as the broker's WriteTxnMarkers does.
func (h *harness) endTxn(groupID string, producerID int64, commit bool) {
	p := h.c.PartitionFor(groupID)
	h.log.WriteMarker(p, producerID, commit)
	h.c.CompleteTransaction(p, producerID, commit)
}

type fetchedOffset struct {
	offset int64
	code   int16
}

// fetchListed fetches the listed partitions of topic with OffsetFetch v7.
func (h *harness) fetchListed(groupID string, requireStable bool, topic string, partitions ...int32) (int16, []fetchedOffset) {
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version = 7
	r.Group, r.RequireStable = groupID, requireStable
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = topic, partitions
	r.Topics = []kmsg.OffsetFetchRequestTopic{ft}
	resp := h.c.OffsetFetch(context.Background(), r)
	var out []fetchedOffset
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, fetchedOffset{p.Offset, p.ErrorCode})
		}
	}
	return resp.ErrorCode, out
}

// samePartitionGroups returns n group ids on one __consumer_offsets partition.
func samePartitionGroups(t *testing.T, c *Coordinator, n int) []string {
	t.Helper()
	out := []string{"g0"}
	for i := 1; len(out) < n && i < 1000; i++ {
		id := "g" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if c.PartitionFor(id) == c.PartitionFor(out[0]) {
			out = append(out, id)
		}
	}
	if len(out) < n {
		t.Fatalf("found only %v on one partition", out)
	}
	return out
}

func TestTxnOffsetsVisibleOnlyOnceCommitted(t *testing.T) {
	h := newHarness(t, nil)
	h.txnCommit("g", 7, "t", map[int32]int64{0: 10, 1: 11})

	bs := h.log.Batches(h.c.PartitionFor("g"))
	if len(bs) != 1 || !bs[0].Transactional || bs[0].ProducerID != 7 || len(bs[0].Records) != 2 {
		t.Fatalf("log %+v, want one transactional batch of producer 7", bs)
	}
	if code, got := h.fetchListed("g", false, "t", 0, 1); code != 0 || got[0] != (fetchedOffset{-1, 0}) || got[1] != (fetchedOffset{-1, 0}) {
		t.Fatalf("open transaction visible: %v %v", code, got)
	}
	unstable := fetchedOffset{-1, kerr.UnstableOffsetCommit.Code}
	if code, got := h.fetchListed("g", true, "t", 0, 1, 2); code != 0 || got[0] != unstable || got[1] != unstable || got[2] != (fetchedOffset{-1, 0}) {
		t.Fatalf("requireStable with an open transaction: %v %v", code, got)
	}
	// v8+: the same per partition, the group error stays NONE.
	r8 := kmsg.NewPtrOffsetFetchRequest()
	r8.Version, r8.RequireStable = 8, true
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = "g"
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic, rt.Partitions = "t", []int32{0}
	rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{rt}
	r8.Groups = []kmsg.OffsetFetchRequestGroup{rg}
	g8 := h.c.OffsetFetch(context.Background(), r8).Groups[0]
	if g8.ErrorCode != 0 || g8.Topics[0].Partitions[0].ErrorCode != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("v8 requireStable %+v", g8)
	}
	// Before v7 there is no requireStable: the flag set by a caller is ignored.
	r6 := kmsg.NewPtrOffsetFetchRequest()
	r6.Version, r6.Group, r6.RequireStable = 6, "g", true
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "t", []int32{0}
	r6.Topics = []kmsg.OffsetFetchRequestTopic{ft}
	if p := h.c.OffsetFetch(context.Background(), r6).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != -1 {
		t.Fatalf("v6 with requireStable %+v", p)
	}

	h.endTxn("g", 7, true)
	if code, got := h.fetchListed("g", true, "t", 0, 1); code != 0 || got[0] != (fetchedOffset{10, 0}) || got[1] != (fetchedOffset{11, 0}) {
		t.Fatalf("after commit: %v %v", code, got)
	}
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group = 7, "g"
	r.Topics = []kmsg.OffsetFetchRequestTopic{ft}
	p := h.c.OffsetFetch(context.Background(), r).Topics[0].Partitions[0]
	if p.LeaderEpoch != 9 || *p.Metadata != "txn-md" {
		t.Fatalf("committed transactional offset %+v", p)
	}
}

func TestTxnAbortDropsPendingOffsets(t *testing.T) {
	h := newHarness(t, nil)
	h.c.OffsetCommit(context.Background(), commitRequest(2, "g", "", -1, "t", map[int32]int64{0: 5}))
	h.txnCommit("g", 7, "t", map[int32]int64{0: 10})
	h.endTxn("g", 7, false)
	if _, got := h.fetchListed("g", true, "t", 0); got[0] != (fetchedOffset{5, 0}) {
		t.Fatalf("after abort: %v", got)
	}
	// The producer's next transaction starts from nothing pending.
	h.txnCommit("g", 7, "t", map[int32]int64{1: 20})
	h.endTxn("g", 7, true)
	if _, got := h.fetchListed("g", true, "t", 0, 1); got[0] != (fetchedOffset{5, 0}) || got[1] != (fetchedOffset{20, 0}) {
		t.Fatalf("after abort then commit: %v", got)
	}
	h.restart()
	if _, got := h.fetchListed("g", true, "t", 0, 1); got[0] != (fetchedOffset{5, 0}) || got[1] != (fetchedOffset{20, 0}) {
		t.Fatalf("after restart: %v", got)
	}
}

// TestTxnCommitAgainstNewerPlainCommit is Kafka's rule: a completing
// transaction replaces a committed offset only if its record was written
// after that offset's.
func TestTxnCommitAgainstNewerPlainCommit(t *testing.T) {
	check := func(h *harness, want int64) {
		h.t.Helper()
		if _, got := h.fetchListed("g", false, "t", 0); got[0] != (fetchedOffset{want, 0}) {
			h.t.Fatalf("got %v want offset %d", got, want)
		}
	}
	t.Run("plain commit after the transactional one wins", func(t *testing.T) {
		h := newHarness(t, nil)
		h.txnCommit("g", 7, "t", map[int32]int64{0: 10})
		h.c.OffsetCommit(context.Background(), commitRequest(2, "g", "", -1, "t", map[int32]int64{0: 20}))
		h.endTxn("g", 7, true)
		check(h, 20)
		h.restart()
		check(h, 20)
	})
	t.Run("transactional commit after the plain one wins", func(t *testing.T) {
		h := newHarness(t, nil)
		h.c.OffsetCommit(context.Background(), commitRequest(2, "g", "", -1, "t", map[int32]int64{0: 20}))
		h.txnCommit("g", 7, "t", map[int32]int64{0: 10})
		check(h, 20)
		h.endTxn("g", 7, true)
		check(h, 10)
		h.restart()
		check(h, 10)
	})
}

func TestTxnPendingOffsetsSurviveRestart(t *testing.T) {
	h := newHarness(t, nil)
	gs := samePartitionGroups(t, h.c, 2)
	h.txnCommit(gs[0], 7, "t", map[int32]int64{0: 10})
	h.txnCommit(gs[1], 7, "t", map[int32]int64{0: 30})
	h.txnCommit(gs[0], 8, "u", map[int32]int64{0: 40})
	h.restart()
	for _, g := range gs {
		if _, got := h.fetchListed(g, true, "t", 0); got[0].code != kerr.UnstableOffsetCommit.Code {
			t.Fatalf("%s after restart: %v", g, got)
		}
		if s := h.state(g); s != stateEmpty {
			t.Fatalf("%s with only pending offsets: %s, want Empty", g, s)
		}
	}
	// The reloaded coordinator still finds every group of the producer.
	h.endTxn(gs[0], 7, true)
	for i, want := range []int64{10, 30} {
		if _, got := h.fetchListed(gs[i], true, "t", 0); got[0] != (fetchedOffset{want, 0}) {
			t.Fatalf("%s after commit: %v", gs[i], got)
		}
	}
	// Producer 8's transaction is untouched.
	if _, got := h.fetchListed(gs[0], true, "u", 0); got[0].code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("other producer's offsets: %v", got)
	}
	h.endTxn(gs[0], 8, false)
	h.restart()
	if _, got := h.fetchListed(gs[0], true, "u", 0); got[0] != (fetchedOffset{-1, 0}) {
		t.Fatalf("aborted offsets after restart: %v", got)
	}
	if _, got := h.fetchListed(gs[1], true, "t", 0); got[0] != (fetchedOffset{30, 0}) {
		t.Fatalf("committed offsets after restart: %v", got)
	}
}

func TestTxnMarkerOnOtherPartitionDoesNotComplete(t *testing.T) {
	h := newHarness(t, nil)
	h.txnCommit("g", 7, "t", map[int32]int64{0: 10})
	other := (h.c.PartitionFor("g") + 1) % testPartitions
	h.log.WriteMarker(other, 7, true)
	h.c.CompleteTransaction(other, 7, true)
	if _, got := h.fetchListed("g", true, "t", 0); got[0].code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("marker on another partition completed the transaction: %v", got)
	}
}

func TestTxnOffsetCommitMemberValidation(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 2, "t")
	static := "instance-1"
	jr := joinRequest(9, "static", "", "t")
	jr.InstanceID = &static
	ch := h.joinAsync(jr)
	h.waitJoining("static", 1)
	h.advanceUntilJoined("static")
	sj := recv(t, ch)
	if sj.ErrorCode != 0 {
		t.Fatalf("static join: %v", kerr.ErrorForCode(sj.ErrorCode))
	}
	other := "instance-2"
	cases := []struct {
		name       string
		version    int16
		group      string
		member     string
		generation int32
		instance   *string
		want       int16
	}{
		{"member of the current generation", 3, "g", ids[1], gen, nil, 0},
		{"illegal generation", 3, "g", ids[0], gen + 1, nil, kerr.IllegalGeneration.Code},
		{"unknown member", 3, "g", "stranger", gen, nil, kerr.UnknownMemberID.Code},
		{"no member fields into a group with members", 3, "g", "", -1, nil, 0},
		{"v2 names no member", 2, "g", "ignored", gen + 7, nil, 0},
		{"static member", 3, "static", sj.MemberID, sj.Generation, &static, 0},
		{"fenced instance", 3, "static", "zombie", sj.Generation, &static, kerr.FencedInstanceID.Code},
		{"unknown instance", 3, "static", sj.MemberID, sj.Generation, &other, kerr.UnknownMemberID.Code},
		{"generation for a group that does not exist", 3, "fresh", "m", 3, nil, kerr.UnknownMemberID.Code},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := txnCommitRequest(tc.version, tc.group, 7, "t", map[int32]int64{0: 5})
			r.MemberID, r.Generation, r.InstanceID = tc.member, tc.generation, tc.instance
			if code := txnCodes(h.c.TxnOffsetCommit(context.Background(), r))[0]; code != tc.want {
				t.Fatalf("got %v want %v", kerr.ErrorForCode(code), kerr.ErrorForCode(tc.want))
			}
		})
	}
	// As in Kafka, the refused commit still created the group, Empty.
	if s := h.state("fresh"); s != stateEmpty {
		t.Fatalf("group created by TxnOffsetCommit: %s", s)
	}
}

func TestTxnOffsetCommitErrors(t *testing.T) {
	var verified []TxnVerification
	var verifyErr error
	h := newHarness(t, func(c *Config) {
		c.TopicPartitionExists = func(topic string, p int32) bool { return topic != "missing" && p < 6 }
		c.VerifyTransaction = func(_ context.Context, v TxnVerification) (VerificationGuard, error) {
			verified = append(verified, v)
			return 77, verifyErr
		}
	})
	ctx := context.Background()
	commit := func(r *kmsg.TxnOffsetCommitRequest) []int16 { return txnCodes(h.c.TxnOffsetCommit(ctx, r)) }

	r := txnCommitRequest(3, "g", 7, "t", map[int32]int64{0: 1, 9: 2})
	if codes := commit(r); codes[0] != 0 || codes[1] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown partition: %v", codes)
	}
	want := TxnVerification{TransactionalID: "txn", ProducerID: 7, ProducerEpoch: 3, Partition: h.c.PartitionFor("g")}
	if len(verified) != 1 || verified[0] != want {
		t.Fatalf("verification %+v, want %+v", verified, want)
	}
	// The append carries the guard the verification handed back.
	if g := h.log.Guards; len(g) != 1 || g[0] != 77 {
		t.Fatalf("guards the appends carried: %v, want [77]", g)
	}
	// Nothing known: answered without reaching the group, none created.
	if codes := commit(txnCommitRequest(3, "nogroup", 7, "missing", map[int32]int64{0: 1})); codes[0] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", codes)
	}
	if h.c.lookup("nogroup") != nil || len(verified) != 1 {
		t.Fatal("a request with no known partition reached the coordinator")
	}
	if codes := commit(txnCommitRequest(3, "", 7, "t", map[int32]int64{0: 1})); codes[0] != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %v", codes)
	}
	big := txnCommitRequest(3, "g", 7, "t", map[int32]int64{1: 1, 2: 2})
	md := string(make([]byte, DefaultOffsetMetadataMaxSize+1))
	big.Topics[0].Partitions[0].Metadata = &md
	if codes := commit(big); codes[0] != kerr.OffsetMetadataTooLarge.Code || codes[1] != 0 {
		t.Fatalf("oversized metadata: %v", codes)
	}

	for _, tc := range []struct {
		err  error
		want int16
	}{
		{kerr.NetworkException, kerr.CoordinatorLoadInProgress.Code},
		{kerr.InvalidTxnState, kerr.InvalidTxnState.Code},
		{kerr.InvalidProducerIDMapping, kerr.InvalidProducerIDMapping.Code},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator.Code},
	} {
		verifyErr = tc.err
		if codes := commit(txnCommitRequest(3, "g", 8, "t", map[int32]int64{3: 1})); codes[0] != tc.want {
			t.Errorf("verification failing with %v: %v want %v", tc.err, kerr.ErrorForCode(codes[0]), kerr.ErrorForCode(tc.want))
		}
	}
	verifyErr = nil

	h.log.FailAppends = errors.New("disk on fire")
	if codes := commit(txnCommitRequest(3, "g", 9, "t", map[int32]int64{4: 1})); codes[0] != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failing log: %v", codes)
	}
	h.log.FailAppends = nil
	g := h.c.lookup("g")
	g.mu.Lock()
	_, p8 := g.pendingTxn[8]
	_, p9 := g.pendingTxn[9]
	g.mu.Unlock()
	if p8 || p9 {
		t.Fatal("a refused commit left pending offsets")
	}
}

func TestTxnOffsetCommitWhileLoading(t *testing.T) {
	log := &blockingLog{MemOffsetsLog: NewMemOffsetsLog(), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(log.release) }) }
	t.Cleanup(release)
	c := New(testConfig(), log, clocktest.NewFake(time.Unix(1_700_000_000, 0)), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer c.Close()
	loaded := make(chan error, 1)
	go func() { loaded <- c.LoadPartition(c.PartitionFor("g")) }()
	waitFor(t, "loading", func() bool { return c.status("g") == kerr.CoordinatorLoadInProgress.Code })
	for v, want := range map[int16]int16{
		0: kerr.CoordinatorNotAvailable.Code,
		1: kerr.CoordinatorNotAvailable.Code,
		2: kerr.CoordinatorLoadInProgress.Code,
		3: kerr.CoordinatorLoadInProgress.Code,
	} {
		if code := txnCodes(c.TxnOffsetCommit(context.Background(), txnCommitRequest(v, "g", 7, "t", map[int32]int64{0: 1})))[0]; code != want {
			t.Errorf("v%d while loading: %v want %v", v, kerr.ErrorForCode(code), kerr.ErrorForCode(want))
		}
	}
	release()
	if err := recv(t, loaded); err != nil {
		t.Fatal(err)
	}
}

// replayGateLog reads its batches when Replay starts, then waits to hand
// them over: a marker appended meanwhile is one the replay does not see.
type replayGateLog struct {
	*MemOffsetsLog
	read, release chan struct{}
}

func (l *replayGateLog) Replay(p int32, fn func(ReplayedBatch) error) error {
	bs := l.Batches(p)
	close(l.read)
	<-l.release
	for _, b := range bs {
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

func TestTxnMarkerDuringLoadIsApplied(t *testing.T) {
	for _, commit := range []bool{true, false} {
		mem := NewMemOffsetsLog()
		clock := clocktest.NewFake(time.Unix(1_700_000_000, 0))
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		first := New(testConfig(), mem, clock, quiet)
		p := first.PartitionFor("g")
		if err := first.LoadPartition(p); err != nil {
			t.Fatal(err)
		}
		first.OffsetCommit(context.Background(), commitRequest(2, "g", "", -1, "t", map[int32]int64{0: 5}))
		first.TxnOffsetCommit(context.Background(), txnCommitRequest(3, "g", 7, "t", map[int32]int64{0: 10}))
		first.Close()

		log := &replayGateLog{MemOffsetsLog: mem, read: make(chan struct{}), release: make(chan struct{})}
		c := New(testConfig(), log, clock, quiet)
		loaded := make(chan error, 1)
		go func() { loaded <- c.LoadPartition(p) }()
		recv(t, log.read)
		mem.WriteMarker(p, 7, commit)
		c.CompleteTransaction(p, 7, commit)
		close(log.release)
		if err := recv(t, loaded); err != nil {
			t.Fatal(err)
		}
		h := &harness{t: t, c: c, clock: clock, log: mem}
		want := fetchedOffset{5, 0}
		if commit {
			want = fetchedOffset{10, 0}
		}
		if _, got := h.fetchListed("g", true, "t", 0); got[0] != want {
			t.Fatalf("commit=%v: marker reported during the load: %v want %v", commit, got, want)
		}
		c.Close()
	}
}

func TestPendingTxnOffsetsAndRetention(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.OffsetsRetention = time.Hour
		c.OffsetsRetentionCheckInterval = time.Minute
	})
	h.txnCommit("only-pending", 7, "t", map[int32]int64{0: 10})
	h.c.OffsetCommit(context.Background(), commitRequest(2, "both", "", -1, "t", map[int32]int64{0: 5}))
	h.txnCommit("both", 7, "t", map[int32]int64{0: 10})
	h.clock.Advance(2 * time.Hour)
	// Kafka expires the committed offset but keeps the pending one, and
	// the group with it.
	for _, g := range []string{"only-pending", "both"} {
		if h.c.lookup(g) == nil {
			t.Fatalf("%s with pending offsets expired", g)
		}
		if _, got := h.fetchListed(g, false, "t", 0); got[0] != (fetchedOffset{-1, 0}) {
			t.Fatalf("%s: %v", g, got)
		}
	}
	h.endTxn("only-pending", 7, true)
	h.endTxn("both", 7, true)
	for _, g := range []string{"only-pending", "both"} {
		if _, got := h.fetchListed(g, true, "t", 0); got[0] != (fetchedOffset{10, 0}) {
			t.Fatalf("%s after commit: %v", g, got)
		}
	}
}

func TestOffsetDeleteAndDeleteGroupsDropPendingOffsets(t *testing.T) {
	h := newHarness(t, nil)
	h.c.OffsetCommit(context.Background(), commitRequest(2, "g", "", -1, "t", map[int32]int64{0: 5}))
	h.txnCommit("g", 7, "t", map[int32]int64{0: 10, 1: 11})
	del := kmsg.NewPtrOffsetDeleteRequest()
	del.Group = "g"
	dt := kmsg.NewOffsetDeleteRequestTopic()
	dt.Topic = "t"
	dt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
	del.Topics = []kmsg.OffsetDeleteRequestTopic{dt}
	if r := h.c.OffsetDelete(context.Background(), del); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete %+v", r)
	}
	// Partition 1's pending offset keeps the Empty group alive.
	if h.c.lookup("g") == nil {
		t.Fatal("group with pending offsets deleted")
	}
	h.endTxn("g", 7, true)
	if _, got := h.fetchListed("g", true, "t", 0, 1); got[0] != (fetchedOffset{-1, 0}) || got[1] != (fetchedOffset{11, 0}) {
		t.Fatalf("after delete and commit: %v", got)
	}

	// An Empty group whose last pending offset is deleted goes.
	h.txnCommit("p", 7, "t", map[int32]int64{0: 1})
	del.Group = "p"
	h.c.OffsetDelete(context.Background(), del)
	if h.c.lookup("p") != nil {
		t.Fatal("group without offsets left after OffsetDelete")
	}

	h.txnCommit("d", 8, "t", map[int32]int64{0: 1})
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{"d"}
	if code := h.c.DeleteGroups(context.Background(), dg).Groups[0].ErrorCode; code != 0 {
		t.Fatalf("delete group with pending offsets: %v", kerr.ErrorForCode(code))
	}
	h.endTxn("d", 8, true)
	if h.c.lookup("d") != nil {
		t.Fatal("a commit marker resurrected a deleted group")
	}
}

func TestRequireStableForAllCommittedPartitions(t *testing.T) {
	h := newHarness(t, nil)
	h.c.OffsetCommit(context.Background(), commitRequest(2, "g", "", -1, "t", map[int32]int64{0: 20, 1: 21}))
	h.txnCommit("g", 7, "t", map[int32]int64{0: 10, 2: 12})
	fetch := func(requireStable bool) map[int32]fetchedOffset {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.RequireStable = 9, requireStable
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = "g" // null topics: every committed partition
		r.Groups = []kmsg.OffsetFetchRequestGroup{rg}
		out := make(map[int32]fetchedOffset)
		for _, tp := range h.c.OffsetFetch(context.Background(), r).Groups[0].Topics {
			for _, p := range tp.Partitions {
				out[p.Partition] = fetchedOffset{p.Offset, p.ErrorCode}
			}
		}
		return out
	}
	// Partition 2 has only a pending offset: not committed, not listed.
	got := fetch(true)
	if len(got) != 2 || got[0] != (fetchedOffset{-1, kerr.UnstableOffsetCommit.Code}) || got[1] != (fetchedOffset{21, 0}) {
		t.Fatalf("requireStable: %v", got)
	}
	got = fetch(false)
	if len(got) != 2 || got[0] != (fetchedOffset{20, 0}) || got[1] != (fetchedOffset{21, 0}) {
		t.Fatalf("without requireStable: %v", got)
	}
}
