package fetcher

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
	"github.com/kbroker/kbroker/replica"
)

// rec is one single-record batch of a test log: its leader epoch and value.
type rec struct {
	epoch int32
	value string
}

// batchAt encodes one record as a batch at base with the given epoch and a
// fixed timestamp, so equal inputs give byte-identical batches.
func batchAt(t *testing.T, base int64, epoch int32, value string) logstore.Batch {
	t.Helper()
	b, err := logstore.EncodeBatch(logstore.BatchOptions{
		BaseOffset: base, PartitionLeaderEpoch: epoch, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
	}, []logstore.Record{{Value: []byte(value), Timestamp: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// memLogOf builds a log holding recs at offsets 0, 1, 2 ...; the log's
// epoch cache follows the batches' epochs.
func memLogOf(t *testing.T, recs ...rec) *logstore.FileLog {
	t.Helper()
	l := logtest.New(t, logstore.DefaultConfig())
	appendRecs(t, l, recs...)
	return l
}

func appendRecs(t *testing.T, l *logstore.FileLog, recs ...rec) {
	t.Helper()
	for _, r := range recs {
		if _, err := l.AppendAsFollower([]logstore.Batch{batchAt(t, l.LogEndOffset(), r.epoch, r.value)}); err != nil {
			t.Fatal(err)
		}
	}
}

func logBytes(t *testing.T, l logstore.Log) []byte {
	t.Helper()
	rr, err := l.Read(l.LogStartOffset(), l.LogEndOffset(), 1<<30, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rr.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakePartition is a follower replica over a log, with the follower HW
// kept by replica.FollowerState as the broker's Partition does.
type fakePartition struct {
	topic string
	index int32
	id    [16]byte
	log   *logstore.FileLog
	epoch atomic.Int32

	mu sync.Mutex
	fs *replica.FollowerState
	// hwSets records each SetLeaderHighWatermark: leader HW, LEO, new HW.
	hwSets [][3]int64
	// truncations records every TruncateTo that cut records.
	truncations []int64
}

func newFakePartition(topic string, index int32, log *logstore.FileLog, leaderEpoch int32, hw int64) *fakePartition {
	p := &fakePartition{topic: topic, index: index, log: log, fs: replica.NewFollowerState(-1, leaderEpoch, hw)}
	copy(p.id[:], topic)
	p.epoch.Store(leaderEpoch)
	return p
}

func (p *fakePartition) Topic() string             { return p.topic }
func (p *fakePartition) Index() int32              { return p.index }
func (p *fakePartition) TopicID() [16]byte         { return p.id }
func (p *fakePartition) CurrentLeaderEpoch() int32 { return p.epoch.Load() }
func (p *fakePartition) LogStartOffset() int64     { return p.log.LogStartOffset() }
func (p *fakePartition) LogEndOffset() int64       { return p.log.LogEndOffset() }
func (p *fakePartition) tp() replica.TopicPartition {
	return replica.TopicPartition{Topic: p.topic, Partition: p.index}
}
func (p *fakePartition) LeaderEpochEntries() []logstore.EpochEntry { return p.log.LeaderEpochEntries() }

func (p *fakePartition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fs.HighWatermark()
}

func (p *fakePartition) AppendAsFollower(b []logstore.Batch) (logstore.AppendInfo, error) {
	return p.log.AppendAsFollower(b)
}

func (p *fakePartition) TruncateTo(offset int64) error {
	if offset < p.log.LogEndOffset() {
		p.mu.Lock()
		p.truncations = append(p.truncations, offset)
		p.mu.Unlock()
	}
	if err := p.log.TruncateTo(offset); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fs.Truncated(p.log.LogEndOffset())
	return nil
}

func (p *fakePartition) TruncateFullyAndStartAt(offset int64) error {
	if err := p.log.TruncateFullyAndStartAt(offset); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fs = replica.NewFollowerState(-1, p.epoch.Load(), offset)
	return nil
}

func (p *fakePartition) SetLeaderHighWatermark(hw, leaderLogStart int64) {
	if leaderLogStart > p.log.LogStartOffset() && leaderLogStart <= p.log.LogEndOffset() {
		_ = p.log.DeleteRecordsBefore(leaderLogStart)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	leo := p.log.LogEndOffset()
	got := p.fs.ApplyFetchResponse(hw, p.log.LogStartOffset(), leo)
	p.hwSets = append(p.hwSets, [3]int64{hw, leo, got})
}

// fakeClock is a Clock moved by Advance.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{c.now.Add(d), ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// harness is a manager for broker 2 with fake leaders and a fast
// configuration: a short MaxWait keeps long polls from slowing tests.
type harness struct {
	t      *testing.T
	dialer *fakeDialer
	m      *Manager
}

func testConfig() Config {
	return Config{
		BrokerID:            2,
		ReplicaFetchWaitMax: 5 * time.Millisecond,
		ReplicaFetchBackoff: 20 * time.Millisecond,
	}
}

func newHarness(t *testing.T, cfg Config, leaders map[string]*fakeLeader) *harness {
	t.Helper()
	d := &fakeDialer{leaders: leaders}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	h := &harness{t: t, dialer: d, m: NewManager(cfg, d, logger)}
	t.Cleanup(h.m.Close)
	return h
}

// followFromEmpty has an empty follower of topic-0 fetch from l1, which
// leads it at leaderEpoch with leaderLog, and waits until it caught up.
func followFromEmpty(t *testing.T, topic string, leaderLog *logstore.FileLog, leaderEpoch int32) (*harness, *fakeLeader, *fakePartition) {
	t.Helper()
	leader := newFakeLeader()
	leader.addPartition(topic, 0, leaderLog, leaderEpoch)
	h := newHarness(t, testConfig(), map[string]*fakeLeader{"l1": leader})
	follower := newFakePartition(topic, 0, logtest.New(t, logstore.DefaultConfig()), leaderEpoch, 0)
	h.m.AddPartitions(BrokerEndpoint{ID: 1, Addr: "l1"}, follower)
	waitFor(t, 5*time.Second, "catch-up", caughtUp(leaderLog, follower.log))
	return h, leader, follower
}

// waitFor polls cond for at most d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func requireSameLog(t *testing.T, leader, follower *logstore.FileLog) {
	t.Helper()
	if lb, fb := logBytes(t, leader), logBytes(t, follower); !bytes.Equal(lb, fb) {
		t.Fatalf("logs differ: leader %d bytes LEO %d, follower %d bytes LEO %d", len(lb), leader.LogEndOffset(), len(fb), follower.LogEndOffset())
	}
	le, fe := leader.LeaderEpochEntries(), follower.LeaderEpochEntries()
	if fmt.Sprint(le) != fmt.Sprint(fe) {
		t.Fatalf("epoch caches differ: leader %v, follower %v", le, fe)
	}
}

func caughtUp(leader, follower *logstore.FileLog) func() bool {
	return func() bool { return follower.LogEndOffset() == leader.LogEndOffset() }
}
