package cluster

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/kbroker/kbroker/zkbroker"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Issue 13, ZooKeeper trouble: ZooKeeper and three brokers, rf 3,
// min.insync.replicas 2, an idempotent acks=all producer throughout
// (startChaosProducer). Each test takes ZooKeeper away in one way —
// paused past the session timeout, killed and restarted, or one broker's
// session ended under it — and checks three things:
//
//   - what clients are told while it lasts: a prober sends single-record
//     acks=all Produce requests, no retries, to each partition's leader
//     and tallies the answers by phase. Only acknowledgements and
//     answers a Kafka client retries are allowed;
//   - that the metadata stays sane throughout: a monitor reads every
//     partition's state znode and fails on a leader outside its ISR, an
//     ISR outside the replicas, a leader epoch or zkVersion going back, or
//     two leaders in one epoch; and the controller epoch moves exactly as
//     often as a controller had to be elected;
//   - recovery: brokers registered again, every ISR full, writes
//     accepted, and (finishChaos) every acknowledged record, the
//     producer's and the prober's, read exactly once at its offset, with
//     replicas byte-identical below the HW.

// zkFaultPartitions is the topic's partition count: three, so each broker
// leads one.
const zkFaultPartitions = 3

// leaderProber follows every partition's leader, as Metadata names it,
// and sends it a netProbes probe (one record, acks=all, no retries) every
// 250 ms in the background, tallying the answers by phase. Only
// acknowledgements and retriableDuringFault are answers a client may get
// here: every broker stays up through these faults, so even no answer in
// time is a failure.
type leaderProber struct {
	c      *harness.Cluster
	probes *netProbes
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	phase  string
	phases []string                  // in the order they began
	seen   map[string]map[string]int // phase -> answer -> count
	bad    []string                  // answers no client should get
	// phaseAcked counts acknowledgements per phase and partition.
	phaseAcked map[string]map[int32]int
	leaders    map[int32]string // partition -> leader address; "" to look up
}

func startLeaderProber(t *testing.T, c *harness.Cluster, topic string) *leaderProber {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	lp := &leaderProber{
		c: c, probes: newNetProbes(topic), cancel: cancel, done: make(chan struct{}),
		seen: map[string]map[string]int{}, phaseAcked: map[string]map[int32]int{},
		leaders: map[int32]string{},
	}
	lp.setPhase("before")
	go func() {
		defer close(lp.done)
		for ctx.Err() == nil {
			for p := range int32(zkFaultPartitions) {
				lp.probe(ctx, p)
			}
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(lp.stop)
	return lp
}

// setPhase labels the answers from now on.
func (lp *leaderProber) setPhase(name string) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.phase = name
	lp.phases = append(lp.phases, name)
	lp.seen[name] = map[string]int{}
	lp.phaseAcked[name] = map[int32]int{}
}

func (lp *leaderProber) probe(ctx context.Context, p int32) {
	addr := lp.leader(ctx, p)
	if addr == "" {
		lp.record(p, "", "no leader in Metadata", false)
		return
	}
	r := lp.probes.send(addr, p)
	if ctx.Err() != nil {
		return // stopped mid-probe: not the broker's doing
	}
	ok := r.err == nil && (r.code == 0 || slices.Contains(retriableDuringFault, r.code))
	if r.err != nil || r.code == kerr.NotLeaderForPartition.Code {
		lp.forget(p)
	}
	lp.mu.Lock()
	if r.err == nil && r.code == 0 {
		lp.phaseAcked[lp.phase][p]++
	}
	lp.mu.Unlock()
	lp.record(p, addr, r.String(), ok)
}

// leader returns partition p's leader address, asking a running broker's
// Metadata when it is not known.
func (lp *leaderProber) leader(ctx context.Context, p int32) string {
	lp.mu.Lock()
	addr := lp.leaders[p]
	lp.mu.Unlock()
	if addr != "" {
		return addr
	}
	for _, b := range lp.c.Brokers {
		if !b.Running() {
			continue
		}
		mctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		resp, err := harness.MetadataFrom(mctx, b.Addr, lp.probes.topic)
		cancel()
		if err != nil || len(resp.Topics) != 1 {
			continue
		}
		byID := map[int32]string{}
		for _, rb := range resp.Brokers {
			byID[rb.NodeID] = net.JoinHostPort(rb.Host, strconv.Itoa(int(rb.Port)))
		}
		lp.mu.Lock()
		for _, mp := range resp.Topics[0].Partitions {
			lp.leaders[mp.Partition] = byID[mp.Leader]
		}
		addr = lp.leaders[p]
		lp.mu.Unlock()
		if addr != "" {
			return addr
		}
	}
	return ""
}

func (lp *leaderProber) forget(p int32) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.leaders[p] = ""
}

