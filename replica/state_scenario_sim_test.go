package replica

import (
	"fmt"
	"github.com/kbroker/kbroker/logstore"
	"slices"
	"strings"
)

// A tiny in-memory cluster driven by the pure state machine, for the
// KIP-101/KIP-279 scenarios in testdata/. Each replica has a log of batches,
// an epoch cache, and either a LeaderState or a FollowerState. Followers
// replicate one fetch round at a time exactly as Kafka's leader and fetcher
// do, so a wrong truncation decision shows up as divergent logs, lost
// acknowledged records, or a non-monotonic append (a batch whose base offset
// is not the follower's LEO).

type simBatch struct {
	label string
	base  int64
	count int64
	epoch int32
}

func (b simBatch) next() int64 { return b.base + b.count }

func (b simBatch) String() string {
	if b.count == 1 {
		return fmt.Sprintf("%s@%d/e%d", b.label, b.base, b.epoch)
	}
	return fmt.Sprintf("%s@%dx%d/e%d", b.label, b.base, b.count, b.epoch)
}

// simMode is how followers find where their log diverges.
type simMode string

const (
	// modeFetch: Fetch v12+ with LastFetchedEpoch/DivergingEpoch (IBP >=
	// 2.7-IV1, Kafka 3.9's default).
	modeFetch simMode = "fetch"
	// modeOffsetForLeaderEpoch: a truncating state using OffsetForLeaderEpoch
	// rounds before fetching (IBP 2.6, KIP-279's loop).
	modeOffsetForLeaderEpoch simMode = "ofle"
)

type simReplica struct {
	id       int32
	up       bool
	log      []simBatch
	cache    *logstore.EpochCache
	hw       int64 // the checkpointed HW while down, the live one otherwise
	leader   *LeaderState
	follower *FollowerState
	// truncating: in modeOffsetForLeaderEpoch, must run OffsetForLeaderEpoch
	// rounds before its next fetch.
	truncating bool
}

func (r *simReplica) leo() int64 {
	if len(r.log) == 0 {
		return 0
	}
	return r.log[len(r.log)-1].next()
}

func (r *simReplica) highWatermark() int64 {
	switch {
	case r.leader != nil:
		return r.leader.HighWatermark()
	case r.follower != nil:
		return r.follower.HighWatermark()
	}
	return r.hw
}

// truncateTo cuts the log at offset (a batch boundary by construction:
// truncation offsets come from epoch start offsets, LEOs and HWs, all of
// which are batch boundaries in this model) and follows with the cache and
// the HW.
func (r *simReplica) truncateTo(offset int64) error {
	n := len(r.log)
	for n > 0 && r.log[n-1].base >= offset {
		n--
	}
	if n > 0 && r.log[n-1].next() > offset {
		return fmt.Errorf("replica %d: truncation to %d inside batch %v", r.id, offset, r.log[n-1])
	}
	r.log = r.log[:n]
	r.cache.TruncateFromEnd(offset)
	if r.follower != nil {
		r.follower.Truncated(r.leo())
	}
	r.hw = min(r.hw, r.leo())
	return nil
}

func (r *simReplica) logString() string {
	parts := make([]string, len(r.log))
	for i, b := range r.log {
		parts[i] = b.String()
	}
	return strings.Join(parts, " ")
}

type simCluster struct {
	mode     simMode
	cfg      LeaderConfig
	replicas map[int32]*simReplica
	order    []int32
	leaderID int32 // -1 when none
	epoch    int32
	version  int32 // the state znode's version
	isr      []int32
	now      int64
	acked    map[string]int64 // label -> required offset, for acks=all produces
}

func newSimCluster(ids []int32, mode simMode, cfg LeaderConfig) *simCluster {
	c := &simCluster{mode: mode, cfg: cfg, replicas: map[int32]*simReplica{}, order: ids, leaderID: -1, epoch: -1, acked: map[string]int64{}}
	for _, id := range ids {
		c.replicas[id] = &simReplica{id: id, up: true, cache: logstore.NewEpochCache(nil)}
	}
	return c
}

func (c *simCluster) replica(id int32) (*simReplica, error) {
	r, ok := c.replicas[id]
	if !ok {
		return nil, fmt.Errorf("no replica %d", id)
	}
	return r, nil
}

