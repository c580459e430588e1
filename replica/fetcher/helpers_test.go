package fetcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
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
func memLogOf(t *testing.T, recs ...rec) *logstore.MemLog {
	t.Helper()
	l := logstore.NewMemLog(logstore.DefaultConfig())
	appendRecs(t, l, recs...)
	return l
}

func appendRecs(t *testing.T, l *logstore.MemLog, recs ...rec) {
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

// fakePartition is a follower replica over a MemLog, with the follower HW
// kept by replica.FollowerState as the broker's Partition does.
type fakePartition struct {
	topic string
	index int32
	id    [16]byte
	log   *logstore.MemLog
	epoch atomic.Int32

	mu sync.Mutex
	fs *replica.FollowerState
	// hwSets records each SetLeaderHighWatermark: leader HW, LEO, new HW.
	hwSets [][3]int64
	// truncations records every TruncateTo that cut records.
	truncations []int64
}

func newFakePartition(topic string, index int32, log *logstore.MemLog, leaderEpoch int32, hw int64) *fakePartition {
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

// leaderPartition is one partition of the fake leader.
type leaderPartition struct {
	log         *logstore.MemLog
	id          [16]byte
	leaderEpoch int32
	// hw is the leader's HW; -1 means its LEO.
	hw int64
	// err, when set, answers every fetch of the partition.
	err *kerr.Error
	// budget, when >= 0, is how many fetches are still answered; after
	// that every fetch gets NOT_LEADER_OR_FOLLOWER.
	budget int
}

// fetchSeen is one partition of a Fetch the fake leader received.
type fetchSeen struct {
	conn             int
	version          int16
	replicaID        int32
	tp               replica.TopicPartition
	fetchOffset      int64
	lastFetchedEpoch int32
	currentEpoch     int32
}

// fakeLeader answers Fetch, OffsetForLeaderEpoch and ListOffsets from
// MemLogs, following the leader's rules of reference §3.10, §3.11 and §4.5
// (the epoch check is replica.CheckLastFetchedEpoch itself).
type fakeLeader struct {
	mu          sync.Mutex
	parts       map[replica.TopicPartition]*leaderPartition
	unreachable bool
	// block makes requests wait for their context: a hung leader.
	block   bool
	dials   int
	fetches []fetchSeen
	epochQs []kmsg.OffsetForLeaderEpochRequestTopicPartition
	conns   int
}

func newFakeLeader() *fakeLeader {
	return &fakeLeader{parts: map[replica.TopicPartition]*leaderPartition{}}
}

func (l *fakeLeader) addPartition(topic string, index int32, log *logstore.MemLog, leaderEpoch int32) *leaderPartition {
	lp := &leaderPartition{log: log, leaderEpoch: leaderEpoch, hw: -1, budget: -1}
	copy(lp.id[:], topic)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parts[replica.TopicPartition{Topic: topic, Partition: index}] = lp
	return lp
}

func (l *fakeLeader) set(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

func (l *fakeLeader) fetchesOf(tp replica.TopicPartition) []fetchSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []fetchSeen
	for _, f := range l.fetches {
		if f.tp == tp {
			out = append(out, f)
		}
	}
	return out
}

func (l *fakeLeader) epochQuestions() []kmsg.OffsetForLeaderEpochRequestTopicPartition {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]kmsg.OffsetForLeaderEpochRequestTopicPartition(nil), l.epochQs...)
}

// fakeDialer connects to fake leaders by address.
type fakeDialer struct {
	mu      sync.Mutex
	leaders map[string]*fakeLeader
	open    atomic.Int32
}

func (d *fakeDialer) Dial(_ context.Context, leader BrokerEndpoint, clientID string) (Conn, error) {
	d.mu.Lock()
	l := d.leaders[leader.Addr]
	d.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("no leader at %s", leader.Addr)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dials++
	if l.unreachable {
		return nil, errors.New("connection refused")
	}
	l.conns++
	d.open.Add(1)
	return &fakeConn{l: l, id: l.conns, d: d}, nil
}

type fakeConn struct {
	l      *fakeLeader
	id     int
	d      *fakeDialer
	closed atomic.Bool
}

func (c *fakeConn) Close() {
	if !c.closed.Swap(true) {
		c.d.open.Add(-1)
	}
}

func (c *fakeConn) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	c.l.mu.Lock()
	down, block := c.l.unreachable, c.l.block
	c.l.mu.Unlock()
	if down {
		return nil, errors.New("connection reset")
	}
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	// Through the wire format both ways, so that fields a version does
	// not carry (topic names from v13, ReplicaID from v15) are lost here
	// as they would be on a socket.
	wire, err := viaWire(req)
	if err != nil {
		return nil, err
	}
	resp, err := c.l.serve(ctx, c.id, wire)
	if err != nil {
		return nil, err
	}
	back := req.ResponseKind()
	if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
		return nil, fmt.Errorf("decoding response: %w", err)
	}
	return back, nil
}

func viaWire(req kmsg.Request) (kmsg.Request, error) {
	out := kmsg.RequestForKey(req.Key())
	out.SetVersion(req.GetVersion())
	if err := out.ReadFrom(req.AppendTo(nil)); err != nil {
		return nil, fmt.Errorf("decoding request: %w", err)
	}
	return out, nil
}

