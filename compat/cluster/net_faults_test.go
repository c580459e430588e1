package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Issue 13, network faults: ZooKeeper and three brokers, each in its own
// network namespace (harness.StartNetCluster), rf 3, min.insync.replicas 2,
// an idempotent acks=all producer in the test process throughout. Each
// test injects one kind of fault with iptables rules in the namespaces'
// switch, checks what clients are told while it lasts (with single acks=all
// Produce requests sent to exactly one broker, no retries: "probes"),
// heals it, and then checks recovery: every ISR full again within a bound,
// every acknowledged record (the producer's and the probes') read exactly
// once at its offset, replicas byte-identical below the HW.
//
// The kernel these run on has no sch_netem: there is no added delay,
// jitter or reordering, only drops (iptables statistic) and rate limits
// (tbf).

// netLagTime is replica.lag.time.max.ms in these tests: how long a
// follower that cannot fetch stays in the ISR.
const netLagTime = 5 * time.Second

// netRecoverBound is how long every ISR may take to be full again after a
// fault is healed: a follower reconnects (TCP retransmission backs off to
// a few seconds after a silent drop), catches up and is added back.
const netRecoverBound = 30 * time.Second

// startNetTopic starts the namespaced cluster and creates topic with the
// given replica assignment (the first replica leads), min.insync.replicas
// 2, returning once every ISR is full.
func startNetTopic(t *testing.T, topic string, assign func(ctrl int32, others []int32) map[int32][]int32) (*harness.NetCluster, *zk.Conn, int32) {
	t.Helper()
	nc := harness.StartNetCluster(t, 3, fmt.Sprintf("replica.lag.time.max.ms=%d", netLagTime.Milliseconds()))
	conn := nc.ZK.Connect(t)
	ctrl := waitController(t, conn, 15*time.Second, anyBroker)
	createTopicAssigned(t, nc.Cluster, topic, assign(ctrl, otherThan(nc.Cluster, ctrl)), minISR2)
	waitFullISR(t, conn, topic, int32(len(assign(ctrl, otherThan(nc.Cluster, ctrl)))), 3)
	return nc, conn, ctrl
}

// retriableDuringFault are the answers a client may get to an acks=all
// write that a broker cannot commit: go elsewhere, or try again.
var retriableDuringFault = []int16{
	kerr.NotLeaderForPartition.Code,
	kerr.RequestTimedOut.Code,
	kerr.NotEnoughReplicas.Code,
	kerr.NotEnoughReplicasAfterAppend.Code,
}

// netProbes sends acks=all Produce requests of one record each to one
// broker, with no retries, and keeps the acknowledged ones so the final
// check covers them too.
type netProbes struct {
	topic string
	mu    sync.Mutex
	seq   int
	acked map[string]chaosAck
}

func newNetProbes(topic string) *netProbes {
	return &netProbes{topic: topic, acked: map[string]chaosAck{}}
}

// probeResult is one probe's outcome: an error code, or err when no
// answer came (cannot connect, or no response in time).
type probeResult struct {
	code int16
	err  error
}

func (r probeResult) String() string {
	if r.err != nil {
		return "no answer: " + r.err.Error()
	}
	if r.code == 0 {
		return "acknowledged"
	}
	return kerr.ErrorForCode(r.code).Error()
}

// send produces one record to partition p at exactly the broker at addr,
// asking the broker to wait at most 2 s for the ISR.
func (np *netProbes) send(addr string, p int32) probeResult {
	np.mu.Lock()
	np.seq++
	value := fmt.Sprintf("probe-%08d", np.seq)
	np.mu.Unlock()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.DialTimeout(2*time.Second))
	if err != nil {
		return probeResult{err: err}
	}
	defer cl.Close()
	req := produceRequest(np.topic, p, encodeBatchNow(-1, -1, -1, sameRecord{value: value}))
	req.Acks = -1
	req.TimeoutMillis = 2000
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return probeResult{err: err}
	}
	pr := resp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		return probeResult{err: fmt.Errorf("produce response with %d topics", len(pr.Topics))}
	}
	part := pr.Topics[0].Partitions[0]
	if part.ErrorCode == 0 {
		np.mu.Lock()
		np.acked[value] = chaosAck{p, part.BaseOffset}
		np.mu.Unlock()
	}
	return probeResult{code: part.ErrorCode}
}