func (lp *leaderProber) record(p int32, addr, answer string, ok bool) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.seen[lp.phase][answer]++
	if !ok {
		lp.bad = append(lp.bad, fmt.Sprintf("%s: partition %d at %s: %s", lp.phase, p, addr, answer))
	}
}

// ackedPartitions is how many partitions had a probe acknowledged in
// the phase.
func (lp *leaderProber) ackedPartitions(phase string) int {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return len(lp.phaseAcked[phase])
}

// answers is the tally of one phase.
func (lp *leaderProber) answers(phase string) map[string]int {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return maps.Clone(lp.seen[phase])
}

func (lp *leaderProber) stop() {
	lp.cancel()
	<-lp.done
}

// finish stops probing, logs the tally per phase, fails the test for any
// answer a client would not retry, and returns acked plus the probes'
// acknowledged records.
func (lp *leaderProber) finish(t *testing.T, acked map[string]chaosAck) map[string]chaosAck {
	t.Helper()
	lp.stop()
	lp.mu.Lock()
	defer lp.mu.Unlock()
	for _, ph := range lp.phases {
		t.Logf("probes while %s: %v", ph, lp.seen[ph])
	}
	if len(lp.bad) > 0 {
		t.Errorf("%d probe answers a client does not retry, or none in time, e.g. %v", len(lp.bad), lp.bad[:min(5, len(lp.bad))])
	}
	return lp.probes.merged(maps.Clone(acked))
}

// stateMonitor reads every partition's state znode every 100 ms and
// records any state that breaks the partition state machine's rules.
type stateMonitor struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	last       map[int32]partitionState
	leaderAt   map[int32]map[int32]int32 // partition -> leader epoch -> leader
	samples    int
	violations []string
}

func startStateMonitor(t *testing.T, conn *zk.Conn, topic string, partitions int32) *stateMonitor {
	t.Helper()
	assignment, err := topicAssignment(conn, topic)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &stateMonitor{cancel: cancel, done: make(chan struct{}),
		last: map[int32]partitionState{}, leaderAt: map[int32]map[int32]int32{}}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			// Reads block while ZooKeeper is away and fail when the
			// monitor's own session expires; both just skip a sample.
			if states, err := readStates(conn, topic, partitions); err == nil && ctx.Err() == nil {
				m.check(states, assignment)
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { m.stop() })
	return m
}

func (m *stateMonitor) check(states map[int32]partitionState, assignment map[int32][]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples++
	bad := func(p int32, s partitionState, format string, args ...any) {
		m.violations = append(m.violations, fmt.Sprintf("partition %d %+v: %s", p, s, fmt.Sprintf(format, args...)))
	}
	for p, s := range states {
		if s.Leader >= 0 && !slices.Contains(s.ISR, s.Leader) {
			bad(p, s, "leader not in the ISR")
		}
		if s.Leader < 0 {
			bad(p, s, "no leader with every replica alive")
		}
		for _, r := range s.ISR {
			if !slices.Contains(assignment[p], r) {
				bad(p, s, "ISR member %d is no replica (%v)", r, assignment[p])
			}
		}
		if prev, ok := m.last[p]; ok {
			if s.LeaderEpoch < prev.LeaderEpoch {
				bad(p, s, "leader epoch went back from %d", prev.LeaderEpoch)
			}
			if s.ZkVersion < prev.ZkVersion {
				bad(p, s, "zkVersion went back from %d", prev.ZkVersion)
			}
			if s.ControllerEpoch < prev.ControllerEpoch {
				bad(p, s, "controller epoch went back from %d", prev.ControllerEpoch)
			}
		}
		if m.leaderAt[p] == nil {
			m.leaderAt[p] = map[int32]int32{}
		}
		if l, ok := m.leaderAt[p][s.LeaderEpoch]; ok && l != s.Leader {
			bad(p, s, "leader epoch %d had leader %d before", s.LeaderEpoch, l)
		}
		m.leaderAt[p][s.LeaderEpoch] = s.Leader
		m.last[p] = s
	}
}