// serve answers one decoded request.
func (l *fakeLeader) serve(ctx context.Context, conn int, req kmsg.Request) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		return l.fetch(ctx, conn, r), nil
	case *kmsg.OffsetForLeaderEpochRequest:
		return l.offsetForLeaderEpoch(r), nil
	case *kmsg.ListOffsetsRequest:
		return l.listOffsets(r), nil
	}
	return nil, fmt.Errorf("unexpected request key %d", req.Key())
}

func (l *fakeLeader) partitionFor(topic string, id [16]byte, version int16, index int32) (replica.TopicPartition, *leaderPartition) {
	for tp, lp := range l.parts {
		if tp.Partition == index && ((version >= 13 && lp.id == id) || (version < 13 && tp.Topic == topic)) {
			return tp, lp
		}
	}
	return replica.TopicPartition{Topic: topic, Partition: index}, nil
}

func epochError(lp *leaderPartition, current int32) error {
	switch {
	case current < 0:
		return nil
	case current < lp.leaderEpoch:
		return kerr.FencedLeaderEpoch
	case current > lp.leaderEpoch:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

func (l *fakeLeader) fetch(ctx context.Context, conn int, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	l.mu.Lock()
	ready := false
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			tp, lp := l.partitionFor(t.Topic, t.TopicID, req.Version, p.Partition)
			replicaID := req.ReplicaID
			if req.Version >= 15 {
				replicaID = req.ReplicaState.ID
			}
			l.fetches = append(l.fetches, fetchSeen{conn, req.Version, replicaID, tp, p.FetchOffset, p.LastFetchedEpoch, p.CurrentLeaderEpoch})
			rp := l.fetchPartition(lp, p)
			ready = ready || len(rp.RecordBatches) > 0 || rp.ErrorCode != 0 || rp.DivergingEpoch.EndOffset >= 0
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	l.mu.Unlock()
	if !ready {
		// Long poll: nothing to return, so wait MaxWait as a leader does.
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(req.MaxWaitMillis) * time.Millisecond):
		}
	}
	return resp
}

func (l *fakeLeader) fetchPartition(lp *leaderPartition, p kmsg.FetchRequestTopicPartition) kmsg.FetchResponseTopicPartition {
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.Partition = p.Partition
	if lp == nil {
		rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return rp
	}
	if lp.budget == 0 {
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
		return rp
	}
	if lp.budget > 0 {
		lp.budget--
	}
	if lp.err != nil {
		rp.ErrorCode = lp.err.Code
		return rp
	}
	if err := epochError(lp, p.CurrentLeaderEpoch); err != nil {
		rp.ErrorCode = err.(*kerr.Error).Code
		return rp
	}
	leo, start := lp.log.LogEndOffset(), lp.log.LogStartOffset()
	rp.HighWatermark = leo
	if lp.hw >= 0 {
		rp.HighWatermark = lp.hw
	}
	rp.LastStableOffset, rp.LogStartOffset = rp.HighWatermark, start
	check, end := replica.CheckLastFetchedEpoch(replica.NewEpochCache(lp.log.LeaderEpochEntries()), start, leo, p.LastFetchedEpoch, p.FetchOffset)
	switch {
	case check == replica.FetchEpochOffsetOutOfRange || p.FetchOffset < start || p.FetchOffset > leo:
		rp.ErrorCode = kerr.OffsetOutOfRange.Code
		return rp
	case check == replica.FetchEpochDiverging:
		rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = end.LeaderEpoch, end.EndOffset
		return rp
	}
	rr, err := lp.log.Read(p.FetchOffset, leo, int(p.PartitionMaxBytes), true)
	if err != nil {
		rp.ErrorCode = kerr.UnknownServerError.Code
		return rp
	}
	rp.RecordBatches, _ = rr.Bytes()
	return rp
}

func (l *fakeLeader) offsetForLeaderEpoch(req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			l.epochQs = append(l.epochQs, p)
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition = p.Partition
			lp := l.parts[replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			switch {
			case lp == nil:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case epochError(lp, p.CurrentLeaderEpoch) != nil:
				rp.ErrorCode = epochError(lp, p.CurrentLeaderEpoch).(*kerr.Error).Code
			default:
				rp.LeaderEpoch, rp.EndOffset = lp.log.EndOffsetForEpoch(p.LeaderEpoch)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (l *fakeLeader) listOffsets(req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			lp := l.parts[replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			switch {
			case lp == nil:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case req.ReplicaID < 0:
				// A follower's question is answered from the LEO, a
				// consumer's from the HW; the fake serves followers only.
				rp.ErrorCode = kerr.InvalidRequest.Code
			case p.Timestamp == latestTimestamp:
				rp.Offset = lp.log.LogEndOffset()
			case p.Timestamp == earliestTimestamp:
				rp.Offset = lp.log.LogStartOffset()
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
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

func requireSameLog(t *testing.T, leader, follower *logstore.MemLog) {
	t.Helper()
	if lb, fb := logBytes(t, leader), logBytes(t, follower); !bytes.Equal(lb, fb) {
		t.Fatalf("logs differ: leader %d bytes LEO %d, follower %d bytes LEO %d", len(lb), leader.LogEndOffset(), len(fb), follower.LogEndOffset())
	}
	le, fe := leader.LeaderEpochEntries(), follower.LeaderEpochEntries()
	if fmt.Sprint(le) != fmt.Sprint(fe) {
		t.Fatalf("epoch caches differ: leader %v, follower %v", le, fe)
	}
}

func caughtUp(leader, follower *logstore.MemLog) func() bool {
	return func() bool { return follower.LogEndOffset() == leader.LogEndOffset() }
}
