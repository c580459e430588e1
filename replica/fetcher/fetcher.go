package fetcher

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/replica"
)

// fetcher is one ReplicaFetcherThread: a goroutine that fetches a set of
// partitions from one leader over one connection, one request per round.
type fetcher struct {
	id     int
	leader BrokerEndpoint
	cfg    Config
	dial   Dialer
	logger *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// wake is signalled when partitions are added, so an idle fetcher
	// starts at once instead of after its back-off.
	wake chan struct{}

	// mu guards parts and every partitionState in it. It is held while a
	// response is applied to the logs, never during network IO, so that
	// remove returns only once no write to a removed partition is running.
	mu    sync.Mutex
	parts map[replica.TopicPartition]*partitionState

	// conn is used only by the fetcher's goroutine.
	conn Conn
}

func newFetcher(id int, leader BrokerEndpoint, cfg Config, dial Dialer, logger *slog.Logger) *fetcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &fetcher{
		id:     id,
		leader: leader,
		cfg:    cfg,
		dial:   dial,
		logger: logger.With("fetcher", fmt.Sprintf("ReplicaFetcherThread-%d-%d", id, leader.ID)),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		parts:  map[replica.TopicPartition]*partitionState{},
	}
}

func (f *fetcher) clientID() string {
	return fmt.Sprintf("broker-%d-fetcher-%d", f.cfg.BrokerID, f.id)
}

func (f *fetcher) truncateOnFetch() bool {
	return f.cfg.TruncateOnFetch && f.cfg.FetchVersion >= lastFetchedEpochVersion
}

func (f *fetcher) start() { go f.run() }

// stop ends the goroutine, waits for it, and returns the partitions it had.
func (f *fetcher) stop() []Partition {
	f.cancel()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Partition, 0, len(f.parts))
	for _, st := range f.parts {
		out = append(out, st.p)
	}
	return out
}

// add starts p over, unless it is already fetching in the same leader
// epoch (Kafka keeps the state then:
// AbstractFetcherManager.addFetcherForPartitions leaves it alone).
func (f *fetcher) add(p Partition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tp := topicPartitionOf(p)
	if st, ok := f.parts[tp]; ok && st.p == p && st.leaderEpoch == p.CurrentLeaderEpoch() && st.phase != failed {
		return
	}
	f.parts[tp] = newPartitionState(p, f.truncateOnFetch())
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// remove drops tp and returns how many partitions are left.
func (f *fetcher) remove(tp replica.TopicPartition) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.parts, tp)
	return len(f.parts)
}

func (f *fetcher) maxLag() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lag int64
	for _, st := range f.parts {
		lag = max(lag, st.lag)
	}
	return lag
}

func (f *fetcher) run() {
	defer close(f.done)
	defer f.closeConn()
	for f.ctx.Err() == nil {
		f.restartOnNewEpochs()
		didWork := f.truncateRound()
		if f.fetchRound() {
			didWork = true
		}
		if !didWork {
			f.idle()
		}
	}
}

// restartOnNewEpochs starts over every partition whose leader epoch moved
// without the broker re-adding it; this also releases parked partitions.
func (f *fetcher) restartOnNewEpochs() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for tp, st := range f.parts {
		if st.p.CurrentLeaderEpoch() != st.leaderEpoch {
			f.parts[tp] = newPartitionState(st.p, f.truncateOnFetch())
		}
	}
}

// idle waits until a delayed partition is due, partitions are added, or
// the fetcher stops. Parked partitions are re-checked every back-off for
// a leader epoch change.
func (f *fetcher) idle() {
	now := f.cfg.Clock.Now()
	wait := f.cfg.ReplicaFetchBackoff
	f.mu.Lock()
	for _, st := range f.parts {
		if st.phase != failed && st.delayedUntil.After(now) {
			wait = min(wait, st.delayedUntil.Sub(now))
		}
	}
	f.mu.Unlock()
	select {
	case <-f.ctx.Done():
	case <-f.wake:
	case <-f.cfg.Clock.After(wait):
	}
}

// delay backs off sts after an error, unless they were replaced meanwhile.
// The caller holds mu.
func (f *fetcher) delayLocked(sts []*partitionState) {
	until := f.cfg.Clock.Now().Add(f.cfg.ReplicaFetchBackoff)
	for _, st := range sts {
		if f.parts[st.part] == st {
			st.delayedUntil = until
		}
	}
}

// request sends req to the leader, dialling first if needed. On an error
// the connection is dropped and every partition of the round backs off
// (a failed request says nothing about any one partition, so all wait).
func (f *fetcher) request(req kmsg.Request, sts []*partitionState) (kmsg.Response, bool) {
	if f.conn == nil {
		conn, err := f.dial.Dial(f.ctx, f.leader, f.clientID())
		if err != nil {
			f.requestFailed(err, sts)
			return nil, false
		}
		f.conn = conn
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.cfg.ReplicaSocketTimeout+f.cfg.ReplicaFetchWaitMax)
	defer cancel()
	resp, err := f.conn.Request(ctx, req)
	if err != nil {
		f.closeConn()
		f.requestFailed(err, sts)
		return nil, false
	}
	return resp, true
}

func (f *fetcher) requestFailed(err error, sts []*partitionState) {
	if f.ctx.Err() != nil {
		return
	}
	f.logger.Warn("replica fetcher: request to leader failed, backing off", "leader", f.leader.ID, "addr", f.leader.Addr, "backoff", f.cfg.ReplicaFetchBackoff, "err", err)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delayLocked(sts)
}

func (f *fetcher) closeConn() {
	if f.conn != nil {
		f.conn.Close()
		f.conn = nil
	}
}

// readyLocked lists the partitions in phase ph that are not backing off.
func (f *fetcher) readyLocked(ph phase, now time.Time) []*partitionState {
	var out []*partitionState
	for _, st := range f.parts {
		if st.phase == ph && st.ready(now) {
			out = append(out, st)
		}
	}
	return out
}
