package cluster

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/chaosplan"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestChaosSeeded is `make chaos SEED=n FAULTS=n` (issue 13): ZooKeeper and
// three brokers, each in its own network namespace, an idempotent acks=all
// producer and a consumer group that commits what it processed, and a
// schedule of faults drawn from the seed (compat/chaosplan): process kills,
// pauses and controlled shutdowns, ZooKeeper pauses and restarts, and
// network cuts and loss, one at a time and sometimes two overlapping. Each
// fault is healed before the next starts. Afterwards, Jepsen-style: every
// acknowledged record is read exactly once at the offset it was
// acknowledged at (nothing lost, no duplicates, no offset that changed),
// the replicas are byte-identical below the high watermark, no committed
// group offset moved back, and the share of time writes were refused is
// measured (availabilityStats). A transactional copy loop runs through the
// schedule too (chaosTxnLoop; CHAOS_TXN=0 leaves it out), and its output
// must hold its input exactly once. CHAOS_SEED (default 20261205; `make chaos`
// draws a fresh one), CHAOS_FAULTS (default 20), CHAOS_QUIET (the range of
// quiet gaps before faults, default 1s-3s) and CHAOS_REPORT (a markdown
// file to write) set it up; the same seed and gaps replay the same
// schedule.
// chaosBrokerSettings are the server.properties both targets run with: a
// short replica.lag.time.max.ms, so that a lagging follower leaves the ISR
// within a fault's hold. (A leader-imbalance check every 5 s, to spread
// leadership again after each fault, made the seeded 20-fault run refuse
// more, not less: 21% of partition-seconds against 16%.)
var chaosBrokerSettings = []string{"replica.lag.time.max.ms=5000"}

