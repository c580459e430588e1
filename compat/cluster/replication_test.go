package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

var minISR2 = map[string]*string{"min.insync.replicas": strp("2")}

// Issue 4: rf 3, min.insync.replicas 2, 10,000 records with acks=all;
// then every replica holds the same bytes below the HW.
func TestReplicationAcksAll(t *testing.T) {
	const topic, partitions = "acks-all", 3
	c, conn := startWithTopic(t, topic, partitions)

	cl := newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var recs []*kgo.Record
	for i := range 10000 {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, "value-%05d", i)})
	}
	if err := cl.ProduceSync(testCtx(t, 2*time.Minute), recs...).FirstErr(); err != nil {
		t.Fatalf("produce 10000 records acks=all: %v", err)
	}
	hw := highWatermarks(t, c, topic)
	var total int64
	for _, v := range hw {
		total += v
	}
	if total != 10000 {
		t.Fatalf("HWs %v sum to %d, want 10000", hw, total)
	}
	// All three replicas, not just min.insync.replicas of them, must hold
	// the data: wait for a full ISR, which needs every follower at the HW.
	waitFullISR(t, conn, topic, partitions, 3)
	got := consumeAll(t, c.Addrs(), topic, 10000, 60*time.Second)
	if len(got) != 10000 {
		t.Errorf("consumed %d records, want 10000", len(got))
	}
	stopAll(t, c)
	compareReplicaLogs(t, c, conn, topic, hw)
}

