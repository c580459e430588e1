package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/replica/fetcher"
)

// Local is this broker's follower replica as the audit reads it.
type Local interface {
	LogStartOffset() int64
	HighWatermark() int64
	// LeaderEpoch is the replica's current leader epoch (LeaderAndIsr);
	// a mismatch seen in one epoch is not confirmed in another.
	LeaderEpoch() int32
	// Read returns the whole batches from the one holding from, below
	// to, at most maxBytes but at least one batch.
	Read(from, to int64, maxBytes int) ([]byte, error)
}

// Target is one followed partition to audit.
type Target struct {
	replica.TopicPartition
	// TopicID names the topic on Fetch v13+; all zero caps Fetch at v12.
	TopicID [16]byte
	Leader  fetcher.BrokerEndpoint
	Local   Local
}

// Finding is a confirmed divergence.
type Finding struct {
	replica.TopicPartition
	LeaderID int32
	Divergence
}

// Config paces the audit.
type Config struct {
	// BrokerID names this broker in the client id.
	BrokerID int32
	// Interval is replica.audit.interval.ms: a pass over every followed
	// partition starts this long after the previous one started (at once
	// when that one took longer).
	Interval time.Duration
	// MaxBytesPerSec is replica.audit.max.bytes.per.sec: the bytes read
	// from leaders and local logs together; 0 or less is no bound.
	MaxBytesPerSec int64
	// ChunkBytes bounds one Fetch (and the local read matching it).
	ChunkBytes int32
	// RecheckDelay is how long a mismatch waits to be read again before
	// it counts: at least one follower fetch round, so that a follower
	// about to truncate (a new leader epoch) has done so.
	RecheckDelay time.Duration
	// FetchVersion is the highest Fetch version sent.
	FetchVersion int16
	// RequestTimeout bounds one request.
	RequestTimeout time.Duration
	Clock          fetcher.Clock
	Registerer     prometheus.Registerer
	Logger         *slog.Logger
}

// Defaults for the fields left zero.
const (
	DefaultChunkBytes     = 1 << 20
	DefaultRecheckDelay   = 2 * time.Second
	DefaultFetchVersion   = 16
	DefaultRequestTimeout = 30 * time.Second
	// topicIDVersion is the first Fetch version keyed by topic id.
	topicIDVersion = 13
)

func (c Config) withDefaults() Config {
	if c.ChunkBytes <= 0 {
		c.ChunkBytes = DefaultChunkBytes
	}
	if c.MaxBytesPerSec > 0 && int64(c.ChunkBytes) > c.MaxBytesPerSec {
		c.ChunkBytes = int32(c.MaxBytesPerSec)
	}
	if c.RecheckDelay <= 0 {
		c.RecheckDelay = DefaultRecheckDelay
	}
	if c.FetchVersion <= 0 {
		c.FetchVersion = DefaultFetchVersion
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.Clock == nil {
		c.Clock = wallClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Auditor compares this broker's follower replicas with their leaders.
// Its passes run in one goroutine (Run), which alone uses the connections.
type Auditor struct {
	cfg     Config
	targets func() []Target
	dial    fetcher.Dialer
	m       *metrics

	conns map[int32]*leaderConn

	mu        sync.Mutex
	divergent map[replica.TopicPartition]Finding
}

type leaderConn struct {
	addr string
	conn fetcher.Conn
}

// New returns an auditor of the partitions targets lists at each pass,
// reaching leaders through dial.
func New(cfg Config, targets func() []Target, dial fetcher.Dialer) *Auditor {
	a := &Auditor{
		cfg:       cfg.withDefaults(),
		targets:   targets,
		dial:      dial,
		conns:     map[int32]*leaderConn{},
		divergent: map[replica.TopicPartition]Finding{},
	}
	a.m = newMetrics(a.cfg.Registerer, a.numDivergent, a.cfg.Logger)
	return a
}

// Run makes a pass every Interval, the first one Interval after it
// starts (a starting broker is busy loading logs and catching up), until
// ctx ends; then it closes its connections and unregisters its metrics.
func (a *Auditor) Run(ctx context.Context) {
	defer a.close()
	next := a.cfg.Clock.Now().Add(a.cfg.Interval)
	for ctx.Err() == nil {
		if wait := next.Sub(a.cfg.Clock.Now()); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-a.cfg.Clock.After(wait):
			}
		}
		if ctx.Err() != nil {
			return
		}
		next = a.cfg.Clock.Now().Add(a.cfg.Interval)
		a.Pass(ctx)
	}
}

func (a *Auditor) close() {
	for id, c := range a.conns {
		c.conn.Close()
		delete(a.conns, id)
	}
	a.m.unregister()
}

// Divergent lists the partitions found divergent, by topic and partition.
func (a *Auditor) Divergent() []Finding {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Finding, 0, len(a.divergent))
	for _, f := range a.divergent {
		out = append(out, f)
	}
	slices.SortFunc(out, func(x, y Finding) int {
		if x.Topic != y.Topic {
			if x.Topic < y.Topic {
				return -1
			}
			return 1
		}
		return int(x.Partition) - int(y.Partition)
	})
	return out
}