// mustRefuse probes addr for partition p every 300 ms for d and fails the
// test on any acknowledgement or answer outside retriableDuringFault; it
// returns the answers seen.
func (np *netProbes) mustRefuse(t *testing.T, what, addr string, p int32, d time.Duration) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		r := np.send(addr, p)
		seen[r.String()]++
		if r.err == nil && !slices.Contains(retriableDuringFault, r.code) {
			t.Errorf("%s: partition %d at %s answered %v, want one of NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS(_AFTER_APPEND)", what, p, addr, r)
		}
	}
	t.Logf("%s: probes of partition %d at %s: %v", what, p, addr, seen)
	return seen
}

// waitAccepted probes addr for partition p until a write is acknowledged.
func (np *netProbes) waitAccepted(t *testing.T, what, addr string, p int32, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, what, func() error {
		if r := np.send(addr, p); r.err != nil || r.code != 0 {
			return errors.New(r.String())
		}
		return nil
	})
}

// merged is the producer's acknowledged records plus the probes'.
func (np *netProbes) merged(acked map[string]chaosAck) map[string]chaosAck {
	np.mu.Lock()
	defer np.mu.Unlock()
	for v, a := range np.acked {
		acked[v] = a
	}
	return acked
}

// countIn is the number of records acknowledged so far on the given
// partitions.
func (p *chaosProducer) countIn(parts ...int32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.acked {
		if slices.Contains(parts, a.Partition) {
			n++
		}
	}
	return n
}

// failures is the number of records the producer gave up on.
func (p *chaosProducer) failures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.failed {
		n += c
	}
	return n
}

// waitProgress waits until the producer has acknowledged more records on
// parts than before.
func waitProgress(t *testing.T, p *chaosProducer, what string, timeout time.Duration, parts ...int32) {
	t.Helper()
	before := p.countIn(parts...)
	waitUntil(t, timeout, what, func() error {
		if n := p.countIn(parts...); n <= before {
			return fmt.Errorf("%d acknowledged on partitions %v, as before", n, parts)
		}
		return nil
	})
}

// waitMetadataLeader waits until the broker at addr names leader as the
// leader of partition p: it has applied the controller's decision.
func waitMetadataLeader(t *testing.T, addr, topic string, p, leader int32, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, fmt.Sprintf("%s shows leader %d for partition %d", addr, leader, p), func() error {
		v, err := metadataView(addr, topic)
		if err != nil {
			return err
		}
		if v[p].Leader != leader {
			return fmt.Errorf("shows %v", v[p])
		}
		return nil
	})
}

// A partition leader loses ZooKeeper but not the other brokers or the
// clients; later it loses the other brokers too. Once its session has
// expired and the controller has moved leadership, the old leader must not
// acknowledge an acks=all write (its followers now fetch from the new
// leader, and its own ISR change cannot reach ZooKeeper), and after the
// heal it rejoins as a follower and loses nothing acknowledged. Run with
// a leader that is not the controller, and with the controller as the
// leader: then the old controller also keeps reaching the brokers, which
// must ignore it once a new controller (a higher controller epoch) has
// spoken.
func TestNetLeaderCutFromZooKeeper(t *testing.T) {
	t.Run("leader", func(t *testing.T) { testNetLeaderCutFromZooKeeper(t, false) })
	t.Run("controller-leader", func(t *testing.T) { testNetLeaderCutFromZooKeeper(t, true) })
}