func (c *simCluster) leader() (*simReplica, error) {
	if c.leaderID < 0 {
		return nil, fmt.Errorf("no leader")
	}
	return c.replicas[c.leaderID], nil
}

// elect applies a controller decision: leader id in epoch with isr, sent to
// the leader and to the replicas in notify.
func (c *simCluster) elect(id, epoch int32, isr, notify []int32) error {
	r, err := c.replica(id)
	if err != nil {
		return err
	}
	if !r.up {
		return fmt.Errorf("elect %d: replica is down", id)
	}
	c.version++
	req := LeaderAndIsr{ControllerEpoch: 1, Leader: id, LeaderEpoch: epoch, Isr: isr, PartitionEpoch: c.version, Replicas: c.order}
	if r.leader == nil {
		hw := r.highWatermark()
		r.follower = nil
		r.leader = NewLeaderState(id, c.cfg, hw, r.leo())
	}
	res := r.leader.BecomeLeader(req, r.leo(), ms(c.now))
	if !res.Applied {
		return fmt.Errorf("elect %d epoch %d: not applied", id, epoch)
	}
	// KAFKA-7415: the epoch's entry is written at election.
	r.cache.Assign(epoch, res.EpochStartOffset)
	c.leaderID, c.epoch, c.isr = id, epoch, slices.Clone(isr)
	for _, f := range notify {
		if f == id {
			continue
		}
		if err := c.follow(f); err != nil {
			return err
		}
	}
	return nil
}

// follow makes replica id (up, not the leader) follow the current leader:
// makeFollowers.
func (c *simCluster) follow(id int32) error {
	r, err := c.replica(id)
	if err != nil {
		return err
	}
	if !r.up || c.leaderID < 0 {
		return nil
	}
	hw := r.highWatermark()
	r.leader = nil
	r.follower = NewFollowerState(c.leaderID, c.epoch, hw)
	start := StartFollowing(r.cache, c.mode == modeFetch, r.leo(), hw)
	r.truncating = start.Truncating && !start.TruncateToHighWatermark
	if start.TruncateToHighWatermark {
		return r.truncateTo(start.FetchOffset)
	}
	return nil
}

// produce appends batches to the leader in its epoch.
func (c *simCluster) produce(batches []simBatch, acksAll bool) error {
	l, err := c.leader()
	if err != nil {
		return err
	}
	if acksAll {
		if err := l.leader.CheckProduceBeforeAppend(-1); err != nil {
			return fmt.Errorf("produce: %v", err)
		}
	}
	for _, b := range batches {
		b.base, b.epoch = l.leo(), c.epoch
		l.log = append(l.log, b)
		l.cache.Assign(b.epoch, b.base)
		if acksAll {
			c.acked[b.label] = b.next()
		}
	}
	l.leader.AppendedAsLeader(l.leo(), ms(c.now))
	return nil
}

// replicate runs one round for follower id: the OffsetForLeaderEpoch loop
// if it is truncating, then one fetch.
func (c *simCluster) replicate(id int32) error {
	r, err := c.replica(id)
	if err != nil {
		return err
	}
	l, err := c.leader()
	if err != nil {
		return err
	}
	if !r.up || r.follower == nil {
		return fmt.Errorf("replicate %d: not a live follower", id)
	}
	for round := 0; r.truncating; round++ {
		if round > 20 {
			return fmt.Errorf("replicate %d: truncation did not converge", id)
		}
		answer := endOffsetFor(l.cache, r.cache.LatestEpoch(), l.leo())
		tr := OffsetTruncation(r.cache, r.leo(), r.highWatermark(), answer)
		if err := r.truncateTo(tr.Offset); err != nil {
			return err
		}
		r.truncating = !tr.Completed
	}
	return c.fetch(r, l)
}