func TestChaosSeeded(t *testing.T) {
	// A fixed default keeps `make test` repeatable; `make chaos` without
	// SEED draws a fresh one.
	seed := uint64(20261205)
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	faults := 20
	if s := os.Getenv("CHAOS_FAULTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("CHAOS_FAULTS=%q: want a positive number", s)
		}
		faults = v
	}
	const (
		topic      = "chaos"
		partitions = 6
		brokers    = 3
	)
	target := os.Getenv("CHAOS_TARGET")
	start := harness.StartNetCluster
	switch target {
	case "", "kbroker":
		target = "kbroker"
	case "kafka39":
		start = harness.StartNetClusterKafka39
	default:
		t.Fatalf("CHAOS_TARGET=%q: want kbroker or kafka39", target)
	}
	quiet, err := chaosplan.ParseQuiet(os.Getenv("CHAOS_QUIET"))
	if err != nil {
		t.Fatalf("CHAOS_QUIET: %v", err)
	}
	plan := chaosplan.PlanQuiet(seed, faults, brokers, quiet)
	t.Logf("chaos: seed %d, %d faults, quiet gaps %v, target %s:\n%s", seed, faults, quiet, target, chaosplan.Describe(plan))

	nc := start(t, brokers, chaosBrokerSettings...)
	conn := nc.ZK.Connect(t)
	createTopic(t, nc.Cluster, topic, partitions, 3, minISR2)
	waitFullISR(t, conn, topic, partitions, 3)

	p := startChaosProducer(t, nc.Addrs(), "s", partitions, chaosAcksAllOpts(topic)...)
	w := startChaosWriters(t, nc.Addrs(), topic, partitions)
	g := startChaosGroup(t, nc.Addrs(), topic)
	var txn *chaosTxnLoop
	if chaosTxnEnabled() {
		txn = startChaosTxnLoop(t, nc.Cluster, nc.Addrs())
	}
	d := &chaosDriver{t: t, nc: nc, conn: conn, topic: topic, partitions: partitions}
	time.Sleep(2 * time.Second)

	begin := time.Now()
	for i := 0; i < len(plan); i++ {
		f := plan[i]
		time.Sleep(f.Gap)
		first := d.inject(f, 0)
		if i+1 < len(plan) && plan[i+1].Overlaps {
			o := plan[i+1]
			i++
			time.Sleep(min(o.Gap, f.Hold))
			second := d.inject(o, first.broker)
			// Each is healed when its hold ends, the one due first first:
			// a short fault that started second is not held until the
			// first's heal.
			if second.due().Before(first.due()) {
				first, second = second, first
			}
			time.Sleep(time.Until(first.due()))
			d.heal(first)
			time.Sleep(time.Until(second.due()))
			d.heal(second)
		} else {
			time.Sleep(f.Hold)
			d.heal(first)
		}
		d.waitRegistered()
	}
	end := time.Now()
	t.Logf("chaos: %d faults injected in %v", len(plan), end.Sub(begin).Round(time.Second))

	acked := p.stop(t)
	maps.Copy(acked, w.stop())
	g.stop(t)
	waitUntil(t, 90*time.Second, "every ISR full after the schedule", func() error {
		states, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		for part, s := range states {
			if len(s.ISR) != brokers {
				return fmt.Errorf("partition %d: %+v", part, s)
			}
		}
		return nil
	})
	nc.WaitReady(t)
	txnResult := "txn=off"
	if txn != nil {
		copied, problems := txn.finish(t)
		txnResult = fmt.Sprintf("txn-copied=%d txn-problems=%d", copied, len(problems))
	}
	v := finishChaos(t, nc.Cluster, conn, topic, partitions, acked)

	producerSeconds, writerSeconds := p.seconds(), w.seconds()
	avail := availability(producerSeconds, d.spans(), begin, end, partitions)
	fresh := availability(writerSeconds, d.spans(), begin, end, partitions)
	summary := fmt.Sprintf("chaos: seed=%d faults=%d quiet=%v target=%s acked=%d failed=%d lost=%d dup=%d moved=%d divergent=%d offsets-back=%d %s producer %v; fresh writes refused: partition-seconds %.1f%% (%.1f%% with at most one broker faulty) duration=%v",
		seed, len(plan), quiet, target, len(acked), p.failures(), v.Lost, v.Duplicates, v.Moved, v.Divergent, len(g.movedBack),
		txnResult, avail, 100*fresh.partitionRefused, 100*fresh.partitionRefusedSingle, end.Sub(begin).Round(time.Second))
	t.Log(summary)
	fmt.Println(summary)
	for _, m := range g.movedBack {
		t.Errorf("committed offset moved back: %s", m)
	}
	if path := os.Getenv("CHAOS_REPORT"); path != "" {
		report := chaosReport(seed, quiet, target, plan, d.log, summary,
			faultCosts(producerSeconds, d.log, end, partitions), faultCosts(writerSeconds, d.log, end, partitions), p.slow, end)
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Errorf("CHAOS_REPORT: %v", err)
		}
	}
}

// chaosDriver injects and heals the faults of a schedule.
type chaosDriver struct {
	t          *testing.T
	nc         *harness.NetCluster
	conn       *zk.Conn
	topic      string
	partitions int32

	mu  sync.Mutex
	log []injected
}

// injected is one fault as it happened.
type injected struct {
	fault      chaosplan.Fault
	broker     int32 // 0: ZooKeeper
	start, end time.Time
	heal       func()
	// leaders of the topic's partitions when the fault started (-1:
	// unknown).
	leaders []int32
}

// due is when the fault's hold ends.
func (in injected) due() time.Time { return in.start.Add(in.fault.Hold) }

// resolve names the broker a fault hits now, other than avoid.
func (d *chaosDriver) resolve(f chaosplan.Fault, avoid int32) int32 {
	var id int32
	switch f.Target {
	case chaosplan.Controller:
		id, _ = controllerID(d.conn)
	case chaosplan.Leader:
		if s, err := readState(d.conn, d.topic, 0); err == nil {
			id = s.Leader
		}
	case chaosplan.AnyBroker:
		id = f.Broker
	}
	if id < 1 || id > int32(len(d.nc.Brokers)) {
		id = f.Broker
	}
	if id < 1 {
		id = 1
	}
	for id == avoid {
		id = id%int32(len(d.nc.Brokers)) + 1
	}
	return id
}