func testNetLeaderCutFromZooKeeper(t *testing.T, isController bool) {
	const topic, partitions = "net-leader-zk", 3
	var old int32
	nc, conn, ctrl := startNetTopic(t, topic, func(ctrl int32, others []int32) map[int32][]int32 {
		// One broker leads every partition; a and b follow.
		old = others[0]
		a, b := ctrl, others[1]
		if isController {
			old, a = ctrl, others[0]
		}
		return map[int32][]int32{0: {old, a, b}, 1: {old, b, a}, 2: {old, a, b}}
	})
	probes := newNetProbes(topic)
	p := startChaosProducer(t, nc.Addrs(), "lz", partitions, chaosAcksAllOpts(topic)...)
	time.Sleep(3 * time.Second)
	oldAddr := nc.Broker(old).Addr

	cut := time.Now()
	nc.Cut(harness.NetNode(old), harness.NodeZK)
	next := waitLeaderChange(t, conn, topic, 0, old, sessionTimeout+20*time.Second)
	t.Logf("cut from ZooKeeper: partition 0 moved from %d to %d (epoch %d) after %v", old, next.Leader, next.LeaderEpoch, time.Since(cut).Round(time.Millisecond))
	// The new leader and the other follower act on the controller's
	// LeaderAndIsr; from then on nothing fetches from the old leader.
	for _, id := range otherThan(nc.Cluster, old) {
		waitMetadataLeader(t, nc.Broker(id).Addr, topic, 0, next.Leader, 15*time.Second)
	}
	np := probes.mustRefuse(t, "old leader cut from ZooKeeper", oldAddr, 0, 4*time.Second)
	// Its session timeout after it last heard from ZooKeeper, the old
	// leader suspends its leaderships: it refuses at once and names no
	// leader, so clients ask the other brokers.
	waitUntil(t, sessionTimeout, "the old leader refuses with NOT_LEADER_OR_FOLLOWER and names no leader", func() error {
		if r := probes.send(oldAddr, 0); r.err != nil || r.code != kerr.NotLeaderForPartition.Code {
			return errors.New(r.String())
		}
		v, err := metadataView(oldAddr, topic)
		if err != nil {
			return err
		}
		if v[0].Leader != -1 {
			return fmt.Errorf("its Metadata shows %v", v[0])
		}
		return nil
	})
	waitProgress(t, p, "writes go on at the new leaders", 30*time.Second, 0, 1, 2)
	probes.waitAccepted(t, "the new leader of partition 0 takes writes", nc.Broker(next.Leader).Addr, 0, 10*time.Second)

	// Now the old leader loses the other brokers too: only clients reach
	// it.
	for _, id := range otherThan(nc.Cluster, old) {
		nc.Cut(harness.NetNode(old), harness.NetNode(id))
	}
	for k, v := range probes.mustRefuse(t, "old leader cut from ZooKeeper and brokers", oldAddr, 0, 6*time.Second) {
		np[k] += v
	}
	waitProgress(t, p, "writes go on while the old leader is isolated", 30*time.Second, 0, 1, 2)
	if st := mustStates(t, conn, topic, partitions); st[0].Leader == old {
		t.Errorf("partition 0 back at the isolated broker %d: %+v", old, st[0])
	}
	if ctrlNow, _ := controllerID(conn); ctrlNow == old || ctrlNow < 0 {
		t.Errorf("controller %d while broker %d is isolated", ctrlNow, old)
	}

	healed := time.Now()
	nc.Heal()
	waitISRSize(t, conn, topic, partitions, 3, netRecoverBound)
	t.Logf("every ISR full %v after the heal (controller %d)", time.Since(healed).Round(time.Millisecond), ctrl)
	// The old leader's session ended while it was cut off: nothing it held
	// from before may reach ZooKeeper now (a stale ISR write fails on the
	// zkVersion), so partition 0 stays at the new leader's epoch or later.
	if s := mustStates(t, conn, topic, partitions)[0]; s.Leader == old || s.LeaderEpoch < next.LeaderEpoch {
		t.Errorf("partition 0 after the heal: %+v; elected during the cut: %+v", s, next)
	}
	waitMetadataLeader(t, oldAddr, topic, 0, mustStates(t, conn, topic, partitions)[0].Leader, 15*time.Second)
	waitProgress(t, p, "writes after the heal", 20*time.Second, 0, 1, 2)
	acked := probes.merged(p.stop(t))
	nc.WaitReady(t)
	finishChaos(t, nc.Cluster, conn, topic, partitions, acked)
}