func (c *simCluster) fetch(r, l *simReplica) error {
	fetchOffset := r.leo()
	lastFetchedEpoch := UndefinedEpoch
	if c.mode == modeFetch {
		lastFetchedEpoch = r.cache.LatestEpoch()
	}
	check, diverging := CheckLastFetchedEpoch(l.cache, 0, l.leo(), lastFetchedEpoch, fetchOffset)
	switch check {
	case FetchEpochDiverging:
		// Diverging epoch: no records, no HW change, no leader-side update.
		tr := OffsetTruncation(r.cache, r.leo(), fetchOffset, diverging)
		return r.truncateTo(tr.Offset)
	case FetchEpochOffsetOutOfRange:
		return c.outOfRange(r, l)
	}
	if fetchOffset > l.leo() {
		return c.outOfRange(r, l)
	}
	// The read, and the HW it returns, come before the follower update.
	responseHW := l.leader.HighWatermark()
	var records []simBatch
	for _, b := range l.log {
		if b.next() > fetchOffset {
			records = append(records, b)
		}
	}
	res, err := l.leader.UpdateFollowerFetch(r.id, fetchOffset, 0, ms(c.now), l.leo())
	if err != nil {
		return err
	}
	if res.IsrExpansion != nil {
		// The conditional state znode write succeeds.
		c.version++
		if ok, _ := l.leader.CompleteIsrChange(*res.IsrExpansion, c.version, ms(c.now)); !ok {
			return fmt.Errorf("expansion not applied")
		}
		c.isr = l.leader.Isr()
	}
	for _, b := range records {
		if b.base != r.leo() {
			return fmt.Errorf("replica %d: non-monotonic append: batch %v at LEO %d", r.id, b, r.leo())
		}
		r.log = append(r.log, b)
		r.cache.Assign(b.epoch, b.base)
	}
	r.follower.ApplyFetchResponse(responseHW, 0, r.leo())
	return nil
}

// outOfRange is fetchOffsetAndTruncate with log start 0: a leader LEO below
// ours means an unclean election; truncate to it.
func (c *simCluster) outOfRange(r, l *simReplica) error {
	if l.leo() < r.leo() {
		return r.truncateTo(l.leo())
	}
	return nil
}

// sync replicates every live follower until a full round changes nothing.
func (c *simCluster) sync() error {
	for round := 0; round < 50; round++ {
		before := c.snapshot()
		for _, id := range c.order {
			r := c.replicas[id]
			if r.up && r.follower != nil {
				if err := c.replicate(id); err != nil {
					return err
				}
			}
		}
		c.now++
		if c.snapshot() == before {
			return nil
		}
	}
	return fmt.Errorf("sync did not converge")
}

func (c *simCluster) snapshot() string {
	var b strings.Builder
	for _, id := range c.order {
		r := c.replicas[id]
		fmt.Fprintf(&b, "%d:%s|%d|%v|%v;", id, r.logString(), r.highWatermark(), r.truncating, entriesString(r.cache.Entries()))
	}
	if l, err := c.leader(); err == nil {
		fmt.Fprintf(&b, "isr=%v", l.leader.Isr())
	}
	return b.String()
}

// crash stops replica id. keep >= 0 keeps only that many batches: the rest
// was in the page cache. Recovery rebuilds the epoch cache from the log (as
// LogLoader does) and the HW comes back from the checkpoint, capped at the
// LEO.
func (c *simCluster) crash(id int32, keep int) error {
	r, err := c.replica(id)
	if err != nil {
		return err
	}
	r.hw = r.highWatermark()
	r.up, r.leader, r.follower, r.truncating = false, nil, nil, false
	if keep >= 0 && keep < len(r.log) {
		r.log = r.log[:keep]
	}
	// Log loading truncates the cache at the recovered LEO, as Kafka's
	// LogLoader does, whether or not anything was lost.
	r.cache.TruncateFromEnd(r.leo())
	r.hw = min(r.hw, r.leo())
	if c.leaderID == id {
		c.leaderID = -1
	}
	return nil
}

// restart starts replica id; the controller's LeaderAndIsr then makes it
// follow the current leader, if there is one.
func (c *simCluster) restart(id int32) error {
	r, err := c.replica(id)
	if err != nil {
		return err
	}
	r.up = true
	return c.follow(id)
}

// shrink runs the isr-expiration check on the leader and commits the
// result.
func (c *simCluster) shrink() error {
	l, err := c.leader()
	if err != nil {
		return err
	}
	ch := l.leader.MaybeShrinkIsr(ms(c.now))
	if ch == nil {
		return nil
	}
	c.version++
	l.leader.CompleteIsrChange(*ch, c.version, ms(c.now))
	c.isr = l.leader.Isr()
	return nil
}
