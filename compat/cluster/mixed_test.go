package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 14: kbroker replicates with Apache Kafka 3.9.1 brokers on one
// ZooKeeper, at inter.broker.protocol.version 2.6 (leaders write ISR
// changes to ZooKeeper) and at Kafka 3.9's default (leaders send
// AlterPartition to the controller). Two Kafka brokers and two kbrokers;
// the first to start is the controller C and hosts no replica of the
// topic; L1 is of C's kind, L2 and F2 of the other kind. Replication
// factor 3, min.insync.replicas 2:
//
//	p0 [L1 L2 F2]  led by C's kind, followed by the other
//	p1 [L2 L1 F2]  led by the other kind, followed by both
//	p2 [F2 L1 L2]
//
// Under an idempotent acks=all producer: a follower of each kind is paused
// past replica.lag.time.max.ms but within the session timeout, so it leaves
// the ISRs through its leaders' lag checks (the IBP's path) and rejoins
// after SIGCONT, seen in the state znodes; the leaders of each kind are
// SIGKILLed and restarted in turn. Then the controller's work, obeyed by
// both kinds: a preferred leader election, a reassignment that moves a
// replica from one kind to the other, a controlled shutdown (SIGTERM) of a
// leader, and the deletion of a topic with replicas on both kinds.
// Afterwards every acknowledged record is read once at its offset, and the
// replicas of both kinds hold identical bytes below the high watermark.
//
// TestMixedClusterReplication runs it under a Kafka controller,
// TestMixedClusterKbrokerController under a kbroker controller.
func TestMixedClusterReplication(t *testing.T) {
	for _, ibp := range []string{"2.6", "3.9"} {
		t.Run("ibp-"+ibp, func(t *testing.T) { testMixedCluster(t, ibp, true) })
	}
}

func TestMixedClusterKbrokerController(t *testing.T) {
	for _, ibp := range []string{"2.6", "3.9"} {
		t.Run("ibp-"+ibp, func(t *testing.T) { testMixedCluster(t, ibp, false) })
	}
}

func kindOf(c *harness.Cluster, id int32) string {
	if c.Broker(id).Kafka39() {
		return "Kafka"
	}
	return "kbroker"
}