func (a *Auditor) numDivergent() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.divergent)
}

// outcome of auditing one partition in one pass.
type outcome int

const (
	// unknown: the pass could not finish the partition (leader moved,
	// request failed, log changed under it): what was known stays.
	unknown outcome = iota
	clean
	divergent
)

// Pass audits every target once.
func (a *Auditor) Pass(ctx context.Context) {
	targets := a.targets()
	a.forgetUnlisted(targets)
	failed := map[int32]bool{} // leaders whose connection failed this pass
	for _, t := range targets {
		if ctx.Err() != nil {
			return
		}
		if failed[t.Leader.ID] {
			continue
		}
		res, d, err := a.auditPartition(ctx, t)
		var reqErr *requestError
		if errors.As(err, &reqErr) {
			failed[t.Leader.ID] = true
		}
		if err != nil && ctx.Err() == nil {
			a.cfg.Logger.Debug("replica audit: partition not audited this pass", "topic", t.Topic, "partition", t.Partition, "leader", t.Leader.ID, "err", err)
		}
		a.record(t, res, d)
	}
}

// forgetUnlisted drops findings about partitions no longer followed.
func (a *Auditor) forgetUnlisted(targets []Target) {
	listed := make(map[replica.TopicPartition]bool, len(targets))
	for _, t := range targets {
		listed[t.TopicPartition] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for tp := range a.divergent {
		if !listed[tp] {
			delete(a.divergent, tp)
			a.m.clear(tp)
		}
	}
}

func (a *Auditor) record(t Target, res outcome, d *Divergence) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch res {
	case clean:
		if _, ok := a.divergent[t.TopicPartition]; ok {
			delete(a.divergent, t.TopicPartition)
			a.m.clear(t.TopicPartition)
			a.cfg.Logger.Info("replica audit: partition agrees with its leader again", "topic", t.Topic, "partition", t.Partition, "leader", t.Leader.ID)
		}
	case divergent:
		old, had := a.divergent[t.TopicPartition]
		f := Finding{TopicPartition: t.TopicPartition, LeaderID: t.Leader.ID, Divergence: *d}
		a.divergent[t.TopicPartition] = f
		a.m.set(t.TopicPartition)
		if !had || old.Divergence != f.Divergence || old.LeaderID != f.LeaderID {
			a.cfg.Logger.Warn("replica audit: follower replica differs from its leader below the high watermark",
				"topic", t.Topic, "partition", t.Partition, "offset", d.Offset, "leader", t.Leader.ID,
				"leader_crc", CRCText(d.Leader, d.LeaderMissing), "follower_crc", CRCText(d.Follower, d.FollowerMissing),
				"leader_batch_epoch", d.Leader.LeaderEpoch, "follower_batch_epoch", d.Follower.LeaderEpoch)
		}
	}
}

// CRCText is a batch's CRC as the log and the CLI print it, "none" for a
// side that has no batch there.
func CRCText(h Header, missing bool) string {
	if missing {
		return "none"
	}
	return fmt.Sprintf("%08x", h.CRC)
}

// auditPartition compares t from its log start to its high watermark (and
// the leader's), chunk by chunk. A mismatch is read again after
// RecheckDelay and counts only if it is still there, at the same offset, in
// the same leader epoch.
func (a *Auditor) auditPartition(ctx context.Context, t Target) (outcome, *Divergence, error) {
	from := t.Local.LogStartOffset()
	end := t.Local.HighWatermark()
	var suspect *Divergence
	suspectEpoch := int32(-1)
	for from < end {
		epoch := t.Local.LeaderEpoch()
		leaderRecs, leaderHW, err := a.fetchLeader(ctx, t, from, epoch)
		if err != nil {
			return unknown, nil, err
		}
		stop := min(end, leaderHW)
		if stop <= from {
			break
		}
		local, err := t.Local.Read(from, stop, max(len(leaderRecs), 1))
		if err != nil {
			return unknown, nil, fmt.Errorf("local read at %d: %w", from, err)
		}
		a.m.bytes.Add(float64(len(leaderRecs) + len(local)))
		r := Compare(Headers(leaderRecs), Headers(local), from, stop)
		a.m.compared.Add(float64(r.Compared))
		if err := a.pace(ctx, len(leaderRecs)+len(local)); err != nil {
			return unknown, nil, err
		}
		if d := r.Divergence; d != nil {
			switch {
			case suspect == nil || suspect.Offset != d.Offset:
				suspect, suspectEpoch = d, epoch
				if err := a.sleep(ctx, a.cfg.RecheckDelay); err != nil {
					return unknown, nil, err
				}
				continue // the same range again
			case t.Local.LeaderEpoch() != suspectEpoch:
				// The leader changed meanwhile: the follower may be about
				// to truncate. The next pass looks again.
				return unknown, nil, nil
			default:
				return divergent, d, nil
			}
		}
		suspect = nil
		if r.Next <= from {
			break // nothing more below the high watermarks in this chunk
		}
		from = r.Next
	}
	return clean, nil, nil
}