// inject starts fault f (on a broker other than avoid) and returns how to
// heal it.
func (d *chaosDriver) inject(f chaosplan.Fault, avoid int32) injected {
	t := d.t
	t.Helper()
	in := injected{fault: f, start: time.Now(), leaders: d.leaders()}
	if f.Target == chaosplan.ZooKeeper {
		switch f.Kind {
		case chaosplan.ZKPause:
			if err := d.nc.ZK.Signal(syscall.SIGSTOP); err != nil {
				t.Fatalf("fault %v: %v", f, err)
			}
			in.heal = func() {
				if err := d.nc.ZK.Signal(syscall.SIGCONT); err != nil {
					t.Fatalf("heal %v: %v", f, err)
				}
			}
		case chaosplan.ZKRestart:
			if err := d.nc.ZK.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("fault %v: %v", f, err)
			}
			in.heal = func() { d.nc.ZK.Start(t) }
		}
		t.Logf("chaos: %s: %s", in.start.Format("15:04:05.000"), f)
		d.record(in)
		return in
	}
	id := d.resolve(f, avoid)
	in.broker = id
	b := d.nc.Broker(id)
	node := harness.NetNode(id)
	others := func() []harness.NetNode {
		var out []harness.NetNode
		for _, o := range d.nc.Brokers {
			if o.ID != id {
				out = append(out, harness.NetNode(o.ID))
			}
		}
		return out
	}
	healAll := func(fs ...*harness.NetFault) func() {
		return func() {
			for _, nf := range fs {
				nf.Heal()
			}
		}
	}
	switch f.Kind {
	case chaosplan.KillRestart:
		b.Kill()
		in.heal = func() { d.restart(id) }
	case chaosplan.TermRestart:
		// The controlled shutdown runs on while the schedule goes on: a
		// fault overlapping this one must be healed on time, not when
		// this broker has finished stopping. The restart waits for it.
		exited := make(chan error, 1)
		go func() { exited <- b.Term() }()
		in.heal = func() {
			if err := <-exited; err != nil {
				t.Logf("chaos: SIGTERM of broker %d: %v", id, err)
			}
			d.restart(id)
		}
	case chaosplan.PauseResume:
		if err := b.Pause(); err != nil {
			t.Fatalf("fault %v: %v", f, err)
		}
		in.heal = func() {
			if err := b.Resume(); err != nil {
				t.Fatalf("heal %v: %v", f, err)
			}
		}
	case chaosplan.NetIsolate:
		in.heal = healAll(d.nc.Isolate(node))
	case chaosplan.NetCutZK:
		in.heal = healAll(d.nc.Cut(node, harness.NodeZK))
	case chaosplan.NetCutClient:
		in.heal = healAll(d.nc.Cut(harness.NodeClient, node))
	case chaosplan.NetCutPeers:
		var fs []*harness.NetFault
		for _, o := range others() {
			fs = append(fs, d.nc.Cut(node, o))
		}
		in.heal = healAll(fs...)
	case chaosplan.NetLossy:
		var fs []*harness.NetFault
		for _, o := range others() {
			fs = append(fs, d.nc.Loss(node, o, 0.2))
		}
		in.heal = healAll(fs...)
	default:
		t.Fatalf("fault kind %q unknown to the driver", f.Kind)
	}
	t.Logf("chaos: %s: %s on broker %d", in.start.Format("15:04:05.000"), f, id)
	d.record(in)
	return in
}

// leaders reads who leads each partition, from the state znodes.
func (d *chaosDriver) leaders() []int32 {
	out := make([]int32, d.partitions)
	for p := range d.partitions {
		out[p] = -1
		if s, err := readState(d.conn, d.topic, p); err == nil {
			out[p] = s.Leader
		}
	}
	return out
}

func (d *chaosDriver) record(in injected) {
	d.mu.Lock()
	d.log = append(d.log, in)
	d.mu.Unlock()
}

