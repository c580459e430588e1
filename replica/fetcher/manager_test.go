package fetcher

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
)

// Kafka's getFetcherId uses Java's String.hashCode.
func TestFetcherIDMatchesKafka(t *testing.T) {
	// "topic".hashCode() == 110546223 in Java; 31 times it overflows
	// int to a negative number, which Utils.abs makes positive.
	for p := int32(0); p < 10; p++ {
		v := int32(31*int64(110546223) + int64(p))
		if v >= 0 {
			t.Fatal("test meant to cover the negative case")
		}
		want := int(-v) % 7
		if got := FetcherID("topic", p, 7); got != want {
			t.Fatalf("FetcherID(topic, %d, 7) = %d, want %d", p, got, want)
		}
	}
	// Overflowing hashes stay in range, as Utils.abs guarantees.
	long := strings.Repeat("zzzz", 40)
	for p := int32(0); p < 50; p++ {
		if id := FetcherID(long, p, 3); id < 0 || id >= 3 {
			t.Fatalf("FetcherID out of range: %d", id)
		}
	}
	if FetcherID("anything", 5, 1) != 0 {
		t.Fatal("one fetcher per broker must take every partition")
	}
}

// Partitions spread over num.replica.fetchers fetchers, each with its own
// connection that fetches only its own partitions.
func TestPartitionsSpreadOverFetchers(t *testing.T) {
	leader := newFakeLeader()
	var followers []*fakePartition
	var leaderLogs []*logstore.FileLog
	for i := range int32(12) {
		l := memLogOf(t, recs(0, "x", "y")...)
		leader.addPartition("spread", i, l, 0)
		leaderLogs = append(leaderLogs, l)
		followers = append(followers, newFakePartition("spread", i, logtest.New(t, logstore.DefaultConfig()), 0, 0))
	}
	cfg := testConfig()
	cfg.NumReplicaFetchers = 3
	h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})
	parts := make([]Partition, len(followers))
	for i, f := range followers {
		parts[i] = f
	}
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, parts...)
	for i, f := range followers {
		waitFor(t, 5*time.Second, "catch-up", caughtUp(leaderLogs[i], f.log))
	}

	wantIDs := map[int]bool{}
	for _, f := range followers {
		id := FetcherID("spread", f.index, 3)
		wantIDs[id] = true
		leaderID, got, ok := h.m.Fetching(f.tp())
		if !ok || leaderID != 1 || got != id {
			t.Fatalf("partition %d: fetching=%v from %d in fetcher %d, want fetcher %d", f.index, ok, leaderID, got, id)
		}
	}
	if h.m.NumFetchers() != len(wantIDs) || len(wantIDs) < 2 {
		t.Fatalf("%d fetchers for %d fetcher ids", h.m.NumFetchers(), len(wantIDs))
	}
	// Each connection carried the partitions of one fetcher id only.
	connFetcher := map[int]int{}
	for _, f := range followers {
		for _, seen := range leader.fetchesOf(f.tp()) {
			id := FetcherID("spread", f.index, 3)
			if prev, ok := connFetcher[seen.conn]; ok && prev != id {
				t.Fatalf("connection %d fetched for fetchers %d and %d", seen.conn, prev, id)
			}
			connFetcher[seen.conn] = id
		}
	}
	if len(connFetcher) != len(wantIDs) {
		t.Fatalf("%d connections for %d fetchers", len(connFetcher), len(wantIDs))
	}
}

// RemovePartitions stops fetching at once; a fetcher left empty ends.
func TestRemovePartitionsStopsFetching(t *testing.T) {
	leaderLog := memLogOf(t, recs(0, "a")...)
	h, leader, follower := followFromEmpty(t, "t", leaderLog, 0)

	h.m.RemovePartitions(follower.tp())
	if _, _, ok := h.m.Fetching(follower.tp()); ok || h.m.NumFetchers() != 0 {
		t.Fatalf("still fetching after RemovePartitions (%d fetchers)", h.m.NumFetchers())
	}
	n := len(leader.fetchesOf(follower.tp()))
	appendRecs(t, leaderLog, recs(0, "b", "c")...)
	time.Sleep(50 * time.Millisecond)
	if got := len(leader.fetchesOf(follower.tp())); got != n {
		t.Fatalf("%d fetches after RemovePartitions", got-n)
	}
	if follower.LogEndOffset() != 1 {
		t.Fatalf("follower appended after removal: LEO %d", follower.LogEndOffset())
	}
	if open := h.dialer.open.Load(); open != 0 {
		t.Fatalf("%d connections left open", open)
	}
}

