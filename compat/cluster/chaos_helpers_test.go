package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/kbroker/kbroker/logstore"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Helpers for the chaos acceptance tests of issue 4 (chaos_*_test.go).
// Every record value is "<prefix>-<seq>" with a sequence number unique
// within the test, so a record read back names exactly one produce call:
// loss, duplication and a record found at another offset are all visible.

// chaosAck is where the broker said an acknowledged record lives.
type chaosAck struct {
	Partition int32
	Offset    int64
}

// chaosProducer produces sequence-numbered records in the background and
// remembers the acknowledged ones.
type chaosProducer struct {
	cl     *kgo.Client
	prefix string
	slow   *slowProduceRequests
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	acked  map[string]chaosAck
	failed map[string]int // error text -> records that failed with it
	sent   int
	// The longest time without any acknowledgement, and when it ended:
	// how long the chaos kept the producer from making progress.
	lastAck, gapEnd time.Time
	maxGap          time.Duration
	maxLatency      time.Duration
	slowest         string // the record that took maxLatency
	// ackedSeconds holds, per partition, the Unix seconds in which a
	// record of it was acknowledged: the chaos run's availability.
	ackedSeconds map[int32]map[int64]bool
}

// chaosAcksAllOpts are the producer settings of the chaos tests: acks=all
// and idempotence (kgo's defaults, spelled out so a default change cannot
// weaken the tests), a delivery timeout long enough to ride out a session
// timeout plus an election, and metadata refreshed as soon as a leader
// moves, so records keep arriving at the brokers through every transition.
func chaosAcksAllOpts(topic string) []kgo.Opt {
	return []kgo.Opt{
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(45 * time.Second),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}
}

// startChaosProducer spreads records over partitions 0..partitions-1
// with at most 100 in flight per partition, so a partition that is stuck
// in an election does not hold back the others.
func startChaosProducer(t *testing.T, seeds []string, prefix string, partitions int32, opts ...kgo.Opt) *chaosProducer {
	t.Helper()
	slow := &slowProduceRequests{}
	p := &chaosProducer{
		cl:     newClient(t, seeds, append(opts, kgo.WithHooks(slow))...),
		prefix: prefix,
		slow:   slow,
		done:   make(chan struct{}),
		acked:  map[string]chaosAck{},
		failed: map[string]int{},

		ackedSeconds: map[int32]map[int64]bool{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	sems := make([]chan struct{}, partitions)
	for i := range sems {
		sems[i] = make(chan struct{}, 100)
	}
	go func() {
		defer close(p.done)
		for seq, part := 0, int32(0); ; part = (part + 1) % partitions {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond / time.Duration(partitions)):
			}
			sem := sems[part]
			select {
			case sem <- struct{}{}:
			default:
				continue // this partition is stuck; feed the others
			}
			p.mu.Lock()
			p.sent++
			p.mu.Unlock()
			r := &kgo.Record{Partition: part, Value: fmt.Appendf(nil, "%s-%08d", prefix, seq)}
			seq++
			sentAt := time.Now()
			p.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
				<-sem
				now := time.Now()
				p.mu.Lock()
				defer p.mu.Unlock()
				if d := now.Sub(sentAt); d > p.maxLatency {
					p.maxLatency = d
					p.slowest = fmt.Sprintf("%s to partition %d, produced %s, offset %d, err %v",
						r.Value, r.Partition, sentAt.Format("15:04:05.000"), r.Offset, err)
				}
				if err != nil {
					p.failed[err.Error()]++
					return
				}
				p.acked[string(r.Value)] = chaosAck{r.Partition, r.Offset}
				if p.ackedSeconds[r.Partition] == nil {
					p.ackedSeconds[r.Partition] = map[int64]bool{}
				}
				p.ackedSeconds[r.Partition][now.Unix()] = true
				if !p.lastAck.IsZero() && now.Sub(p.lastAck) > p.maxGap {
					p.maxGap, p.gapEnd = now.Sub(p.lastAck), now
				}
				p.lastAck = now
			})
		}
	}()
	return p
}

// seconds is the per-partition acknowledged seconds, for availability.
func (p *chaosProducer) seconds() map[int32]map[int64]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return cloneSeconds(p.ackedSeconds)
}

// cloneSeconds copies per-partition acknowledged seconds.
func cloneSeconds(m map[int32]map[int64]bool) map[int32]map[int64]bool {
	out := make(map[int32]map[int64]bool, len(m))
	for part, s := range m {
		out[part] = maps.Clone(s)
	}
	return out
}