// requestError is a failed request: the leader's connection is dropped
// and its other partitions wait for the next pass.
type requestError struct{ err error }

func (e *requestError) Error() string { return "request to leader: " + e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// fetchLeader reads the leader's batches from offset as a consumer would:
// replica id -1, read_uncommitted (so up to the leader's high watermark),
// no fetch session, no wait. A consumer's fetch changes nothing on the
// leader — not its view of this follower (fetch offset, ISR, HW), which
// only a fetch with a broker id as replica id moves — and Kafka 3.9
// leaders serve it as well as kbroker.
func (a *Auditor) fetchLeader(ctx context.Context, t Target, from int64, epoch int32) ([]byte, int64, error) {
	c, err := a.conn(ctx, t.Leader)
	if err != nil {
		return nil, 0, &requestError{err}
	}
	req := FetchRequest(t.Topic, t.Partition, t.TopicID, from, epoch, a.cfg.ChunkBytes, a.cfg.FetchVersion, -1)
	rctx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	defer cancel()
	resp, err := c.Request(rctx, req)
	if err != nil {
		c.Close()
		delete(a.conns, t.Leader.ID)
		return nil, 0, &requestError{err}
	}
	rp, err := FetchedPartition(resp.(*kmsg.FetchResponse), t.Partition)
	if err != nil {
		return nil, 0, err
	}
	return rp.RecordBatches, rp.HighWatermark, nil
}

// FetchRequest is a sessionless consumer Fetch of one partition from
// offset, at most maxBytes, not waiting: replicaID -1 (an ordinary
// consumer, which only a leader serves) or -2 (Kafka's debugging consumer,
// which the CLI sends to every replica; from v11 followers serve either).
// leaderEpoch -1 skips the leader-epoch check.
func FetchRequest(topic string, partition int32, topicID [16]byte, from int64, leaderEpoch, maxBytes int32, version int16, replicaID int32) *kmsg.FetchRequest {
	if topicID == ([16]byte{}) {
		version = min(version, topicIDVersion-1)
	}
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.ReplicaID = replicaID
	req.ReplicaState.ID = replicaID
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = maxBytes
	req.IsolationLevel = 0
	req.SessionID = 0
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = partition
	rp.FetchOffset = from
	rp.CurrentLeaderEpoch = leaderEpoch
	rp.LastFetchedEpoch = -1
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = maxBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// FetchedPartition is the answer for partition in a one-partition fetch
// response, or its error.
func FetchedPartition(resp *kmsg.FetchResponse, partition int32) (*kmsg.FetchResponseTopicPartition, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			rp := &resp.Topics[i].Partitions[j]
			if rp.Partition != partition {
				continue
			}
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return nil, err
			}
			return rp, nil
		}
	}
	return nil, errors.New("partition missing from the fetch response")
}

func (a *Auditor) conn(ctx context.Context, leader fetcher.BrokerEndpoint) (fetcher.Conn, error) {
	if c, ok := a.conns[leader.ID]; ok {
		if c.addr == leader.Addr {
			return c.conn, nil
		}
		c.conn.Close()
		delete(a.conns, leader.ID)
	}
	conn, err := a.dial.Dial(ctx, leader, "broker-"+strconv.Itoa(int(a.cfg.BrokerID))+"-replica-audit")
	if err != nil {
		return nil, err
	}
	a.conns[leader.ID] = &leaderConn{addr: leader.Addr, conn: conn}
	return conn, nil
}

// pace waits as long as reading n bytes takes at MaxBytesPerSec.
func (a *Auditor) pace(ctx context.Context, n int) error {
	if a.cfg.MaxBytesPerSec <= 0 || n <= 0 {
		return nil
	}
	return a.sleep(ctx, time.Duration(float64(n)/float64(a.cfg.MaxBytesPerSec)*float64(time.Second)))
}

func (a *Auditor) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-a.cfg.Clock.After(d):
		return nil
	}
}