func (m *stateMonitor) stop() {
	m.cancel()
	<-m.done
}

// finish stops the monitor and fails the test for every violation seen.
func (m *stateMonitor) finish(t *testing.T) {
	t.Helper()
	m.stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	t.Logf("state monitor: %d samples, leader epochs seen per partition %v", m.samples, m.epochsSeen())
	if m.samples == 0 {
		t.Errorf("state monitor read no state at all")
	}
	for _, v := range m.violations[:min(10, len(m.violations))] {
		t.Errorf("partition state: %s", v)
	}
}

func (m *stateMonitor) epochsSeen() map[int32]string {
	out := map[int32]string{}
	for p, byEpoch := range m.leaderAt {
		var epochs []int32
		for e := range byEpoch {
			epochs = append(epochs, e)
		}
		slices.Sort(epochs)
		var parts []string
		for _, e := range epochs {
			parts = append(parts, fmt.Sprintf("%d:%d", e, byEpoch[e]))
		}
		out[p] = strings.Join(parts, " ")
	}
	return out
}

// registrations is the czxid (the broker epoch) of each broker's
// /brokers/ids/<id>, and the session that owns it.
type registration struct {
	Epoch   int64
	Session int64
}

// zkBaseline is what a fault is judged against: the brokers'
// registrations, the controller epoch and the controller.
func zkBaseline(t *testing.T, conn *zk.Conn, c *harness.Cluster) (map[int32]registration, int32, int32) {
	t.Helper()
	regs, err := readRegistrations(conn, c)
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := controllerEpoch(conn)
	if err != nil {
		t.Fatal(err)
	}
	return regs, epoch, waitController(t, conn, 10*time.Second, anyBroker)
}

func readRegistrations(conn *zk.Conn, c *harness.Cluster) (map[int32]registration, error) {
	out := map[int32]registration{}
	for _, b := range c.Brokers {
		ok, st, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", b.ID))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("/brokers/ids/%d absent", b.ID)
		}
		out[b.ID] = registration{st.Czxid, st.EphemeralOwner}
	}
	return out, nil
}

// waitReregistered waits until each of ids is registered under a broker
// epoch other than the one in before.
func waitReregistered(t *testing.T, conn *zk.Conn, c *harness.Cluster, before map[int32]registration, timeout time.Duration, ids ...int32) map[int32]registration {
	t.Helper()
	var now map[int32]registration
	waitUntil(t, timeout, fmt.Sprintf("brokers %v registered again", ids), func() error {
		var err error
		if now, err = readRegistrations(conn, c); err != nil {
			return err
		}
		for _, id := range ids {
			if now[id].Epoch == before[id].Epoch {
				return fmt.Errorf("broker %d still at broker epoch %d", id, now[id].Epoch)
			}
		}
		return nil
	})
	return now
}

// waitAcceptedEverywhere waits until the prober has had a write
// acknowledged on every partition in the current phase.
func waitAcceptedEverywhere(t *testing.T, lp *leaderProber, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, "a probe acknowledged on every partition", func() error {
		lp.mu.Lock()
		defer lp.mu.Unlock()
		for p := range int32(zkFaultPartitions) {
			if lp.phaseAcked[lp.phase][p] == 0 {
				return fmt.Errorf("partition %d: none acknowledged while %s (%v)", p, lp.phase, lp.seen[lp.phase])
			}
		}
		return nil
	})
}