// heal ends a fault and notes when.
func (d *chaosDriver) heal(in injected) {
	d.t.Helper()
	in.heal()
	now := time.Now()
	d.mu.Lock()
	for i := range d.log {
		if d.log[i].fault.Index == in.fault.Index {
			d.log[i].end = now
		}
	}
	d.mu.Unlock()
	d.t.Logf("chaos: %s: healed #%d", now.Format("15:04:05.000"), in.fault.Index)
}

// restart starts a broker the schedule stopped, and waits until it
// serves; a broker that exited on its own meanwhile (it should not) fails
// the run. It does not wait for the cluster to list it: an overlapping
// fault may still hold another broker away from ZooKeeper, and the heal of
// that fault comes after this one's (waitRegistered waits for the whole
// cluster once both are healed).
func (d *chaosDriver) restart(id int32) {
	d.t.Helper()
	b := d.nc.Broker(id)
	if b.Running() {
		d.t.Fatalf("broker %d still running when its restart was due", id)
	}
	b.Restart(d.t)
}

// waitRegistered waits (bounded) until every broker is running, registered
// again and listed by every other, and every ISR is full, so that the next
// fault starts from a whole cluster: a fault that lands while a returning
// broker is still catching up is two faults at once. The wait is part of
// the run's time, and of the refused seconds the fault before it owns.
func (d *chaosDriver) waitRegistered() {
	d.t.Helper()
	waitUntil(d.t, 60*time.Second, "every broker running and registered", func() error {
		for _, b := range d.nc.Brokers {
			if !b.Running() {
				d.t.Fatalf("broker %d is not running", b.ID)
			}
			ok, _, err := d.conn.Exists(fmt.Sprintf("/brokers/ids/%d", b.ID))
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("/brokers/ids/%d absent", b.ID)
			}
		}
		return nil
	})
	d.nc.WaitReady(d.t)
	deadline := time.Now().Add(60 * time.Second)
	for {
		states, err := readStates(d.conn, d.topic, d.partitions)
		short := err
		for part, s := range states {
			if short == nil && len(s.ISR) < len(d.nc.Brokers) {
				short = fmt.Errorf("partition %d: %+v", part, s)
			}
		}
		if short == nil {
			return
		}
		if time.Now().After(deadline) {
			// Stuck: the brokers' goroutines go to their logs.
			for _, b := range d.nc.Brokers {
				b.DumpGoroutines()
			}
			d.t.Fatalf("ISRs not full within 60s of the heal: %v", short)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// faultSpan is a time during which some brokers were faulty (all of them
// for a ZooKeeper fault).
type faultSpan struct {
	from, to time.Time
	brokers  []int32
}

func (d *chaosDriver) spans() []faultSpan {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []faultSpan
	for _, in := range d.log {
		s := faultSpan{from: in.start, to: in.end}
		if in.broker == 0 {
			for _, b := range d.nc.Brokers {
				s.brokers = append(s.brokers, b.ID)
			}
		} else {
			s.brokers = []int32{in.broker}
		}
		out = append(out, s)
	}
	return out
}

// availabilityStats is the share of one-second windows in which writes
// were refused, counted two ways: per partition (a window of a partition
// without an acknowledgement of it: a producer writing to that partition
// only was refused), and for the cluster (a window without any
// acknowledgement at all). Each is given over the whole run and over the
// seconds when at most one broker was faulty (a ZooKeeper fault counts as
// every broker faulty).
type availabilityStats struct {
	partitionRefused, partitionRefusedSingle float64
	clusterRefused, clusterRefusedSingle     float64
	seconds, singleSeconds                   int
}

func availability(ackedSeconds map[int32]map[int64]bool, spans []faultSpan, begin, end time.Time, partitions int32) availabilityStats {
	var a availabilityStats
	var partWindows, partRefused, partSingle, partRefusedSingle, clusterRefused, clusterRefusedSingle int
	for sec := begin.Unix() + 1; sec < end.Unix(); sec++ {
		faulty := map[int32]bool{}
		from, to := time.Unix(sec, 0), time.Unix(sec+1, 0)
		for _, s := range spans {
			if s.from.Before(to) && (s.to.IsZero() || s.to.After(from)) {
				for _, b := range s.brokers {
					faulty[b] = true
				}
			}
		}
		single := len(faulty) <= 1
		a.seconds++
		if single {
			a.singleSeconds++
		}
		someAcked := false
		for part := range partitions {
			ok := ackedSeconds[part][sec]
			someAcked = someAcked || ok
			partWindows++
			if !ok {
				partRefused++
			}
			if single {
				partSingle++
				if !ok {
					partRefusedSingle++
				}
			}
		}
		if !someAcked {
			clusterRefused++
			if single {
				clusterRefusedSingle++
			}
		}
	}
	ratio := func(n, d int) float64 {
		if d == 0 {
			return 0
		}
		return float64(n) / float64(d)
	}
	a.partitionRefused = ratio(partRefused, partWindows)
	a.partitionRefusedSingle = ratio(partRefusedSingle, partSingle)
	a.clusterRefused = ratio(clusterRefused, a.seconds)
	a.clusterRefusedSingle = ratio(clusterRefusedSingle, a.singleSeconds)
	return a
}

// faultCost is what one fault cost: the seconds it owns (from its start
// to the next fault's start: its hold, its heal, the recovery after it and
// the quiet gap) and, per partition, how many of them had no
// acknowledgement.
type faultCost struct {
	seconds int
	refused []int // by partition
}

func (c faultCost) total() int {
	n := 0
	for _, r := range c.refused {
		n += r
	}
	return n
}

func faultCosts(ackedSeconds map[int32]map[int64]bool, log []injected, end time.Time, partitions int32) []faultCost {
	out := make([]faultCost, len(log))
	for i, in := range log {
		until := ownedUntil(log, i, end)
		c := faultCost{refused: make([]int, partitions)}
		for sec := in.start.Unix() + 1; sec < until.Unix(); sec++ {
			c.seconds++
			for part := range partitions {
				if !ackedSeconds[part][sec] {
					c.refused[part]++
				}
			}
		}
		out[i] = c
	}
	return out
}

// ownedUntil is when the seconds fault i owns end: at the next fault's
// start, or at the end of the schedule for the last.
func ownedUntil(log []injected, i int, end time.Time) time.Time {
	if i+1 < len(log) {
		return log[i+1].start
	}
	return end
}

// kindCost sums the faults of one kind, in partition-seconds.
type kindCost struct {
	faults           int
	seconds, refused int
}

func costsByKind(log []injected, costs []faultCost) map[chaosplan.Kind]*kindCost {
	out := map[chaosplan.Kind]*kindCost{}
	for i, in := range log {
		k := out[in.fault.Kind]
		if k == nil {
			k = &kindCost{}
			out[in.fault.Kind] = k
		}
		k.faults++
		k.seconds += costs[i].seconds * len(costs[i].refused)
		k.refused += costs[i].total()
	}
	return out
}

func (a availabilityStats) String() string {
	return fmt.Sprintf("refused: partition-seconds %.1f%% (%.1f%% with at most one broker faulty), cluster-seconds %.1f%% (%.1f%%) over %d s (%d s with at most one broker faulty)",
		100*a.partitionRefused, 100*a.partitionRefusedSingle, 100*a.clusterRefused, 100*a.clusterRefusedSingle, a.seconds, a.singleSeconds)
}

// chaosGroup consumes the topic in a consumer group, committing after
// processing, while a monitor reads the group's committed offsets every
// second and notes any that moved back.
type chaosGroup struct {
	cancel    context.CancelFunc
	done      sync.WaitGroup
	mu        sync.Mutex
	movedBack []string
	consumed  int
}

func startChaosGroup(t *testing.T, seeds []string, topic string) *chaosGroup {
	t.Helper()
	const group = "chaos-group"
	g := &chaosGroup{}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	cl := newClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(500*time.Millisecond))
	admin := kadm.NewClient(newClient(t, seeds))
	g.done.Add(2)
	go func() {
		defer g.done.Done()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			n := 0
			fs.EachRecord(func(*kgo.Record) { n++ })
			g.mu.Lock()
			g.consumed += n
			g.mu.Unlock()
			cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
			_ = cl.CommitUncommittedOffsets(cctx)
			ccancel()
		}
	}()
	go func() {
		defer g.done.Done()
		seen := map[int32]int64{}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
			offsets, err := admin.FetchOffsets(fctx, group)
			fcancel()
			if err != nil {
				continue
			}
			offsets.Each(func(o kadm.OffsetResponse) {
				if o.Err != nil || o.Topic != topic {
					return
				}
				if prev, ok := seen[o.Partition]; ok && o.At < prev {
					g.mu.Lock()
					g.movedBack = append(g.movedBack, fmt.Sprintf("partition %d: %d after %d", o.Partition, o.At, prev))
					g.mu.Unlock()
				}
				seen[o.Partition] = max(seen[o.Partition], o.At)
			})
		}
	}()
	return g
}

