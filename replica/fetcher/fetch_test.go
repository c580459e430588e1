package fetcher

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"

	"github.com/kbroker/kbroker/internal/wirefix"
)

func recs(epoch int32, values ...string) []rec {
	out := make([]rec, len(values))
	for i, v := range values {
		out[i] = rec{epoch, v}
	}
	return out
}

// A new follower copies the leader's log from offset 0, byte for byte:
// same offsets, same PartitionLeaderEpoch, same epoch cache.
func TestFollowerCatchesUpFromEmpty(t *testing.T) {
	leaderLog := memLogOf(t, append(append(recs(0, "a", "b"), recs(1, "c")...), recs(3, "d", "e", "f")...)...)
	_, leader, follower := followFromEmpty(t, "orders", leaderLog, 3)
	requireSameLog(t, leaderLog, follower.log)

	// New leader appends keep flowing.
	appendRecs(t, leaderLog, recs(3, "g", "h")...)
	waitFor(t, 5*time.Second, "second catch-up", caughtUp(leaderLog, follower.log))
	requireSameLog(t, leaderLog, follower.log)
	waitFor(t, 5*time.Second, "follower HW", func() bool { return follower.HighWatermark() == leaderLog.LogEndOffset() })

	// Every fetch carries our replica id, the current leader epoch and
	// topic ids (v13+: the default version is 16).
	for _, f := range leader.fetchesOf(follower.tp()) {
		if f.replicaID != 2 || f.currentEpoch != 3 || f.version != DefaultFetchVersion {
			t.Fatalf("fetch %+v: want replica 2, current epoch 3, version %d", f, DefaultFetchVersion)
		}
	}
	if qs := leader.epochQuestions(); len(qs) != 0 {
		t.Fatalf("an empty follower asked OffsetForLeaderEpoch: %+v", qs)
	}
}

// The follower's HW is min(leader HW, own LEO) after every response
// (a follower may not expose records it does not hold).
func TestFollowerHighWatermarkFollowsLeader(t *testing.T) {
	leaderLog := memLogOf(t, recs(0, "a", "b", "c", "d", "e")...)
	leader := newFakeLeader()
	lp := leader.addPartition("t", 0, leaderLog, 0)
	leader.set(func() { lp.hw = 3 })
	cfg := testConfig()
	// One batch per response, so that the leader's HW is above the
	// follower's LEO for the first rounds.
	cfg.ReplicaFetchMaxBytes = 1
	h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})

	follower := newFakePartition("t", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "catch-up", caughtUp(leaderLog, follower.log))
	waitFor(t, 5*time.Second, "HW 3", func() bool { return follower.HighWatermark() == 3 })

	leader.set(func() { lp.hw = 5 })
	waitFor(t, 5*time.Second, "HW 5", func() bool { return follower.HighWatermark() == 5 })

	follower.mu.Lock()
	defer follower.mu.Unlock()
	sawBelow := false
	for _, s := range follower.hwSets {
		leaderHW, leo, hw := s[0], s[1], s[2]
		if leaderHW != 3 && leaderHW != 5 {
			t.Fatalf("SetLeaderHighWatermark got %d, the leader never had that HW", leaderHW)
		}
		if hw != min(leaderHW, leo) {
			t.Fatalf("HW %d after leader HW %d and LEO %d", hw, leaderHW, leo)
		}
		sawBelow = sawBelow || leo < leaderHW
	}
	if !sawBelow {
		t.Fatalf("never saw a response with the leader HW above the follower LEO: %v", follower.hwSets)
	}
}

// The leader cuts the last batch at the byte limit; the follower keeps the
// whole batches and fetches the rest next round.
func TestWholeBatchesDropsCutTail(t *testing.T) {
	a, b := batchAt(t, 0, 0, "one"), batchAt(t, 1, 0, "two")
	buf := append(append([]byte{}, a.Raw...), b.Raw[:len(b.Raw)-3]...)
	got, err := wholeBatches(buf)
	if err != nil || len(got) != 1 || got[0].Header.BaseOffset != 0 {
		t.Fatalf("got %d batches, err %v; want the first batch only", len(got), err)
	}
	bad := append([]byte{}, a.Raw...)
	bad[len(bad)-1] ^= 0xff
	if _, err := wholeBatches(bad); err == nil {
		t.Fatal("a batch with a bad CRC was accepted")
	}
}

// NOT_LEADER_OR_FOLLOWER backs the partition off for replica.fetch.backoff
// and retries it, while the fetcher's other partitions go on
// (AbstractFetcherThread's per-partition error handling).
func TestNotLeaderBacksOffThenRetries(t *testing.T) {
	clock := newFakeClock()
	logA, logB := memLogOf(t, recs(0, "a1", "a2")...), memLogOf(t, recs(0, "b1")...)
	leader := newFakeLeader()
	lpA := leader.addPartition("a", 0, logA, 0)
	leader.addPartition("b", 0, logB, 0)
	leader.set(func() { lpA.err = kerr.NotLeaderForPartition })
	cfg := testConfig()
	cfg.Clock = clock
	cfg.ReplicaFetchBackoff = time.Second
	h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})

	fa := newFakePartition("a", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	fb := newFakePartition("b", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, fa, fb)
	waitFor(t, 5*time.Second, "b catch-up", caughtUp(logB, fb.log))
	waitFor(t, 5*time.Second, "a's first fetch", func() bool { return len(leader.fetchesOf(fa.tp())) >= 1 })

	// The clock does not move: a stays backed off while b keeps fetching.
	before := len(leader.fetchesOf(fb.tp()))
	waitFor(t, 5*time.Second, "b fetching on", func() bool { return len(leader.fetchesOf(fb.tp())) > before+5 })
	if n := len(leader.fetchesOf(fa.tp())); n != 1 {
		t.Fatalf("a fetched %d times during its back-off, want 1", n)
	}

	leader.set(func() { lpA.err = nil })
	clock.Advance(time.Second)
	waitFor(t, 5*time.Second, "a catch-up after back-off", caughtUp(logA, fa.log))
	requireSameLog(t, logA, fa.log)
}