// zkFaultSetup starts the cluster, the topic, the producer, the prober and
// the state monitor, and waits until writes flow.
func zkFaultSetup(t *testing.T, topic string, overrides ...string) (*harness.Cluster, *zk.Conn, *chaosProducer, *leaderProber, *stateMonitor) {
	t.Helper()
	c := harness.StartCluster(t, 3, overrides...)
	conn := c.ZK.Connect(t)
	createTopic(t, c, topic, zkFaultPartitions, 3, minISR2)
	waitFullISR(t, conn, topic, zkFaultPartitions, 3)
	p := startChaosProducer(t, c.Addrs(), "zkf", zkFaultPartitions, chaosAcksAllOpts(topic)...)
	lp := startLeaderProber(t, c, topic)
	m := startStateMonitor(t, conn, topic, zkFaultPartitions)
	waitAcceptedEverywhere(t, lp, 20*time.Second)
	// A quiet second, so the monitor has the state before the fault.
	time.Sleep(time.Second)
	return c, conn, p, lp, m
}

// zkFaultFinish waits for full ISRs and writes accepted on every
// partition, then checks the prober, the monitor and every acknowledged
// record.
func zkFaultFinish(t *testing.T, c *harness.Cluster, conn *zk.Conn, topic string, p *chaosProducer, lp *leaderProber, m *stateMonitor) {
	t.Helper()
	waitISRSize(t, conn, topic, zkFaultPartitions, 3, 30*time.Second)
	lp.setPhase("healed")
	waitAcceptedEverywhere(t, lp, 20*time.Second)
	before := p.count()
	waitUntil(t, 20*time.Second, "producer makes progress after healing", func() error {
		if n := p.count(); n <= before {
			return fmt.Errorf("%d acknowledged, as before", n)
		}
		return nil
	})
	m.finish(t)
	acked := lp.finish(t, p.stop(t))
	// The producer's client retries what the brokers answer during these
	// faults; none of them may surface to the application.
	p.mu.Lock()
	if len(p.failed) > 0 {
		t.Errorf("records failed for the producer: %v", p.failed)
	}
	p.mu.Unlock()
	finishChaos(t, c, conn, topic, zkFaultPartitions, acked)
}

// TestZooKeeperPausedPastSessionTimeout: ZooKeeper's host freezes for
// twice the session timeout (6 s) — the server SIGSTOPped and its clients'
// packets dropped (ZooKeeper.BlockClients says why both) — so when it
// resumes it expires every broker's session at once. The brokers go on
// replicating meanwhile — the data path needs no ZooKeeper — so acks=all
// writes keep being accepted; once it is back, every broker registers
// again with a new broker epoch, exactly one controller is elected, and
// every ISR is full again.
func TestZooKeeperPausedPastSessionTimeout(t *testing.T) {
	const topic = "zk-paused"
	start := time.Now()
	c, conn, p, lp, m := zkFaultSetup(t, topic)
	regs, epoch, ctrl := zkBaseline(t, conn, c)
	t.Logf("before: controller %d epoch %d, registrations %v, states %v", ctrl, epoch, regs, mustStates(t, conn, topic, zkFaultPartitions))

	lp.setPhase("zookeeper paused")
	acksBefore := p.count()
	unblock := c.ZK.BlockClients(t)
	if err := c.ZK.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// A failing test still resumes it, so that the cleanup's TERM works.
	t.Cleanup(func() { _ = c.ZK.Signal(syscall.SIGCONT) })
	time.Sleep(2 * sessionTimeout)
	acksDuring := p.count() - acksBefore
	lp.setPhase("zookeeper resumed")
	if err := c.ZK.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Let the clients through only once the resumed server has expired
	// every session: no ephemeral znode (registrations, /controller) left.
	waitUntil(t, 3*sessionTimeout, "ZooKeeper expires every session", func() error {
		n, err := c.ZK.Ephemerals()
		if err == nil && n != 0 {
			err = fmt.Errorf("%d ephemeral znodes left", n)
		}
		return err
	})
	unblock()
	resumed := time.Now()

	ids := []int32{1, 2, 3}
	now := waitReregistered(t, conn, c, regs, 30*time.Second, ids...)
	newCtrl := waitController(t, conn, 20*time.Second, anyBroker)
	waitISRSize(t, conn, topic, zkFaultPartitions, 3, 30*time.Second)
	t.Logf("after the clients got through again: every broker registered again %v, controller %d, every ISR full %v later",
		now, newCtrl, time.Since(resumed).Round(time.Millisecond))

	paused := lp.answers("zookeeper paused")
	t.Logf("while ZooKeeper was paused: %d records acknowledged to the producer, probes %v", acksDuring, paused)
	if n := lp.ackedPartitions("zookeeper paused"); acksDuring == 0 || n < zkFaultPartitions {
		t.Errorf("writes acknowledged on %d of %d partitions while ZooKeeper was paused (producer %d, probes %v): the data path needs no ZooKeeper",
			n, zkFaultPartitions, acksDuring, paused)
	}

	zkFaultFinishWithEpoch(t, c, conn, topic, p, lp, m, epoch+1)
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}