func (g *chaosGroup) stop(t *testing.T) {
	t.Helper()
	g.cancel()
	done := make(chan struct{})
	go func() { g.done.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("chaos consumer group did not stop")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	t.Logf("chaos group: %d records consumed and committed; %d committed offsets moved back", g.consumed, len(g.movedBack))
}

// chaosReport is the markdown report of a run.
func chaosReport(seed uint64, quiet chaosplan.Quiet, target string, plan []chaosplan.Fault, log []injected, summary string, costs, fresh []faultCost, slow *slowProduceRequests, end time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Chaos run, seed %d, %s\n\n", seed, target)
	txn := ""
	if !chaosTxnEnabled() {
		txn = " TXN=0"
	}
	fmt.Fprintf(&b, "`make chaos SEED=%d FAULTS=%d QUIET=%v TARGET=%s%s` replays this schedule and workload.\n\n", seed, len(plan), quiet, target, txn)
	fmt.Fprintf(&b, "```\n%s\n```\n\n", summary)
	b.WriteString("\"Refused\" counts partition-seconds without an acknowledgement: of the workload's idempotent producer, and of fresh writes (one record at a time per partition, each given up after 2 s; compat/cluster/chaos_writers_test.go), which tell whether the cluster took writes while the producer waited on a request sent to a broker that stopped answering.\n\n")
	b.WriteString("Refused partition-seconds by the kind of the latest fault to start (its hold, heal, recovery and the gap after it):\n\n")
	b.WriteString("| fault | count | partition-seconds | producer refused | fresh writes refused |\n|---|---|---|---|---|\n")
	byKind := costsByKind(log, costs)
	freshByKind := costsByKind(log, fresh)
	kinds := make([]chaosplan.Kind, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		c, f := byKind[k], freshByKind[k]
		share := func(c *kindCost) float64 {
			if c.seconds == 0 {
				return 0
			}
			return 100 * float64(c.refused) / float64(c.seconds)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f%% | %.1f%% |\n", k, c.faults, c.seconds, share(c), share(f))
	}
	b.WriteString("\nEach fault, with the seconds it owns and the seconds without an acknowledgement, by partition, and the producer's longest produce request made in those seconds (the broker it waited on, how long, and the error that ended it, if one did; \"-\" when none took a second):\n\n")
	b.WriteString("| # | fault | target | broker | start | held | leaders at start | seconds | producer refused by partition | fresh writes refused by partition | producer's longest request |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, in := range log {
		target := "ZooKeeper"
		if in.broker != 0 {
			target = strconv.Itoa(int(in.broker))
		}
		held := "-"
		if !in.end.IsZero() {
			held = in.end.Sub(in.start).Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %v | %d | %v | %v | %s |\n", in.fault.Index, in.fault.Kind, in.fault.Target, target,
			in.start.UTC().Format("15:04:05.000"), held, in.leaders, costs[i].seconds, costs[i].refused, fresh[i].refused, slow.longestBetween(in.start, ownedUntil(log, i, end)))
	}
	return b.String()
}
