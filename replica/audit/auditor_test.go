package audit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/replica/fetcher"
)

// fakeLog is a replica's log: whole batches, a log start and a HW.
type fakeLog struct {
	mu      sync.Mutex
	batches [][]byte
	start   int64
	hw      int64
	epoch   int32
	// onRead, when set, runs before each read (to change the log between
	// a check and its recheck).
	onRead func(l *fakeLog, reads int)
	reads  int
}

func (l *fakeLog) LogStartOffset() int64 { l.mu.Lock(); defer l.mu.Unlock(); return l.start }
func (l *fakeLog) HighWatermark() int64  { l.mu.Lock(); defer l.mu.Unlock(); return l.hw }
func (l *fakeLog) LeaderEpoch() int32    { l.mu.Lock(); defer l.mu.Unlock(); return l.epoch }

func (l *fakeLog) Read(from, to int64, maxBytes int) ([]byte, error) {
	l.mu.Lock()
	l.reads++
	if l.onRead != nil {
		fn := l.onRead
		l.mu.Unlock()
		fn(l, l.reads)
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	var out []byte
	for _, b := range l.batches {
		h := Headers(b)[0]
		if h.LastOffset() < from || h.LastOffset() >= to {
			continue
		}
		if len(out) > 0 && len(out)+len(b) > maxBytes {
			break
		}
		out = append(out, b...)
	}
	return out, nil
}

// newFakeLog holds n batches of 10 offsets, each with crc seed i.
func newFakeLog(n int) *fakeLog {
	l := &fakeLog{hw: int64(n * 10), epoch: 1}
	for i := range n {
		l.batches = append(l.batches, batchBytes(int64(i*10), 9, 1, i))
	}
	return l
}

func (l *fakeLog) corrupt(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := append([]byte{}, l.batches[i]...)
	b = append(b[:posCRC], append([]byte{b[posCRC] ^ 0xff}, b[posCRC+1:]...)...)
	l.batches[i] = b
}

// fakeLeader answers Fetch from its logs, checking that every request is
// the audit's consumer fetch.
type fakeLeader struct {
	t    *testing.T
	mu   sync.Mutex
	logs map[int32]*fakeLog
	// fetches counts requests by partition and fetch offset.
	fetches map[[2]int64]int
	fail    int // the next fail requests fail
	dials   int
}

func (f *fakeLeader) Dial(context.Context, fetcher.BrokerEndpoint, string) (fetcher.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dials++
	return fakeConn{f}, nil
}

type fakeConn struct{ f *fakeLeader }

func (fakeConn) Close() {}

func (c fakeConn) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	f := c.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		f.fail--
		return nil, errors.New("connection reset")
	}
	r := req.(*kmsg.FetchRequest)
	if r.ReplicaID != -1 || r.ReplicaState.ID != -1 || r.SessionEpoch != -1 || r.SessionID != 0 || r.IsolationLevel != 0 || r.MaxWaitMillis != 0 {
		f.t.Errorf("not a sessionless read_uncommitted consumer fetch: %+v", r)
	}
	resp := kmsg.NewPtrFetchResponse()
	for _, rt := range r.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			l := f.logs[rp.Partition]
			f.fetches[[2]int64{int64(rp.Partition), rp.FetchOffset}]++
			switch {
			case l == nil:
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
			case rp.FetchOffset < l.LogStartOffset():
				sp.ErrorCode = kerr.OffsetOutOfRange.Code
			default:
				sp.HighWatermark = l.HighWatermark()
				sp.RecordBatches, _ = l.Read(rp.FetchOffset, sp.HighWatermark, int(rp.PartitionMaxBytes))
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// instantClock answers every wait at once and adds it to the time slept.
type instantClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func (c *instantClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *instantClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept += d
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

type setup struct {
	a      *Auditor
	leader *fakeLeader
	local  map[int32]*fakeLog
	reg    *prometheus.Registry
	clock  *instantClock
	listed []int32
}

// newSetup follows partitions 0..n-1 of topic "t" from leader 1, each
// with the same log of batches batches on both sides.
func newSetup(t *testing.T, n, batches int, cfg Config) *setup {
	s := &setup{
		leader: &fakeLeader{t: t, logs: map[int32]*fakeLog{}, fetches: map[[2]int64]int{}},
		local:  map[int32]*fakeLog{},
		reg:    prometheus.NewRegistry(),
		clock:  &instantClock{now: time.Unix(1_700_000_000, 0)},
	}
	for p := range int32(n) {
		s.leader.logs[p] = newFakeLog(batches)
		s.local[p] = newFakeLog(batches)
		s.listed = append(s.listed, p)
	}
	cfg.Clock, cfg.Registerer = s.clock, s.reg
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s.a = New(cfg, s.targets, s.leader)
	return s
}

func (s *setup) targets() []Target {
	var out []Target
	for _, p := range s.listed {
		out = append(out, Target{
			TopicPartition: replica.TopicPartition{Topic: "t", Partition: p},
			Leader:         fetcher.BrokerEndpoint{ID: 1, Addr: "leader:9092"},
			Local:          s.local[p],
		})
	}
	return out
}

func (s *setup) gauge(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		var sum float64
		for _, m := range mf.GetMetric() {
			switch {
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			}
		}
		return sum
	}
	return 0
}

func TestPassEqualReplicas(t *testing.T) {
	s := newSetup(t, 2, 5, Config{})
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("divergent: %+v", got)
	}
	if got := testutil.ToFloat64(s.a.m.compared); got != 10 {
		t.Fatalf("batches compared %v, want 10", got)
	}
	if got := s.gauge(t, "kbroker_replica_audit_divergent_partitions"); got != 0 {
		t.Fatalf("divergent_partitions %v", got)
	}
}