// Close ends every fetcher goroutine, also while requests are in flight at
// a leader that does not answer, and closes every connection.
func TestCloseStopsEveryGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	hung, live := newFakeLeader(), newFakeLeader()
	hung.block = true
	hungLog, liveLog := memLogOf(t, recs(0, "a")...), memLogOf(t, recs(0, "b")...)
	hung.addPartition("h", 0, hungLog, 0)
	live.addPartition("l", 0, liveLog, 0)
	cfg := testConfig()
	cfg.NumReplicaFetchers = 2
	h := newHarness(t, cfg, map[string]*fakeLeader{"hung": hung, "live": live})
	fh := newFakePartition("h", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	fl := newFakePartition("l", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "hung"}, fh)
	h.m.AddPartitions(BrokerEndpoint{ID: 3, Addr: "live"}, fl)
	waitFor(t, 5*time.Second, "live catch-up", caughtUp(liveLog, fl.log))
	waitFor(t, 5*time.Second, "hung dial", func() bool { return h.dialer.open.Load() == 2 })

	done := make(chan struct{})
	go func() { h.m.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if open := h.dialer.open.Load(); open != 0 {
		t.Fatalf("%d connections left open", open)
	}
	waitFor(t, 5*time.Second, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
	// A closed manager ignores new partitions.
	h.m.AddPartitions(BrokerEndpoint{ID: 3, Addr: "live"}, fl)
	if h.m.NumFetchers() != 0 {
		t.Fatal("a closed manager started a fetcher")
	}
}

// OFFSET_OUT_OF_RANGE with a leader whose log ends below ours (an unclean
// election): truncate to the leader's LEO (Kafka's
// testFollowerFetchOutOfRangeHigh).
func TestOutOfRangeHighTruncatesToLeaderEnd(t *testing.T) {
	leaderLog := memLogOf(t, recs(0, "a", "b")...)
	leader := newFakeLeader()
	leader.addPartition("t", 0, leaderLog, 4)
	cfg := testConfig()
	cfg.TruncateOnFetch = true
	h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})
	// We hold epoch 3 the leader never saw: it cannot place our last
	// fetched epoch and answers out of range.
	follower := newFakePartition("t", 0, memLogOf(t, append(recs(0, "a", "b"), recs(3, "x", "y")...)...), 4, 4)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "truncation", func() bool { return follower.LogEndOffset() == 2 })
	appendRecs(t, leaderLog, recs(4, "c")...)
	waitFor(t, 5*time.Second, "catch-up", func() bool {
		return logstoreEqual(t, leaderLog, follower.log)
	})
	follower.mu.Lock()
	defer follower.mu.Unlock()
	if len(follower.truncations) != 1 || follower.truncations[0] != 2 {
		t.Fatalf("truncations %v, want one cut at the leader's LEO 2", follower.truncations)
	}
}

// OFFSET_OUT_OF_RANGE with a leader whose log starts above our LEO: the log
// restarts at the leader's log start (testFollowerFetchOutOfRangeLow).
func TestOutOfRangeLowRestartsAtLeaderStart(t *testing.T) {
	leaderLog := logtest.New(t, logstore.DefaultConfig())
	if err := leaderLog.TruncateFullyAndStartAt(10); err != nil {
		t.Fatal(err)
	}
	appendRecs(t, leaderLog, recs(0, "k", "l")...)
	_, _, follower := followFromEmpty(t, "t", leaderLog, 0)
	if follower.LogStartOffset() != 10 {
		t.Fatalf("log start %d, want 10", follower.LogStartOffset())
	}
	requireSameLog(t, leaderLog, follower.log)
}

func logstoreEqual(t *testing.T, a, b *logstore.FileLog) bool {
	return a.LogEndOffset() == b.LogEndOffset() && string(logBytes(t, a)) == string(logBytes(t, b))
}