// A broker (not the controller) loses the other brokers but keeps
// ZooKeeper and the clients. The controller stops hearing from it and,
// since the other broker still answers, fences it well before any session
// expires (there is none to expire: ZooKeeper still reaches it): the
// partitions it follows shrink their ISRs to the two connected brokers,
// and the one it led gets a new leader from its ISR, so every partition
// keeps taking writes (min.insync.replicas 2). Kafka instead leaves that
// partition with its cut-off leader alone in the ISR, refusing acks=all
// writes until the heal. The cut-off broker itself never acknowledges an
// acks=all write for it. After the heal every ISR is full again.
func TestNetBrokerCutFromBrokers(t *testing.T) {
	const topic, partitions = "net-broker-cut", 3
	var cutID int32
	nc, conn, _ := startNetTopic(t, topic, func(ctrl int32, others []int32) map[int32][]int32 {
		cutID = others[0]
		return map[int32][]int32{0: {ctrl, others[1], cutID}, 1: {others[1], ctrl, cutID}, 2: {cutID, ctrl, others[1]}}
	})
	probes := newNetProbes(topic)
	p := startChaosProducer(t, nc.Addrs(), "bc", partitions, chaosAcksAllOpts(topic)...)
	time.Sleep(3 * time.Second)

	cut := time.Now()
	for _, id := range otherThan(nc.Cluster, cutID) {
		nc.Cut(harness.NetNode(cutID), harness.NetNode(id))
	}
	waitUntil(t, netLagTime+20*time.Second, fmt.Sprintf("leaders and ISRs without broker %d", cutID), func() error {
		st, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		for part, s := range st {
			if len(s.ISR) != 2 || slices.Contains(s.ISR, cutID) || s.Leader == cutID {
				return fmt.Errorf("partition %d: %+v", part, s)
			}
		}
		return nil
	})
	t.Logf("leaders and ISRs moved off broker %d %v after the cut: %v", cutID, time.Since(cut).Round(time.Millisecond), mustStates(t, conn, topic, partitions))
	if ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", cutID)); err != nil || !ok {
		t.Fatalf("broker %d's registration: exists %v, %v; the move was to come from the controller's probes, not a session expiry", cutID, ok, err)
	}
	waitProgress(t, p, "every partition takes writes with two in sync", 20*time.Second, 0, 1, 2)
	// The cut-off broker still reaches ZooKeeper: it reads there that it
	// was deposed (server/cluster_deposed_leader.go) and sends writers to
	// the new leader instead of holding their writes until they time out.
	waitUntil(t, 5*time.Second, "the cut-off former leader answers NOT_LEADER_OR_FOLLOWER", func() error {
		if r := probes.send(nc.Broker(cutID).Addr, 2); r.err != nil || r.code != kerr.NotLeaderForPartition.Code {
			return errors.New(r.String())
		}
		return nil
	})
	t.Logf("the cut-off former leader answers NOT_LEADER_OR_FOLLOWER %v after the cut", time.Since(cut).Round(time.Millisecond))
	probes.mustRefuse(t, "cut-off former leader", nc.Broker(cutID).Addr, 2, 3*time.Second)

	healed := time.Now()
	nc.Heal()
	waitISRSize(t, conn, topic, partitions, 3, netRecoverBound)
	t.Logf("every ISR full %v after the heal", time.Since(healed).Round(time.Millisecond))
	// The returning broker follows: its former leadership stays where
	// the controller moved it.
	probes.mustRefuse(t, "returned former leader", nc.Broker(cutID).Addr, 2, time.Second)
	probes.waitAccepted(t, "partition 2 takes writes at its leader after the heal", nc.Broker(mustStates(t, conn, topic, partitions)[2].Leader).Addr, 2, 10*time.Second)
	waitProgress(t, p, "partition 2 writes after the heal", 45*time.Second, 2)
	acked := probes.merged(p.stop(t))
	if n := p.failures(); n > 0 {
		t.Errorf("%d records failed although every partition kept or regained a leader within the delivery timeout", n)
	}
	finishChaos(t, nc.Cluster, conn, topic, partitions, acked)
}