// count is the number of records acknowledged so far.
func (p *chaosProducer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// stop ends production and waits (bounded) for every in-flight record.
func (p *chaosProducer) stop(t *testing.T) map[string]chaosAck {
	t.Helper()
	p.cancel()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("chaos producer loop did not stop")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var texts []string
	for text, n := range p.failed {
		texts = append(texts, fmt.Sprintf("%d× %s", n, text))
	}
	sort.Strings(texts)
	t.Logf("producer %s: %d sent, %d acknowledged; failures: %v; longest record latency %v (%s); longest time without an acknowledgement %v, ended %s",
		p.prefix, p.sent, len(p.acked), texts, p.maxLatency.Round(time.Millisecond), p.slowest, p.maxGap.Round(time.Millisecond), p.gapEnd.Format("15:04:05.000"))
	return maps.Clone(p.acked)
}

// produceChaosSync produces n records valued prefix-seq to partition p
// (the client must use the manual partitioner) and returns where each was
// acknowledged; any failure fails the test.
func produceChaosSync(t *testing.T, cl *kgo.Client, p int32, prefix string, n int) map[string]chaosAck {
	t.Helper()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "%s-%08d", prefix, i)})
	}
	res := cl.ProduceSync(testCtx(t, 60*time.Second), recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
	out := map[string]chaosAck{}
	for _, r := range res {
		out[string(r.Record.Value)] = chaosAck{r.Record.Partition, r.Record.Offset}
	}
	return out
}

// chaosRead is one record as a consumer read it.
type chaosRead struct {
	Partition int32
	Offset    int64
}

// readPartitionsToHW consumes every partition of topic from offset 0 (kgo
// fetches from the current leader) until it reaches the HW that
// ListOffsets latest reports, and returns where each value was read.
func readPartitionsToHW(t *testing.T, c *harness.Cluster, topic string, hw map[int32]int64) map[string][]chaosRead {
	t.Helper()
	start := map[int32]kgo.Offset{}
	for p := range hw {
		start[p] = kgo.NewOffset().At(0)
	}
	cl := newClient(t, c.Addrs(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchMaxWait(500*time.Millisecond))
	next := map[int32]int64{}
	out := map[string][]chaosRead{}
	ctx := testCtx(t, 90*time.Second)
	done := func() bool {
		for p, h := range hw {
			if next[p] < h {
				return false
			}
		}
		return true
	}
	for !done() {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("consume %s: reached %v of HWs %v within 90s", topic, next, hw)
		}
		fs.EachError(func(tp string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Logf("fetch %s/%d: %v", tp, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < next[r.Partition] {
				t.Errorf("partition %d: offset %d read after offset %d (offsets went backwards)", r.Partition, r.Offset, next[r.Partition]-1)
			}
			next[r.Partition] = r.Offset + 1
			out[string(r.Value)] = append(out[string(r.Value)], chaosRead{r.Partition, r.Offset})
		})
	}
	return out
}

// checkAckedExactlyOnce fails for every acknowledged record that is not
// read exactly once at its acknowledged offset, and for any value read
// more than once at all (idempotence forbids duplicates even of records
// whose acknowledgement was lost). It reports a handful of examples and
// the totals, and returns the counts.
func checkAckedExactlyOnce(t *testing.T, what string, acked map[string]chaosAck, read map[string][]chaosRead) (lostN, dupN, movedN int) {
	t.Helper()
	var lost, dup, moved []string
	for v, a := range acked {
		r := read[v]
		switch {
		case len(r) == 0:
			lost = append(lost, fmt.Sprintf("%s acked at %d/%d", v, a.Partition, a.Offset))
		case len(r) > 1:
			dup = append(dup, fmt.Sprintf("%s acked at %d/%d read at %v", v, a.Partition, a.Offset, r))
		case r[0].Partition != a.Partition || r[0].Offset != a.Offset:
			moved = append(moved, fmt.Sprintf("%s acked at %d/%d read at %d/%d", v, a.Partition, a.Offset, r[0].Partition, r[0].Offset))
		}
	}
	var unackedDup []string
	for v, r := range read {
		if _, ok := acked[v]; !ok && len(r) > 1 {
			unackedDup = append(unackedDup, fmt.Sprintf("%s read at %v", v, r))
		}
	}
	for _, l := range [][]string{lost, dup, moved, unackedDup} {
		sort.Strings(l)
	}
	ex := func(l []string) []string { return l[:min(len(l), 5)] }
	if len(lost)+len(dup)+len(moved) > 0 {
		t.Errorf("%s: of %d acknowledged records %d lost %v, %d read more than once %v, %d at another offset %v",
			what, len(acked), len(lost), ex(lost), len(dup), ex(dup), len(moved), ex(moved))
	}
	if len(unackedDup) > 0 {
		t.Errorf("%s: %d unacknowledged values read more than once with an idempotent producer: %v",
			what, len(unackedDup), ex(unackedDup))
	}
	t.Logf("%s: %d acknowledged records checked against %d distinct values read", what, len(acked), len(read))
	return len(lost), len(dup) + len(unackedDup), len(moved)
}

// waitISRSize waits until every partition's state znode has an ISR of n.
func waitISRSize(t *testing.T, conn *zk.Conn, topic string, partitions int32, n int, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, fmt.Sprintf("ISRs of %s reach %d", topic, n), func() error {
		states, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		for p, s := range states {
			if len(s.ISR) != n {
				return fmt.Errorf("partition %d: %+v", p, s)
			}
		}
		return nil
	})
}