// MaxLag is leader HW - fetch offset, exported as Kafka's gauge.
func TestMaxLagGauge(t *testing.T) {
	leaderLog := memLogOf(t, recs(0, "a", "b", "c", "d", "e")...)
	leader := newFakeLeader()
	lp := leader.addPartition("t", 0, leaderLog, 0)
	// One answer only, of one batch: the follower stays at LEO 1 with the
	// leader's HW at 5.
	lp.budget = 1
	reg := prometheus.NewRegistry()
	cfg := testConfig()
	cfg.Registerer = reg
	cfg.ReplicaFetchMaxBytes = 1
	h := newHarness(t, cfg, map[string]*fakeLeader{"l1": leader})
	follower := newFakePartition("t", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "lag 4", func() bool { return h.m.MaxLag() == 4 })
	if follower.LogEndOffset() != 1 {
		t.Fatalf("LEO %d, want 1", follower.LogEndOffset())
	}
	if got := gaugeValue(t, reg); got != 4 {
		t.Fatalf("gauge %v, want 4", got)
	}

	leader.set(func() { lp.budget = -1 })
	waitFor(t, 10*time.Second, "caught up", caughtUp(leaderLog, follower.log))
	waitFor(t, 5*time.Second, "lag 0", func() bool { return h.m.MaxLag() == 0 })
	if got := gaugeValue(t, reg); got != 0 {
		t.Fatalf("gauge %v, want 0", got)
	}

	h.m.Close()
	if mfs, _ := reg.Gather(); len(mfs) != 0 {
		t.Fatalf("gauge still registered after Close: %v", mfs)
	}
}

// gaugeValue is MaxLag, checked to agree with the partition's ConsumerLag
// (the only partition followed, by fetcher 0 of leader 1).
func gaugeValue(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 2 || mfs[0].GetName() != "kafka_server_fetcherlagmetrics_consumerlag" ||
		mfs[1].GetName() != "kafka_server_replicafetchermanager_maxlag" {
		t.Fatalf("metrics %v, err %v", mfs, err)
	}
	m := mfs[1].GetMetric()[0]
	if l := m.GetLabel(); len(l) != 1 || l[0].GetName() != "clientId" || l[0].GetValue() != "Replica" {
		t.Fatalf("labels %v", l)
	}
	pl := mfs[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range pl.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["clientId"] != "ReplicaFetcherThread-0-1" || labels["topic"] != "t" || labels["partition"] != "0" {
		t.Fatalf("consumer lag labels %v", labels)
	}
	if pl.GetGauge().GetValue() != m.GetGauge().GetValue() {
		t.Fatalf("consumer lag %v, max lag %v", pl.GetGauge().GetValue(), m.GetGauge().GetValue())
	}
	return m.GetGauge().GetValue()
}

// A new leader address for the same broker id moves its partitions to a
// fresh fetcher dialling the new address (Kafka recreates the thread).
func TestLeaderAddressChangeRedials(t *testing.T) {
	leaderLog := memLogOf(t, recs(0, "a")...)
	old, moved := newFakeLeader(), newFakeLeader()
	old.addPartition("t", 0, leaderLog, 0)
	moved.addPartition("t", 0, leaderLog, 0)
	h := newHarness(t, testConfig(), map[string]*fakeLeader{"old": old, "new": moved})
	follower := newFakePartition("t", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "old"}, follower)
	waitFor(t, 5*time.Second, "catch-up", caughtUp(leaderLog, follower.log))
	old.set(func() { old.unreachable = true })
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "new"}, follower)
	appendRecs(t, leaderLog, recs(0, "b")...)
	waitFor(t, 5*time.Second, "catch-up at the new address", caughtUp(leaderLog, follower.log))
	if len(moved.fetchesOf(follower.tp())) == 0 {
		t.Fatal("never fetched from the new address")
	}
}