// The controller loses the other brokers but keeps ZooKeeper and the
// clients. Its ZooKeeper session never expires, so by Kafka's rules it
// stays controller for the whole cut: the other leaders' ISR shrinks
// (AlterPartition) cannot reach it, and nobody moves the leadership it
// holds, so every partition with it in the ISR refuses acks=all writes
// until the heal. The other brokers, which reach each other, find it
// silent and depose it (zkbroker/node_controller_probe.go); the controller
// elected next fences it, and every partition takes writes from the two
// connected brokers within seconds. The partitions it only follows need
// nothing but an ISR shrink: the new controller's fencing makes it, or
// their leaders write it to ZooKeeper themselves when the controller
// leaves their AlterPartition unanswered for a second
// (server/cluster_controller_client.go), whichever comes first; they take
// writes within a second of the election at the latest. After the heal it
// rejoins as a follower and nothing acknowledged is lost.
func TestNetControllerCutFromBrokers(t *testing.T) {
	const topic, partitions = "net-controller-cut", 3
	nc, conn, ctrl := startNetTopic(t, topic, func(ctrl int32, others []int32) map[int32][]int32 {
		return map[int32][]int32{0: {ctrl, others[0], others[1]}, 1: {others[0], ctrl, others[1]}, 2: {others[1], others[0], ctrl}}
	})
	probes := newNetProbes(topic)
	p := startChaosProducer(t, nc.Addrs(), "cc", partitions, chaosAcksAllOpts(topic)...)
	time.Sleep(3 * time.Second)

	cut := time.Now()
	for _, id := range otherThan(nc.Cluster, ctrl) {
		nc.Cut(harness.NetNode(ctrl), harness.NetNode(id))
	}
	// Watched together from the cut: when another broker becomes
	// controller, and when each partition counts as moved (its leader and
	// ISR leave the cut broker out and its leader acknowledges a fresh
	// write).
	next, nextAt := int32(-1), time.Duration(0)
	moved := map[int32]time.Duration{}
	waitUntil(t, 20*time.Second, fmt.Sprintf("another controller, and every partition takes writes without broker %d", ctrl), func() error {
		if id, err := controllerID(conn); next < 0 && err == nil && id >= 0 && id != ctrl {
			next, nextAt = id, time.Since(cut).Round(time.Millisecond)
		}
		st, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		// Every partition is looked at in each round: one still waiting
		// must not put off noticing another that moved.
		var waiting []error
		for part, s := range st {
			if _, ok := moved[part]; ok {
				continue
			}
			if len(s.ISR) != 2 || slices.Contains(s.ISR, ctrl) || s.Leader == ctrl {
				waiting = append(waiting, fmt.Errorf("partition %d: %+v", part, s))
				continue
			}
			leader := nc.Broker(s.Leader)
			if leader == nil {
				waiting = append(waiting, fmt.Errorf("partition %d: leader %d is none of the brokers: %+v", part, s.Leader, s))
				continue
			}
			if r := probes.send(leader.Addr, part); r.err != nil || r.code != 0 {
				waiting = append(waiting, fmt.Errorf("partition %d at its leader %d: %v", part, s.Leader, r))
				continue
			}
			moved[part] = time.Since(cut).Round(time.Millisecond)
		}
		if next < 0 {
			waiting = append(waiting, fmt.Errorf("/controller still names %d", ctrl))
		}
		return errors.Join(waiting...)
	})
	t.Logf("broker %d controller %v after the cut of controller %d at %s", next, nextAt, ctrl, cut.UTC().Format("15:04:05.000"))
	t.Logf("fresh writes acknowledged without broker %d, by partition, after the cut: %v", ctrl, moved)
	for _, part := range []int32{1, 2} {
		if moved[part] > nextAt+time.Second {
			t.Errorf("partition %d, which the cut controller only followed, took writes %v after the cut, more than a second after another controller was elected (%v)", part, moved[part], nextAt)
		}
	}
	if ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", ctrl)); err != nil || !ok {
		t.Fatalf("broker %d's registration: exists %v, %v; the move was to come from the brokers' probes, not a session expiry", ctrl, ok, err)
	}
	waitProgress(t, p, "every partition takes writes with two in sync", 20*time.Second, 0, 1, 2)
	waitUntil(t, 5*time.Second, "the cut-off former leader answers NOT_LEADER_OR_FOLLOWER", func() error {
		if r := probes.send(nc.Broker(ctrl).Addr, 0); r.err != nil || r.code != kerr.NotLeaderForPartition.Code {
			return errors.New(r.String())
		}
		return nil
	})
	probes.mustRefuse(t, "cut-off former controller", nc.Broker(ctrl).Addr, 0, 3*time.Second)

	healed := time.Now()
	nc.Heal()
	waitISRSize(t, conn, topic, partitions, 3, netRecoverBound)
	t.Logf("every ISR full %v after the heal", time.Since(healed).Round(time.Millisecond))
	waitProgress(t, p, "writes after the heal", 20*time.Second, 0, 1, 2)
	acked := probes.merged(p.stop(t))
	if n := p.failures(); n > 0 {
		t.Errorf("%d records failed although every partition regained a leader within the delivery timeout", n)
	}
	nc.WaitReady(t)
	finishChaos(t, nc.Cluster, conn, topic, partitions, acked)
}