// Issue 4: SIGSTOP a follower past replica.lag.time.max.ms; the leader
// shrinks the ISR in the state znode, announces it under
// /isr_change_notification (the controller handles and deletes the node),
// and every broker's Metadata shows the smaller ISR. After SIGCONT the
// follower catches up and re-enters the ISR.
func TestIsrShrinkExpand(t *testing.T) {
	// A session longer than the pause, and no probes: the follower must
	// leave the ISR through the leader's lag check, not through the
	// controller's broker-failure path (a probed controller fences a
	// paused broker within seconds: TestPausedLeaderFencedBeforeSessionExpiry).
	// The lag check is what a follower that answers but falls behind meets.
	// And at an inter.broker.protocol.version below 2.7-IV2, where the
	// leader writes the state znode itself and announces the change;
	// TestIsrChangesThroughController covers AlterPartition.
	c := harness.StartCluster(t, 3, "zookeeper.session.timeout.ms=30000", "broker.probe.interval.ms=0", "inter.broker.protocol.version=2.7-IV1")
	conn := c.ZK.Connect(t)
	const topic, partitions = "isr", 3
	createTopic(t, c, topic, partitions, 3, minISR2)
	waitFullISR(t, conn, topic, partitions, 3)

	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	states := mustStates(t, conn, topic, partitions)
	var follower int32 = -1
	for _, b := range c.Brokers {
		if b.ID != ctrl {
			follower = b.ID
			break
		}
	}
	var watched []int32 // partitions the paused broker follows
	for p, s := range states {
		if s.Leader != follower {
			watched = append(watched, p)
		}
	}
	slices.Sort(watched)
	t.Logf("pausing broker %d (controller %d); watching partitions %v", follower, ctrl, watched)

	notes := watchIsrChangeNotifications(t, conn)
	_, stat0, err := conn.Exists("/isr_change_notification")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Broker(follower).Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	t.Cleanup(func() { _ = c.Broker(follower).Resume() })

	// Records written while it is paused, so it has something to catch up.
	others := []string{}
	for _, b := range c.Brokers {
		if b.ID != follower {
			others = append(others, b.Addr)
		}
	}
	oneAck := newClient(t, others, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceTo(t, oneAck, watched, "paused", 100)

	waitUntil(t, 20*time.Second, "ISR shrinks in the state znodes", func() error {
		for _, p := range watched {
			s, err := readState(conn, topic, p)
			if err != nil {
				return err
			}
			if slices.Contains(s.ISR, follower) || len(s.ISR) != 2 {
				return fmt.Errorf("partition %d: %+v", p, s)
			}
		}
		return nil
	})
	t.Logf("ISR shrank %v after SIGSTOP", time.Since(paused).Round(time.Millisecond))
	waitUntil(t, 15*time.Second, "an isr_change_ node is created and deleted by the controller", func() error {
		children, stat, err := conn.Children("/isr_change_notification")
		if err != nil {
			return err
		}
		if stat.Cversion < stat0.Cversion+2 || len(children) != 0 {
			return fmt.Errorf("cversion %d (was %d), children %v", stat.Cversion, stat0.Cversion, children)
		}
		return nil
	})
	for _, n := range notes.names() {
		if !strings.HasPrefix(n, "isr_change_") || len(n) != len("isr_change_")+10 {
			t.Errorf("unexpected notification node %q", n)
		}
	}
	t.Logf("notification nodes seen: %v", notes.names())
	waitUntil(t, 10*time.Second, "Metadata on the running brokers shows the smaller ISR", func() error {
		for _, addr := range others {
			v, err := metadataView(addr, topic)
			if err != nil {
				return err
			}
			for _, p := range watched {
				if slices.Contains(v[p].ISR, follower) {
					return fmt.Errorf("%s partition %d: %v", addr, p, v[p])
				}
			}
		}
		return nil
	})
	allAcks := newClient(t, others, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceTo(t, allAcks, watched, "shrunk", 50)

	if err := c.Broker(follower).Resume(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the follower re-enters the ISR", func() error {
		for _, p := range watched {
			s, err := readState(conn, topic, p)
			if err != nil {
				return err
			}
			if !slices.Contains(s.ISR, follower) {
				return fmt.Errorf("partition %d: %+v", p, s)
			}
		}
		return nil
	})
	waitUntil(t, 20*time.Second, "Metadata on every broker shows the full ISR", func() error {
		return checkMetadataMatchesState(c, conn, topic, partitions)
	})
	hw := highWatermarks(t, c, topic)
	stopAll(t, c)
	compareReplicaLogs(t, c, conn, topic, hw)
}

// Issue 4: with two of three brokers down, acks=all gets
// NOT_ENOUGH_REPLICAS and acks=1 still succeeds.
func TestNotEnoughReplicas(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	// The surviving broker is the leader and the controller, so the ISR
	// shrink to it alone is certain to be decided.
	replicas := []int32{ctrl}
	for _, b := range c.Brokers {
		if b.ID != ctrl {
			replicas = append(replicas, b.ID)
		}
	}
	const topic = "min-isr"
	createTopicAssigned(t, c, topic, map[int32][]int32{0: replicas}, minISR2)
	waitFullISR(t, conn, topic, 1, 3)
	leaderAddr := []string{c.Broker(ctrl).Addr}
	produceN(t, newClient(t, leaderAddr, kgo.DefaultProduceTopic(topic)), "healthy", 10)

	c.Broker(replicas[1]).Kill()
	c.Broker(replicas[2]).Kill()
	waitUntil(t, sessionTimeout+20*time.Second, "ISR shrinks to the leader", func() error {
		s, err := readState(conn, topic, 0)
		if err != nil {
			return err
		}
		if s.Leader != ctrl || len(s.ISR) != 1 {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})

	allAcks := newClient(t, leaderAddr, kgo.DefaultProduceTopic(topic), kgo.DisableIdempotentWrite(),
		kgo.RecordRetries(2), kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	err := allAcks.ProduceSync(testCtx(t, 30*time.Second), &kgo.Record{Value: []byte("all")}).FirstErr()
	if !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Errorf("acks=all with ISR 1 < min.insync.replicas 2: got %v, want NOT_ENOUGH_REPLICAS", err)
	}
	oneAck := newClient(t, leaderAddr, kgo.DefaultProduceTopic(topic), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.LeaderAck()))
	if err := oneAck.ProduceSync(testCtx(t, 30*time.Second), &kgo.Record{Value: []byte("one")}).FirstErr(); err != nil {
		t.Errorf("acks=1 with ISR 1: %v", err)
	}
}

// Issue 4: SIGKILL the leader while franz-go produces with acks=all for
// 30 s: every acknowledged record is afterwards readable exactly once at
// its acknowledged offset, and the replicas agree byte for byte below the
// HW once the killed broker is back.
func TestLeaderKillNoAckedLoss(t *testing.T) {
	const topic, partitions = "no-loss", 3
	c, conn := startWithTopic(t, topic, partitions)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	states := mustStates(t, conn, topic, partitions)
	victim := states[0].Leader
	if victim == ctrl {
		for p := range int32(partitions) {
			if states[p].Leader != ctrl {
				victim = states[p].Leader
				break
			}
		}
	}

	p := startProducer(t, c.Addrs(), topic, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	time.Sleep(10 * time.Second)
	t.Logf("SIGKILL broker %d, leader of %v (controller %d)", victim, partitionsLedBy(states, victim), ctrl)
	c.Broker(victim).Kill()
	time.Sleep(20 * time.Second)
	stopProducer(t, p)

	c.Restart(t, c.Broker(victim))
	waitUntil(t, 60*time.Second, "the restarted broker re-enters every ISR", func() error {
		s, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		for p, st := range s {
			if len(st.ISR) != 3 {
				return fmt.Errorf("partition %d: %+v", p, st)
			}
		}
		return nil
	})

	verifyNoAckedLoss(t, c, conn, topic, p)
}

// produceTo produces n records to each of the given partitions (the client
// must use the manual partitioner) and fails on any error.
func produceTo(t *testing.T, cl *kgo.Client, parts []int32, prefix string, n int) {
	t.Helper()
	var recs []*kgo.Record
	for _, p := range parts {
		for i := range n {
			recs = append(recs, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", prefix, p, i)})
		}
	}
	if err := cl.ProduceSync(testCtx(t, 60*time.Second), recs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
}

// isrNotes records every child seen under /isr_change_notification.
type isrNotes struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (n *isrNotes) names() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for k := range n.seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// watchIsrChangeNotifications keeps a child watch on
// /isr_change_notification until the test ends. The controller may delete
// a node before we list it, so tests also check the parent's cversion.
func watchIsrChangeNotifications(t *testing.T, conn *zk.Conn) *isrNotes {
	n := &isrNotes{seen: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			children, _, ev, err := conn.ChildrenW("/isr_change_notification")
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			n.mu.Lock()
			for _, ch := range children {
				n.seen[ch] = true
			}
			n.mu.Unlock()
			select {
			case <-ev:
			case <-ctx.Done():
			}
		}
	}()
	return n
}

// verifyNoAckedLoss checks, with every replica back in the ISR, that each
// record p saw acknowledged is read exactly once at its acknowledged offset,
// then stops the brokers and compares the replicas' logs below the HW.
func verifyNoAckedLoss(t *testing.T, c *harness.Cluster, conn *zk.Conn, topic string, p *producer) {
	t.Helper()
	acked := p.acked.Load()
	hw := highWatermarks(t, c, topic)
	var total int64
	for _, v := range hw {
		total += v
	}
	got := consumeAll(t, c.Addrs(), topic, int(total), 90*time.Second)
	type at struct {
		partition int32
		offset    int64
	}
	seen := map[string][]at{}
	for _, r := range got {
		seen[string(r.Value)] = append(seen[string(r.Value)], at{r.Partition, r.Offset})
	}
	p.mu.Lock()
	lost, dup, moved := 0, 0, 0
	for v, a := range p.offsets {
		s := seen[v]
		switch {
		case len(s) == 0:
			lost++
		case len(s) > 1:
			dup++
		case s[0].partition != a.Partition || s[0].offset != a.Offset:
			moved++
		}
		if (len(s) != 1 || s[0].partition != a.Partition || s[0].offset != a.Offset) && lost+dup+moved <= 5 {
			t.Errorf("acknowledged %q at %d/%d: read at %v", v, a.Partition, a.Offset, s)
		}
	}
	p.mu.Unlock()
	if lost+dup+moved > 0 {
		t.Errorf("of %d acknowledged records: %d lost, %d read more than once, %d at another offset", acked, lost, dup, moved)
	}
	stopAll(t, c)
	compareReplicaLogs(t, c, conn, topic, hw)
}

// Issue 14: at Kafka 3.9's default inter.broker.protocol.version a leader
// changes its ISR through the controller (AlterPartition), not by writing
// the state znode itself: a paused follower leaves the ISR and comes back,
// seen in the state znodes, and no /isr_change_notification is ever made.
func TestIsrChangesThroughController(t *testing.T) {
	c := harness.StartCluster(t, 3, "zookeeper.session.timeout.ms=30000", "broker.probe.interval.ms=0")
	conn := c.ZK.Connect(t)
	const topic, partitions = "isr-via-controller", 3
	createTopic(t, c, topic, partitions, 3, minISR2)
	waitFullISR(t, conn, topic, partitions, 3)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	var follower int32 = -1
	for _, b := range c.Brokers {
		if b.ID != ctrl {
			follower = b.ID
			break
		}
	}
	_, stat0, err := conn.Exists("/isr_change_notification")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Broker(follower).Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Broker(follower).Resume() })
	var others []string
	for _, b := range c.Brokers {
		if b.ID != follower {
			others = append(others, b.Addr)
		}
	}
	oneAck := newClient(t, others, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	states := mustStates(t, conn, topic, partitions)
	var watched []int32
	for p, s := range states {
		if s.Leader != follower {
			watched = append(watched, p)
		}
	}
	produceTo(t, oneAck, watched, "paused", 50)
	shrunk := waitIsrWithout(t, conn, topic, partitions, follower, 30*time.Second)
	t.Logf("broker %d paused: out of the ISRs it follows: %v", follower, shrunk)
	if err := c.Broker(follower).Resume(); err != nil {
		t.Fatal(err)
	}
	waitISRSize(t, conn, topic, partitions, 3, 30*time.Second)
	_, stat, err := conn.Exists("/isr_change_notification")
	if err != nil {
		t.Fatal(err)
	}
	if stat.Cversion != stat0.Cversion {
		t.Errorf("/isr_change_notification changed (cversion %d, was %d): a leader wrote its ISR change itself", stat.Cversion, stat0.Cversion)
	}
	waitUntil(t, 20*time.Second, "Metadata on every broker shows the full ISR", func() error {
		return checkMetadataMatchesState(c, conn, topic, partitions)
	})
}