// An answer for a leader epoch that moved meanwhile is dropped and the
// partition restarts in its new epoch.
func TestEpochChangeRestartsPartition(t *testing.T) {
	leaderLog := memLogOf(t, recs(0, "a", "b")...)
	leader := newFakeLeader()
	lp := leader.addPartition("t", 0, leaderLog, 0)
	h := newHarness(t, testConfig(), map[string]*fakeLeader{"l1": leader})
	follower := newFakePartition("t", 0, memLogOf(t, recs(0, "a")...), 0, 1)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "catch-up", caughtUp(leaderLog, follower.log))
	// Same leader, epoch 1 (e.g. an ISR change by the controller): the
	// fetcher notices without being re-added and asks about its epoch.
	leader.set(func() { lp.leaderEpoch = 1 })
	follower.epoch.Store(1)
	appendRecs(t, leaderLog, recs(1, "c")...)
	waitFor(t, 5*time.Second, "catch-up in epoch 1", caughtUp(leaderLog, follower.log))
	requireSameLog(t, leaderLog, follower.log)
	fs := leader.fetchesOf(follower.tp())
	if last := fs[len(fs)-1]; last.currentEpoch != 1 {
		t.Fatalf("last fetch in epoch %d, want 1", last.currentEpoch)
	}
	if len(leader.epochQuestions()) < 2 {
		t.Fatalf("the restart did not truncate first: questions %v", leader.epochQuestions())
	}
}

// Without topic ids Fetch is capped at v12 and names the topic.
func TestFetchWithoutTopicIDUsesV12(t *testing.T) {
	leaderLog := memLogOf(t, recs(0, "a")...)
	leader := newFakeLeader()
	lp := leader.addPartition("t", 0, leaderLog, 0)
	lp.id = [16]byte{}
	h := newHarness(t, testConfig(), map[string]*fakeLeader{"l1": leader})
	follower := newFakePartition("t", 0, logtest.New(t, logstore.DefaultConfig()), 0, 0)
	follower.id = [16]byte{}
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "catch-up", caughtUp(leaderLog, follower.log))
	for _, f := range leader.fetchesOf(follower.tp()) {
		if f.version != 12 {
			t.Fatalf("fetch v%d without topic ids", f.version)
		}
	}
}

// The real dialer reports an unreachable leader as a request error.
func TestKgoDialerUnreachableLeader(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conn, err := KgoDialer{}.Dial(context.Background(), BrokerEndpoint{ID: 1, Addr: addr}, "broker-2-fetcher-0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	if _, err := conn.Request(ctx, req); err == nil {
		t.Fatal("request to a closed port succeeded")
	}
}

// A dynamic num.replica.fetchers change reassigns every partition by the
// new count, and replication goes on from where it was.
func TestResizeReassignsPartitions(t *testing.T) {
	leader := newFakeLeader()
	var followers []*fakePartition
	var leaderLogs []*logstore.FileLog
	for i := range int32(8) {
		l := memLogOf(t, recs(0, "x")...)
		leader.addPartition("resize", i, l, 0)
		leaderLogs = append(leaderLogs, l)
		followers = append(followers, newFakePartition("resize", i, logtest.New(t, logstore.DefaultConfig()), 0, 0))
	}
	h := newHarness(t, testConfig(), map[string]*fakeLeader{"l1": leader})
	parts := make([]Partition, len(followers))
	for i, f := range followers {
		parts[i] = f
	}
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, parts...)
	for i, f := range followers {
		waitFor(t, 5*time.Second, "catch-up", caughtUp(leaderLogs[i], f.log))
	}
	if h.m.NumFetchers() != 1 {
		t.Fatalf("%d fetchers before the resize", h.m.NumFetchers())
	}
	h.m.Resize(4)
	ids := map[int]bool{}
	for _, f := range followers {
		want := FetcherID("resize", f.index, 4)
		ids[want] = true
		if _, got, ok := h.m.Fetching(f.tp()); !ok || got != want {
			t.Fatalf("partition %d in fetcher %d (%v) after the resize, want %d", f.index, got, ok, want)
		}
	}
	if h.m.NumFetchers() != len(ids) || len(ids) < 2 {
		t.Fatalf("%d fetchers for %d ids after the resize", h.m.NumFetchers(), len(ids))
	}
	for i, l := range leaderLogs {
		appendRecs(t, l, recs(0, "y", "z")...)
		waitFor(t, 5*time.Second, "catch-up after the resize", caughtUp(l, followers[i].log))
	}
	h.m.Resize(1)
	if h.m.NumFetchers() != 1 {
		t.Fatalf("%d fetchers after resizing back to 1", h.m.NumFetchers())
	}
}