// The test process (the clients) cannot reach one leader, which still
// reaches ZooKeeper and the other brokers: nothing changes in the cluster,
// the other partitions keep taking writes, and the producer holds the
// unreachable leader's records (no answer at all: a silent drop) and
// delivers them once the link heals, without loss or duplicates.
func TestNetClientCutFromLeader(t *testing.T) {
	const topic, partitions = "net-client-cut", 3
	var leader int32
	nc, conn, _ := startNetTopic(t, topic, func(ctrl int32, others []int32) map[int32][]int32 {
		leader = others[0]
		return map[int32][]int32{0: {leader, ctrl, others[1]}, 1: {ctrl, others[1], leader}, 2: {others[1], leader, ctrl}}
	})
	probes := newNetProbes(topic)
	p := startChaosProducer(t, nc.Addrs(), "cc", partitions, chaosAcksAllOpts(topic)...)
	time.Sleep(3 * time.Second)
	before := mustStates(t, conn, topic, partitions)

	fault := nc.Cut(harness.NodeClient, harness.NetNode(leader))
	time.Sleep(time.Second)
	r := probes.send(nc.Broker(leader).Addr, 0)
	if r.err == nil {
		t.Errorf("a client reached broker %d through the cut: %v", leader, r)
	}
	t.Logf("probe of the unreachable leader: %v", r)
	waitProgress(t, p, "partitions 1 and 2 take writes", 20*time.Second, 1, 2)
	time.Sleep(8 * time.Second)
	stalled := p.countIn(0)
	waitProgress(t, p, "partitions 1 and 2 still take writes", 20*time.Second, 1, 2)
	if n := p.countIn(0); n != stalled {
		t.Errorf("partition 0 acknowledged %d records while its leader was unreachable", n-stalled)
	}
	if after := mustStates(t, conn, topic, partitions); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("partition states changed although only a client lost a broker: %v, before %v", after, before)
	}

	healed := time.Now()
	fault.Heal()
	waitProgress(t, p, "partition 0 takes writes after the heal", 30*time.Second, 0)
	t.Logf("partition 0 acknowledged again %v after the heal", time.Since(healed).Round(time.Millisecond))
	probes.waitAccepted(t, "probe of partition 0 after the heal", nc.Broker(leader).Addr, 0, 10*time.Second)
	acked := probes.merged(p.stop(t))
	if n := p.failures(); n > 0 {
		t.Errorf("%d records failed; the cut was shorter than the delivery timeout", n)
	}
	finishChaos(t, nc.Cluster, conn, topic, partitions, acked)
}