// zkFaultFinishWithEpoch is zkFaultFinish that first checks, after
// everything healed, that /controller_epoch is want: each controller
// election adds one.
func zkFaultFinishWithEpoch(t *testing.T, c *harness.Cluster, conn *zk.Conn, topic string, p *chaosProducer, lp *leaderProber, m *stateMonitor, want int32) {
	t.Helper()
	checkControllerEpoch(t, conn, want)
	zkFaultFinish(t, c, conn, topic, p, lp, m)
}

// checkControllerEpoch fails the test unless /controller_epoch is want.
func checkControllerEpoch(t *testing.T, conn *zk.Conn, want int32) {
	t.Helper()
	got, err := controllerEpoch(conn)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("/controller_epoch is %d after the fault, want %d (one election per lost controller)", got, want)
	}
}

// TestZooKeeperRestarted: ZooKeeper is SIGKILLed and started again on the
// same port and data dir after longer than the session timeout. Sessions
// are part of ZooKeeper's persisted state and their timeouts start again
// when the server loads them, so every broker's session survives: no
// broker registers again, no controller is elected, and writes are
// accepted throughout.
func TestZooKeeperRestarted(t *testing.T) {
	const topic = "zk-restarted"
	start := time.Now()
	c, conn, p, lp, m := zkFaultSetup(t, topic)
	regs, epoch, ctrl := zkBaseline(t, conn, c)
	t.Logf("before: controller %d epoch %d, registrations %v", ctrl, epoch, regs)

	lp.setPhase("zookeeper down")
	acksBefore := p.count()
	if err := c.ZK.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(sessionTimeout + 2*time.Second)
	acksDuring := p.count() - acksBefore
	lp.setPhase("zookeeper restarted")
	c.ZK.Start(t)
	restarted := time.Now()

	waitUntil(t, 30*time.Second, "every broker's session back", func() error {
		now, err := readRegistrations(conn, c)
		if err != nil {
			return err
		}
		if !maps.Equal(now, regs) {
			return fmt.Errorf("registrations %v, before %v", now, regs)
		}
		return brokersConnected(c, regs)
	})
	t.Logf("every broker reconnected with its session %v after the restart", time.Since(restarted).Round(time.Millisecond))
	if id := waitController(t, conn, 10*time.Second, anyBroker); id != ctrl {
		t.Errorf("controller %d after the restart, %d before", id, ctrl)
	}
	down := lp.answers("zookeeper down")
	t.Logf("while ZooKeeper was down: %d records acknowledged to the producer, probes %v", acksDuring, down)
	if n := lp.ackedPartitions("zookeeper down"); acksDuring == 0 || n < zkFaultPartitions {
		t.Errorf("writes acknowledged on %d of %d partitions while ZooKeeper was down (producer %d, probes %v): the data path needs no ZooKeeper",
			n, zkFaultPartitions, acksDuring, down)
	}
	zkFaultFinishWithEpoch(t, c, conn, topic, p, lp, m, epoch)
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}

// brokersConnected checks with ZooKeeper's `cons` that every broker's
// session has a connection again, not only a registration the server
// restored from disk.
func brokersConnected(c *harness.Cluster, regs map[int32]registration) error {
	out, err := c.ZK.FourLetterWord("cons")
	if err != nil {
		return err
	}
	for id, r := range regs {
		if !strings.Contains(out, fmt.Sprintf("sid=0x%x,", r.Session)) {
			return fmt.Errorf("broker %d's session 0x%x has no connection:\n%s", id, r.Session, out)
		}
	}
	return nil
}