func testMixedCluster(t *testing.T, ibp string, kafkaController bool) {
	const topic, partitions = "mixed", 3
	// Brokers start in id order and the first becomes the controller.
	kinds := []bool{false, false, true, true}
	if kafkaController {
		kinds = []bool{true, true, false, false}
	}
	// A session longer than the pauses: a paused broker leaves the ISRs
	// through the leaders, not through the controller's broker-failure
	// path, and kbroker's probes are off for the same reason.
	c := harness.StartMixedCluster(t, kinds,
		"inter.broker.protocol.version="+ibp, "zookeeper.session.timeout.ms=12000",
		"broker.probe.interval.ms=0", "auto.leader.rebalance.enable=false")
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 30*time.Second, anyBroker)
	if c.Broker(ctrl).Kafka39() != kafkaController {
		t.Fatalf("controller %d is a %s", ctrl, kindOf(c, ctrl))
	}
	var same, other []int32 // the controller's kind, the other kind
	for _, b := range c.Brokers {
		switch {
		case b.ID == ctrl:
		case b.Kafka39() == kafkaController:
			same = append(same, b.ID)
		default:
			other = append(other, b.ID)
		}
	}
	// l1 leads p0 and is the controller's kind; l2 leads p1; f2 is the
	// other kind's second broker.
	l1, l2, f2 := same[0], other[0], other[1]
	t.Logf("IBP %s: controller %d (%s); %d (%s), %d and %d (%s)", ibp, ctrl, kindOf(c, ctrl), l1, kindOf(c, l1), l2, f2, kindOf(c, l2))

	// Both kinds register alike at this IBP: the same fields, the same
	// record version (4 below 2.7-IV0, 5 with features from it).
	kafkaID, kbrokerID := l1, l2
	if !kafkaController {
		kafkaID, kbrokerID = l2, l1
	}
	kafkaReg, kbrokerReg := registrationJSON(t, conn, kafkaID), registrationJSON(t, conn, kbrokerID)
	if fmt.Sprint(sortedKeys(kafkaReg)) != fmt.Sprint(sortedKeys(kbrokerReg)) || fmt.Sprint(kafkaReg["version"]) != fmt.Sprint(kbrokerReg["version"]) {
		t.Errorf("registrations differ: Kafka broker %d %v, kbroker %d %v", kafkaID, kafkaReg, kbrokerID, kbrokerReg)
	}
	t.Logf("registration version %v, fields %v", kbrokerReg["version"], sortedKeys(kbrokerReg))

	// Every broker hands out producer ids, distinct ones: from 3.0-IV0 a
	// Kafka broker asks the controller for each block (AllocateProducerIds),
	// below it writes /latest_producer_id_block itself, as kbroker does.
	pids := map[int64]int32{}
	for _, b := range c.Brokers {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionTimeoutMillis = 60_000
		cl := newClient(t, []string{b.Addr})
		var resp *kmsg.InitProducerIDResponse
		waitUntil(t, 30*time.Second, fmt.Sprintf("InitProducerId at broker %d (%s)", b.ID, kindOf(c, b.ID)), func() error {
			r, err := cl.SeedBrokers()[0].Request(testCtx(t, 10*time.Second), req)
			if err != nil {
				return err
			}
			resp = r.(*kmsg.InitProducerIDResponse)
			return kerr.ErrorForCode(resp.ErrorCode)
		})
		if other, dup := pids[resp.ProducerID]; dup || resp.ProducerID < 0 {
			t.Errorf("broker %d handed out producer id %d (also from broker %d: %v)", b.ID, resp.ProducerID, other, dup)
		}
		pids[resp.ProducerID] = b.ID
	}
	t.Logf("producer ids by broker: %v", pids)

	preferred := map[int32][]int32{0: {l1, l2, f2}, 1: {l2, l1, f2}, 2: {f2, l1, l2}}
	createTopicAssigned(t, c, topic, preferred, minISR2)
	createTopicAssigned(t, c, "mixed-doomed", map[int32][]int32{0: {l1, l2, f2}, 1: {f2, ctrl, l1}}, nil)
	waitFullISR(t, conn, topic, partitions, 3)

	p := startChaosProducer(t, c.Addrs(), "mx", partitions, chaosAcksAllOpts(topic)...)
	waitProgress(t, p, "every partition takes writes", 30*time.Second, 0, 1, 2)

	// f2 follows p0 and p1; l1 follows p1 and p2 (and leads p0).
	for _, paused := range []int32{f2, l1} {
		if err := c.Broker(paused).Pause(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		shrunk := waitIsrWithout(t, conn, topic, partitions, paused, 30*time.Second)
		t.Logf("%s broker %d paused: out of the ISRs after %v: %v", kindOf(c, paused), paused, time.Since(start).Round(time.Millisecond), shrunk)
		// Past replica.lag.time.max.ms (6 s) for certain, then back.
		time.Sleep(time.Until(start.Add(8 * time.Second)))
		if err := c.Broker(paused).Resume(); err != nil {
			t.Fatal(err)
		}
		waitISRSize(t, conn, topic, partitions, 3, 60*time.Second)
		t.Logf("%s broker %d back in every ISR %v after SIGCONT", kindOf(c, paused), paused, time.Since(start).Round(time.Millisecond))
		waitProgress(t, p, "every partition takes writes after the pause", 60*time.Second, 0, 1, 2)
	}

	for _, victim := range []int32{l1, l2} {
		led := partitionsLedBy(mustStates(t, conn, topic, partitions), victim)
		c.Broker(victim).Kill()
		start := time.Now()
		for _, part := range led {
			waitLeaderChange(t, conn, topic, part, victim, 60*time.Second)
		}
		t.Logf("%s leader %d killed: partitions %v moved after %v", kindOf(c, victim), victim, led, time.Since(start).Round(time.Millisecond))
		waitProgress(t, p, fmt.Sprintf("partitions %v take writes after the kill", led), 60*time.Second, led...)
		c.Broker(victim).Restart(t)
		waitISRSize(t, conn, topic, partitions, 3, 90*time.Second)
		t.Logf("%s broker %d back in every ISR %v after the kill", kindOf(c, victim), victim, time.Since(start).Round(time.Millisecond))
	}

	admin := kadm.NewClient(newClient(t, c.Addrs()))
	ctx := testCtx(t, 60*time.Second)

	// Preferred leader election: every partition back to its first replica.
	if _, err := admin.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: {0: {}, 1: {}, 2: {}}}); err != nil {
		t.Fatalf("ElectLeaders: %v", err)
	}
	waitUntil(t, 30*time.Second, "preferred leaders", func() error {
		for part, replicas := range preferred {
			s, err := readState(conn, topic, part)
			if err != nil {
				return err
			}
			if s.Leader != replicas[0] {
				return fmt.Errorf("partition %d: %+v, preferred %d", part, s, replicas[0])
			}
		}
		return nil
	})
	waitProgress(t, p, "every partition takes writes after the election", 60*time.Second, 0, 1, 2)

	// Reassignment between kinds: p2's replica l2 moves to the controller,
	// the other kind's broker to the controller's kind.
	// Kafka's own kafka-reassign-partitions, as an operator runs it: the
	// brokers it talks to pass the plan to the controller
	// (AlterPartitionReassignments), whichever kind each is.
	target := []int32{f2, l1, ctrl}
	plan := filepath.Join(t.TempDir(), "reassign.json")
	planJSON := fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":2,"replicas":[%d,%d,%d]}]}`, topic, target[0], target[1], target[2])
	if err := os.WriteFile(plan, []byte(planJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	bootstrap := strings.Join(c.Addrs(), ",")
	if out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-reassign-partitions",
		"--bootstrap-server", bootstrap, "--reassignment-json-file", plan, "--execute"); err != nil {
		t.Fatalf("kafka-reassign-partitions --execute: %v\n%s\n%s", err, out, stderr)
	}
	waitUntil(t, 60*time.Second, fmt.Sprintf("partition 2 reassigned to %v", target), func() error {
		a, err := topicAssignment(conn, topic)
		if err != nil {
			return err
		}
		s, err := readState(conn, topic, 2)
		if err != nil {
			return err
		}
		if !slices.Equal(a[2], target) || len(s.ISR) != 3 {
			return fmt.Errorf("assignment %v, state %+v", a[2], s)
		}
		if ok, _, err := conn.Exists("/admin/reassign_partitions"); err != nil || ok {
			return fmt.Errorf("/admin/reassign_partitions still there (%v)", err)
		}
		return nil
	})
	waitUntil(t, 60*time.Second, "kafka-reassign-partitions --verify reports it complete", func() error {
		out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-reassign-partitions",
			"--bootstrap-server", bootstrap, "--reassignment-json-file", plan, "--verify")
		if err != nil || !strings.Contains(out, fmt.Sprintf("Reassignment of partition %s-2 is completed", topic)) {
			return fmt.Errorf("--verify: %v\n%s\n%s", err, out, stderr)
		}
		return nil
	})
	t.Logf("partition 2 reassigned from %v to %v", preferred[2], target)
	waitProgress(t, p, "partition 2 takes writes after the reassignment", 60*time.Second, 2)

	// Controlled shutdown of p0's leader: the controller moves its
	// leadership before it stops, so no write fails.
	led := partitionsLedBy(mustStates(t, conn, topic, partitions), l1)
	stopped := time.Now()
	// Kafka's JVM exits with status 143 on SIGTERM; what matters is that it
	// exits by itself.
	if err := c.Broker(l1).Term(); err != nil {
		t.Logf("broker %d after SIGTERM: %v", l1, err)
	}
	if c.Broker(l1).Running() {
		t.Fatalf("broker %d still running after SIGTERM", l1)
	}
	for _, part := range led {
		if s, err := readState(conn, topic, part); err != nil || s.Leader == l1 {
			t.Errorf("partition %d still led by the stopped broker %d: %+v, %v", part, l1, s, err)
		}
	}
	t.Logf("%s broker %d shut down in %v; its partitions %v moved first", kindOf(c, l1), l1, time.Since(stopped).Round(time.Millisecond), led)
	c.Broker(l1).Restart(t)
	waitISRSize(t, conn, topic, partitions, 3, 90*time.Second)

	// Deleting a topic with replicas on both kinds: gone from ZooKeeper and
	// from every broker's log dirs.
	if _, err := admin.DeleteTopics(ctx, "mixed-doomed"); err != nil {
		t.Fatalf("DeleteTopics: %v", err)
	}
	waitUntil(t, 60*time.Second, "mixed-doomed deleted everywhere", func() error {
		if ok, _, err := conn.Exists("/brokers/topics/mixed-doomed"); err != nil || ok {
			return fmt.Errorf("/brokers/topics/mixed-doomed still there (%v)", err)
		}
		for _, b := range c.Brokers {
			for _, part := range []int{0, 1} {
				if _, err := os.Stat(filepath.Join(b.LogDir, fmt.Sprintf("mixed-doomed-%d", part))); err == nil {
					return fmt.Errorf("broker %d (%s) still has mixed-doomed-%d", b.ID, kindOf(c, b.ID), part)
				}
			}
		}
		return nil
	})

	waitProgress(t, p, "every partition takes writes at the end", 60*time.Second, 0, 1, 2)
	acked := p.stop(t)
	if n := p.failures(); n > 0 {
		t.Errorf("%d records failed", n)
	}
	v := finishChaos(t, c, conn, topic, partitions, acked)
	t.Logf("IBP %s: %d acknowledged; lost %d, duplicates %d, moved %d, divergent %d", ibp, len(acked), v.Lost, v.Duplicates, v.Moved, v.Divergent)
}

// waitIsrWithout waits until id is in none of the ISRs of the topic's
// partitions it does not lead (a paused leader keeps its own until the
// controller moves it), and returns the states.
func waitIsrWithout(t *testing.T, conn *zk.Conn, topic string, partitions int32, id int32, timeout time.Duration) map[int32]partitionState {
	t.Helper()
	var states map[int32]partitionState
	waitUntil(t, timeout, fmt.Sprintf("broker %d leaves the ISRs of %s", id, topic), func() error {
		var err error
		if states, err = readStates(conn, topic, partitions); err != nil {
			return err
		}
		for part, s := range states {
			if s.Leader != id && slices.Contains(s.ISR, id) {
				return fmt.Errorf("partition %d: %+v", part, s)
			}
		}
		return nil
	})
	return states
}

// registrationJSON is broker id's /brokers/ids record, decoded.
func registrationJSON(t *testing.T, conn *zk.Conn, id int32) map[string]any {
	t.Helper()
	data, _, err := conn.Get(fmt.Sprintf("/brokers/ids/%d", id))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("/brokers/ids/%d: %v", id, err)
	}
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