// A symmetric partition {controller} | {other brokers, ZooKeeper}, the
// clients reaching both sides; the isolated controller also leads
// partition 0. The majority side elects a new controller and a new leader
// and keeps taking writes; the isolated broker refuses acks=all writes;
// after the heal it rejoins every ISR and there is exactly one controller.
func TestNetSymmetricPartitionHeals(t *testing.T) {
	const topic, partitions = "net-partition", 3
	nc, conn, ctrl := startNetTopic(t, topic, func(ctrl int32, others []int32) map[int32][]int32 {
		return map[int32][]int32{0: {ctrl, others[0], others[1]}, 1: {others[0], others[1], ctrl}, 2: {others[1], ctrl, others[0]}}
	})
	epoch, err := controllerEpoch(conn)
	if err != nil {
		t.Fatal(err)
	}
	probes := newNetProbes(topic)
	p := startChaosProducer(t, nc.Addrs(), "sp", partitions, chaosAcksAllOpts(topic)...)
	time.Sleep(3 * time.Second)
	rest := otherThan(nc.Cluster, ctrl)

	cut := time.Now()
	nc.Partition([]harness.NetNode{harness.NetNode(ctrl)}, []harness.NetNode{harness.NetNode(rest[0]), harness.NetNode(rest[1]), harness.NodeZK})
	newCtrl := waitController(t, conn, sessionTimeout+20*time.Second, func(id int32) bool { return id != ctrl })
	next := waitLeaderChange(t, conn, topic, 0, ctrl, 20*time.Second)
	t.Logf("partition: controller %d -> %d, partition 0 leader %d -> %d after %v", ctrl, newCtrl, ctrl, next.Leader, time.Since(cut).Round(time.Millisecond))
	for _, id := range rest {
		waitMetadataLeader(t, nc.Broker(id).Addr, topic, 0, next.Leader, 15*time.Second)
	}
	probes.mustRefuse(t, "isolated old controller and leader", nc.Broker(ctrl).Addr, 0, 5*time.Second)
	waitProgress(t, p, "partition 0 takes writes at its new leader", 30*time.Second, 0)
	waitProgress(t, p, "partitions 1 and 2 take writes", 20*time.Second, 1, 2)

	healed := time.Now()
	nc.Heal()
	waitISRSize(t, conn, topic, partitions, 3, netRecoverBound)
	t.Logf("every ISR full %v after the heal", time.Since(healed).Round(time.Millisecond))
	if got, _ := controllerID(conn); got != newCtrl {
		t.Errorf("controller %d after the heal, want %d (elected during the partition) to stay", got, newCtrl)
	}
	if e, _ := controllerEpoch(conn); e != epoch+1 {
		t.Errorf("controller epoch %d after one failover, want %d", e, epoch+1)
	}
	waitMetadataLeader(t, nc.Broker(ctrl).Addr, topic, 0, mustStates(t, conn, topic, partitions)[0].Leader, 15*time.Second)
	waitProgress(t, p, "writes after the heal", 20*time.Second, 0, 1, 2)
	acked := probes.merged(p.stop(t))
	nc.WaitReady(t)
	finishChaos(t, nc.Cluster, conn, topic, partitions, acked)
}