// TestZooKeeperSessionExpiredAlone ends one broker's session under it —
// with the credentials the broker keeps in its log dir, the test resumes
// the session on a connection of its own and closes it, which is what the
// server does when it expires a session — first a partition leader's
// that is not the controller, then the controller's. Each time the broker
// must notice, register again with a new broker epoch, and rejoin every
// ISR; the controller (a new one, if it was the one) treats it as bounced
// and moves its leaderships, and nothing acknowledged is lost.
func TestZooKeeperSessionExpiredAlone(t *testing.T) {
	const topic = "zk-expired"
	start := time.Now()
	c, conn, p, lp, m := zkFaultSetup(t, topic)

	expire := func(t *testing.T, victim int32, wantNewController bool) {
		regs, epoch, ctrl := zkBaseline(t, conn, c)
		before := mustStates(t, conn, topic, zkFaultPartitions)
		led := partitionsLedBy(before, victim)
		t.Logf("before: broker %d (broker epoch %d) leads %v; controller %d epoch %d; states %v",
			victim, regs[victim].Epoch, led, ctrl, epoch, before)

		cred, ok, err := zkbroker.LoadSessionFile(c.Broker(victim).LogDir)
		if err != nil || !ok {
			t.Fatalf("broker %d's session file: ok %v, %v", victim, ok, err)
		}
		if cred.ID != regs[victim].Session {
			t.Fatalf("broker %d's session file names session 0x%x, its registration is owned by 0x%x", victim, cred.ID, regs[victim].Session)
		}
		lp.setPhase(fmt.Sprintf("broker %d's session expired", victim))
		closed, err := zkstore.CloseSession(testCtx(t, 15*time.Second), c.ZK.Addr, cred, sessionTimeout)
		if err != nil || !closed {
			t.Fatalf("closing broker %d's session: closed %v, %v", victim, closed, err)
		}
		expired := time.Now()

		now := waitReregistered(t, conn, c, regs, 20*time.Second, victim)
		for _, id := range otherThan(c, victim) {
			if now[id] != regs[id] {
				t.Errorf("broker %d registered again (%v, before %v): only broker %d's session ended", id, now[id], regs[id], victim)
			}
		}
		if newCtrl := waitController(t, conn, 20*time.Second, anyBroker); !wantNewController && newCtrl != ctrl {
			t.Errorf("controller moved from %d to %d though its session was not touched", ctrl, newCtrl)
		}
		// The controller saw the broker go (or bounce): the partitions it
		// led got new leaders, in a new leader epoch.
		waitUntil(t, 20*time.Second, fmt.Sprintf("partitions %v led by broker %d before get new leader epochs", led, victim), func() error {
			states, err := readStates(conn, topic, zkFaultPartitions)
			if err != nil {
				return err
			}
			for _, part := range led {
				if states[part].LeaderEpoch <= before[part].LeaderEpoch {
					return fmt.Errorf("partition %d: %+v", part, states[part])
				}
			}
			return nil
		})
		waitInEveryISR(t, conn, topic, zkFaultPartitions, victim, 30*time.Second)
		t.Logf("broker %d registered again (broker epoch %d), back in every ISR %v after its session ended; states %v",
			victim, now[victim].Epoch, time.Since(expired).Round(time.Millisecond), mustStates(t, conn, topic, zkFaultPartitions))
		want := epoch
		if wantNewController {
			want++
		}
		checkControllerEpoch(t, conn, want)
		lp.setPhase(fmt.Sprintf("broker %d back", victim))
		waitAcceptedEverywhere(t, lp, 20*time.Second)
	}

	t.Run("leader", func(t *testing.T) {
		ctrl := waitController(t, conn, 10*time.Second, anyBroker)
		expire(t, leaderNotController(t, c, mustStates(t, conn, topic, zkFaultPartitions), ctrl), false)
	})
	t.Run("controller", func(t *testing.T) {
		expire(t, waitController(t, conn, 10*time.Second, anyBroker), true)
	})
	zkFaultFinish(t, c, conn, topic, p, lp, m)
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}