func TestPassConfirmsDivergenceAfterRecheck(t *testing.T) {
	s := newSetup(t, 2, 5, Config{RecheckDelay: 3 * time.Second})
	s.local[1].corrupt(3)
	s.a.Pass(context.Background())
	got := s.a.Divergent()
	if len(got) != 1 || got[0].Partition != 1 || got[0].Offset != 30 || got[0].LeaderID != 1 {
		t.Fatalf("divergent: %+v, want partition 1 at offset 30", got)
	}
	d := got[0].Divergence
	if d.Leader.CRC == d.Follower.CRC {
		t.Fatalf("same CRCs reported: %+v", d)
	}
	// One chunk holds the whole log: it is read again from its start.
	if n := s.leader.fetches[[2]int64{1, 0}]; n != 2 {
		t.Fatalf("partition 1 fetched %d times, want a check and a recheck", n)
	}
	if s.clock.slept < 3*time.Second {
		t.Fatalf("slept %v before the recheck", s.clock.slept)
	}
	if v := s.gauge(t, "kbroker_replica_audit_divergent_partitions"); v != 1 {
		t.Fatalf("divergent_partitions %v", v)
	}
	if v := testutil.ToFloat64(s.a.m.divergent.WithLabelValues("t", "1")); v != 1 {
		t.Fatalf("divergent{t,1} %v", v)
	}

	// The replica repaired (rebuilt from the leader): the next pass clears it.
	s.local[1] = newFakeLog(5)
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("still divergent: %+v", got)
	}
	if v := s.gauge(t, "kbroker_replica_audit_divergent"); v != 0 {
		t.Fatalf("divergent series left: %v", v)
	}
}

func TestPassTransientMismatchIsNotDivergence(t *testing.T) {
	s := newSetup(t, 1, 5, Config{})
	s.local[0].corrupt(2)
	// The follower's log is right again by the recheck (it truncated and
	// refetched, say).
	s.local[0].onRead = func(l *fakeLog, reads int) {
		if reads == 2 {
			good := newFakeLog(5)
			l.mu.Lock()
			l.batches = good.batches
			l.mu.Unlock()
		}
	}
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("divergent: %+v", got)
	}
}