// Lossy links between every pair of brokers (20% of packets dropped each
// way) and one follower's link rate-limited with tbf to 32 kbit/s:
// replication slows, writes go on, nothing acknowledged is lost, no ISR
// drops below min.insync.replicas, and every ISR is full soon after the
// heal. The slow follower usually stays in the ISR: acks=all writes wait
// for it, so the producer (at most 100 records in flight per partition)
// slows to its pace and it keeps reaching the leader's log end within
// replica.lag.time.max.ms, which is Kafka's in-sync rule too. (No netem in
// this kernel: no added delay or reordering.)
func TestNetLossySlowLinks(t *testing.T) {
	const topic, partitions = "net-lossy", 3
	var slow int32
	nc, conn, _ := startNetTopic(t, topic, func(ctrl int32, others []int32) map[int32][]int32 {
		// The slow broker follows every partition and leads none, so the
		// clients' writes never wait on its link.
		slow = others[1]
		return map[int32][]int32{0: {ctrl, others[0], slow}, 1: {others[0], ctrl, slow}, 2: {ctrl, others[0], slow}}
	})
	p := startChaosProducer(t, nc.Addrs(), "ls", partitions, chaosAcksAllOpts(topic)...)
	time.Sleep(3 * time.Second)

	for i, a := range nc.Brokers {
		for _, b := range nc.Brokers[i+1:] {
			nc.Loss(harness.NetNode(a.ID), harness.NetNode(b.ID), 0.2)
		}
	}
	// Far below the producer's unthrottled rate (about 0.5 Mbit/s of
	// record batches).
	nc.Slow(harness.NetNode(slow), "32kbit")
	minISR := 3
	for range 4 {
		waitProgress(t, p, "writes on every partition over lossy, slow links", 20*time.Second, 0, 1, 2)
		time.Sleep(3 * time.Second)
		for _, s := range mustStates(t, conn, topic, partitions) {
			minISR = min(minISR, len(s.ISR))
		}
	}
	t.Logf("during the fault: smallest ISR %d; %v; switch rules:\n%s", minISR, mustStates(t, conn, topic, partitions), nc.Rules())
	if minISR < 2 {
		t.Errorf("an ISR shrank below min.insync.replicas although only one broker's link was slow")
	}

	healed := time.Now()
	nc.Heal()
	waitISRSize(t, conn, topic, partitions, 3, netRecoverBound)
	t.Logf("every ISR full %v after the heal", time.Since(healed).Round(time.Millisecond))
	acked := p.stop(t)
	if n := p.failures(); n > 0 {
		t.Errorf("%d records failed over lossy links", n)
	}
	finishChaos(t, nc.Cluster, conn, topic, partitions, acked)
}

// The harness's Isolate: a broker cut from everything cannot be reached by
// clients, its ZooKeeper session expires and its registration goes; after
// the heal it registers again and every broker lists it.
func TestNetIsolateBroker(t *testing.T) {
	nc := harness.StartNetCluster(t, 3)
	conn := nc.ZK.Connect(t)
	const id = 2
	path := fmt.Sprintf("/brokers/ids/%d", id)
	_, before, err := conn.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	f := nc.Isolate(id)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, err = harness.MetadataFrom(ctx, nc.Broker(id).Addr)
	cancel()
	if err == nil {
		t.Errorf("Metadata from the isolated broker %d answered", id)
	}
	waitUntil(t, sessionTimeout+20*time.Second, path+" removed", func() error {
		if ok, _, err := conn.Exists(path); err != nil || ok {
			return fmt.Errorf("exists %v (%v)", ok, err)
		}
		return nil
	})
	f.Heal()
	waitUntil(t, 30*time.Second, path+" registered again", func() error {
		ok, st, err := conn.Exists(path)
		if err == nil && (!ok || st.Czxid == before.Czxid) {
			err = fmt.Errorf("exists %v, czxid %d (before %d)", ok, st.Czxid, before.Czxid)
		}
		return err
	})
	nc.WaitReady(t)
}