// waitLeaderChange waits until partition p has a live leader other than
// old and returns the new state.
func waitLeaderChange(t *testing.T, conn *zk.Conn, topic string, p int32, old int32, timeout time.Duration) partitionState {
	t.Helper()
	var s partitionState
	waitUntil(t, timeout, fmt.Sprintf("partition %d leaves leader %d", p, old), func() error {
		var err error
		if s, err = readState(conn, topic, p); err != nil {
			return err
		}
		if s.Leader < 0 || s.Leader == old {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
	return s
}

// finishChaos is the common ending: wait for a full ISR, read every
// partition to its HW and check the acknowledged records, then stop every
// broker with SIGTERM and compare the replicas' segment files below the
// HW. It returns what it found (the test has failed if any count is not
// zero).
func finishChaos(t *testing.T, c *harness.Cluster, conn *zk.Conn, topic string, partitions int32, acked map[string]chaosAck) chaosVerdict {
	t.Helper()
	waitISRSize(t, conn, topic, partitions, 3, 60*time.Second)
	hw := highWatermarks(t, c, topic)
	t.Logf("HWs after the run: %v; states: %v", hw, mustStates(t, conn, topic, partitions))
	read := readPartitionsToHW(t, c, topic, hw)
	var v chaosVerdict
	v.Lost, v.Duplicates, v.Moved = checkAckedExactlyOnce(t, topic, acked, read)
	stopAll(t, c)
	v.Divergent = compareReplicaLogs(t, c, conn, topic, hw)
	for _, b := range c.Brokers {
		t.Logf("broker %d: %s", b.ID, truncationLines(b.LogPath, topic, 8))
	}
	return v
}

// chaosVerdict counts what a chaos run's checks found: acknowledged
// records lost, values read more than once, acknowledged records read at
// another offset, and partitions whose replicas differ below the HW.
type chaosVerdict struct {
	Lost, Duplicates, Moved, Divergent int
}

// checkpointHW reads a partition's HW from a broker's
// replication-offset-checkpoint; -1 if it has no entry.
func checkpointHW(logDir, topic string, p int32) (int64, error) {
	entries, err := logstore.ReadCheckpoint(filepath.Join(logDir, "replication-offset-checkpoint"))
	if err != nil {
		return -1, err
	}
	for _, e := range entries {
		if e.Topic == topic && e.Partition == p {
			return e.Offset, nil
		}
	}
	return -1, nil
}

// truncationLines returns up to n log lines of a broker that mention
// truncation and the topic: evidence of which rule a replica followed.
func truncationLines(logPath, topic string, n int) string {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		low := strings.ToLower(l)
		if strings.Contains(low, "truncat") && strings.Contains(l, topic) {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = append([]string{"… " + strconv.Itoa(len(out)-n) + " earlier lines"}, out[len(out)-n:]...)
	}
	if len(out) == 0 {
		return "no truncation lines"
	}
	return "truncation lines:\n" + strings.Join(out, "\n")
}

// otherThan lists the brokers of c other than the given ids.
func otherThan(c *harness.Cluster, ids ...int32) []int32 {
	var out []int32
	for _, b := range c.Brokers {
		if !slices.Contains(ids, b.ID) {
			out = append(out, b.ID)
		}
	}
	return out
}

// allSegmentBytes is every .log segment of a partition, in offset order.
func allSegmentBytes(logDir, topic string, p int32) ([]byte, error) {
	segs, err := filepath.Glob(filepath.Join(logDir, fmt.Sprintf("%s-%d", topic, p), "*.log"))
	if err != nil {
		return nil, err
	}
	sort.Strings(segs) // zero-padded base offsets sort as numbers
	var all []byte
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, err
		}
		all = append(all, b...)
	}
	return all, nil
}

// killAndRestart SIGKILLs broker id, waits down (at least) until its
// registration /brokers/ids/<id> has gone with its ZooKeeper session
// (Kafka, and kbroker, refuse to start while the old session still holds
// the node), restarts it and checks it stayed up.
func killAndRestart(t *testing.T, c *harness.Cluster, conn *zk.Conn, id int32, down time.Duration) {
	t.Helper()
	b := c.Broker(id)
	b.Kill()
	killed := time.Now()
	waitUntil(t, sessionTimeout+20*time.Second, fmt.Sprintf("/brokers/ids/%d removed", id), func() error {
		ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", id))
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("/brokers/ids/%d still registered %v after SIGKILL", id, time.Since(killed).Round(time.Millisecond))
		}
		return nil
	})
	time.Sleep(time.Until(killed.Add(down)))
	restartChecked(t, c, conn, id)
}

// restartChecked restarts a stopped broker and fails the test unless the
// process is running and registered afterwards (the harness's readiness
// check also passes once a broker that gave up has exited).
func restartChecked(t *testing.T, c *harness.Cluster, conn *zk.Conn, id int32) {
	t.Helper()
	b := c.Broker(id)
	c.Restart(t, b)
	waitUntil(t, 20*time.Second, fmt.Sprintf("broker %d running and registered after restart", id), func() error {
		if !b.Running() {
			t.Fatalf("broker %d exited after restart", id)
		}
		ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", id))
		if err == nil && !ok {
			err = fmt.Errorf("/brokers/ids/%d absent", id)
		}
		return err
	})
}