func TestPassLeaderEpochChangeIsNotConfirmed(t *testing.T) {
	s := newSetup(t, 1, 5, Config{})
	s.local[0].corrupt(2)
	s.local[0].onRead = func(l *fakeLog, reads int) {
		if reads == 1 {
			l.mu.Lock()
			l.epoch++ // a new leader epoch before the recheck
			l.mu.Unlock()
		}
	}
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("confirmed across a leader epoch change: %+v", got)
	}
	s.local[0].onRead = nil
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 1 {
		t.Fatalf("a stable epoch still confirms: %+v", got)
	}
}

func TestPassStopsAtTheLowerHighWatermark(t *testing.T) {
	s := newSetup(t, 1, 5, Config{})
	// Offsets 30+ are only below the leader's HW; the follower's batch
	// there differs but is not committed on it yet.
	s.local[0].corrupt(3)
	s.local[0].hw = 30
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("divergent above the follower HW: %+v", got)
	}
	// And the other way: the leader's HW lower (a new leader catching up).
	s = newSetup(t, 1, 5, Config{})
	s.local[0].corrupt(3)
	s.leader.logs[0].hw = 30
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("divergent above the leader HW: %+v", got)
	}
	if got := testutil.ToFloat64(s.a.m.compared); got != 3 {
		t.Fatalf("compared %v, want 3", got)
	}
}

func TestPassForgetsUnfollowedPartitions(t *testing.T) {
	s := newSetup(t, 2, 3, Config{})
	s.local[0].corrupt(1)
	s.a.Pass(context.Background())
	if len(s.a.Divergent()) != 1 {
		t.Fatal("no divergence found")
	}
	s.listed = []int32{1}
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("kept a partition no longer followed: %+v", got)
	}
}

func TestPassPacesBytes(t *testing.T) {
	// Batches of 61 to 65 bytes, both sides read: 630 bytes at 63 bytes/s
	// is 10 s.
	s := newSetup(t, 1, 5, Config{MaxBytesPerSec: 63})
	s.a.Pass(context.Background())
	if s.clock.slept < 10*time.Second-time.Millisecond || s.clock.slept > 10*time.Second+time.Millisecond {
		t.Fatalf("slept %v, want 10s", s.clock.slept)
	}
	if got := testutil.ToFloat64(s.a.m.bytes); got != 630 {
		t.Fatalf("bytes %v", got)
	}
	// The chunk is capped by the rate: one batch per request.
	if len(s.leader.fetches) != 5 {
		t.Fatalf("fetches %v, want one per batch", s.leader.fetches)
	}
}

func TestPassSkipsLeaderAfterRequestFailure(t *testing.T) {
	s := newSetup(t, 2, 3, Config{})
	s.local[1].corrupt(0)
	s.leader.fail = 1
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("audited after the leader's request failed: %+v", got)
	}
	if len(s.leader.fetches) != 0 {
		t.Fatalf("fetched after a failure in the same pass: %v", s.leader.fetches)
	}
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 1 || s.leader.dials != 2 {
		t.Fatalf("next pass: divergent %+v, dials %d (want a new connection)", got, s.leader.dials)
	}
}

func TestPassPartitionErrorsAreNotDivergence(t *testing.T) {
	s := newSetup(t, 2, 3, Config{})
	delete(s.leader.logs, 0)     // NOT_LEADER_OR_FOLLOWER
	s.leader.logs[1].start = 100 // OFFSET_OUT_OF_RANGE
	s.a.Pass(context.Background())
	if got := s.a.Divergent(); len(got) != 0 {
		t.Fatalf("divergent: %+v", got)
	}
}

func TestRunPassesEveryInterval(t *testing.T) {
	s := newSetup(t, 1, 2, Config{Interval: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	passes := 0
	inner := s.a.targets
	s.a.targets = func() []Target {
		passes++
		if passes == 3 {
			cancel()
		}
		return inner()
	}
	done := make(chan struct{})
	go func() { s.a.Run(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	// One interval before the first pass, one before each of the others.
	if s.clock.slept != 3*time.Minute {
		t.Fatalf("slept %v for 3 passes, want 3m", s.clock.slept)
	}
	if n, err := testutil.GatherAndCount(s.reg); err != nil || n != 0 {
		t.Fatalf("metrics left registered after Run: %d %v", n, err)
	}
}