// FENCED_LEADER_EPOCH in our current epoch: the leader is ahead of us, the
// controller will tell us more. The partition is parked — back-offs do not
// release it — until it is re-added in a newer epoch.
func TestFencedPartitionParkedUntilReAdded(t *testing.T) {
	clock := newFakeClock()
	leaderLog := memLogOf(t, recs(0, "a")...)
	appendRecs(t, leaderLog, recs(1, "b", "c")...)
	leader := newFakeLeader()
	leader.addPartition("t", 0, leaderLog, 1)
	cfg := testConfig()
	cfg.Clock = clock
	h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})

	// We still believe in epoch 0.
	follower := newFakePartition("t", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "fenced fetch", func() bool { return len(leader.fetchesOf(follower.tp())) == 1 })
	for range 5 {
		clock.Advance(cfg.ReplicaFetchBackoff)
		time.Sleep(5 * time.Millisecond)
	}
	if n := len(leader.fetchesOf(follower.tp())); n != 1 {
		t.Fatalf("a fenced partition fetched %d times, want 1", n)
	}
	if follower.LogEndOffset() != 0 {
		t.Fatalf("a fenced partition appended up to %d", follower.LogEndOffset())
	}

	// LeaderAndIsr with epoch 1 arrives.
	follower.epoch.Store(1)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "catch-up in epoch 1", caughtUp(leaderLog, follower.log))
	requireSameLog(t, leaderLog, follower.log)
}

// A leader that cannot be reached: the fetcher backs off, dials again,
// and catches up once the leader is back.
func TestUnreachableLeaderBackoffAndRecovery(t *testing.T) {
	clock := newFakeClock()
	leaderLog := memLogOf(t, recs(0, "a", "b")...)
	leader := newFakeLeader()
	leader.addPartition("t", 0, leaderLog, 0)
	leader.unreachable = true
	cfg := testConfig()
	cfg.Clock = clock
	cfg.ReplicaFetchBackoff = time.Second
	h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})

	follower := newFakePartition("t", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	dials := func() int {
		leader.mu.Lock()
		defer leader.mu.Unlock()
		return leader.dials
	}
	waitFor(t, 5*time.Second, "first dial", func() bool { return dials() == 1 })
	time.Sleep(20 * time.Millisecond)
	if dials() != 1 {
		t.Fatalf("dialled %d times without the back-off elapsing", dials())
	}
	clock.Advance(time.Second)
	waitFor(t, 5*time.Second, "second dial", func() bool { return dials() == 2 })

	leader.set(func() { leader.unreachable = false })
	clock.Advance(time.Second)
	waitFor(t, 5*time.Second, "catch-up after recovery", caughtUp(leaderLog, follower.log))

	// A connection lost mid-way is dropped and dialled again.
	leader.set(func() { leader.unreachable = true })
	time.Sleep(20 * time.Millisecond)
	leader.set(func() { leader.unreachable = false })
	appendRecs(t, leaderLog, recs(0, "c")...)
	clock.Advance(time.Second)
	waitFor(t, 5*time.Second, "catch-up after a reset", caughtUp(leaderLog, follower.log))
	requireSameLog(t, leaderLog, follower.log)
}

// A Fetch sent below v15, because the topic has no id or the leader is
// older, carries no ReplicaState tag: Kafka refuses a v12 Fetch with one.
// From v15 the tag names the follower and its broker epoch.
func TestFetchReplicaStateOnlyFromV15(t *testing.T) {
	build := func() *kmsg.FetchRequest {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 16
		req.ReplicaID = 2
		req.ReplicaState.ID, req.ReplicaState.Epoch = 2, 77
		return req
	}
	for _, tc := range []struct {
		version int16
		tagged  bool
	}{{12, false}, {14, false}, {15, true}, {16, true}} {
		req := build()
		wirefix.Capped{Request: req, Max: 16}.SetVersion(tc.version)
		enc := req.AppendTo(nil)
		untagged := build()
		untagged.Version = tc.version
		untagged.ReplicaState = kmsg.NewFetchRequestReplicaState()
		if got := !bytes.Equal(enc, untagged.AppendTo(nil)); got != tc.tagged {
			t.Errorf("v%d: tagged fields written %v, want %v", tc.version, got, tc.tagged)
		}
		back := kmsg.NewPtrFetchRequest()
		back.Version = tc.version
		if err := back.ReadFrom(enc); err != nil {
			t.Fatalf("v%d: %v", tc.version, err)
		}
		id := back.ReplicaID
		if tc.version >= 15 {
			id = back.ReplicaState.ID
		}
		if id != 2 {
			t.Errorf("v%d: replica id %d read back, want 2", tc.version, id)
		}
	}
}
