package cluster

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 14: kbroker replicates with Apache Kafka 3.9.1 brokers on one
// ZooKeeper, at inter.broker.protocol.version 2.6 (leaders write ISR
// changes to ZooKeeper) and at Kafka 3.9's default (Kafka leaders send
// AlterPartition to the controller). Two Kafka brokers, C (the controller,
// hosting no replica) and K, and two kbrokers, A and B; replication factor
// 3, min.insync.replicas 2:
//
//	p0 [K A B]  a Kafka leader with kbroker followers
//	p1 [A K B]  a kbroker leader with a Kafka and a kbroker follower
//	p2 [K B A]
//
// Under an idempotent acks=all producer: B (a kbroker follower) and then K
// (a Kafka follower of p1, leader of p0 and p2) are paused past
// replica.lag.time.max.ms but within the session timeout, so each leaves
// the ISRs through its leaders' lag checks and rejoins after SIGCONT, seen
// in the state znodes; then K and A, the leaders of each kind, are
// SIGKILLed and restarted in turn. The controller, Kafka's, stays up: a
// kbroker controller of Kafka brokers is another test's subject.
// Afterwards every acknowledged record is read once at its offset, and the
// replicas of both kinds hold identical bytes below the high watermark.
func TestMixedClusterReplication(t *testing.T) {
	for _, ibp := range []string{"2.6", "3.9"} {
		t.Run("ibp-"+ibp, func(t *testing.T) { testMixedReplication(t, ibp) })
	}
}

func testMixedReplication(t *testing.T, ibp string) {
	const topic, partitions = "mixed", 3
	// A session longer than the pauses: a paused broker leaves the ISRs
	// through the leaders, not through the controller's broker-failure
	// path, and kbroker's probes are off for the same reason.
	c := harness.StartMixedCluster(t, []bool{true, true, false, false},
		"inter.broker.protocol.version="+ibp, "zookeeper.session.timeout.ms=12000",
		"broker.probe.interval.ms=0", "auto.leader.rebalance.enable=false")
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 30*time.Second, anyBroker)
	if !c.Broker(ctrl).Kafka39() {
		t.Fatalf("controller %d is a kbroker; this test needs Kafka's (brokers start in id order, Kafka's first)", ctrl)
	}
	var kafka, kbrokers []int32
	for _, b := range c.Brokers {
		switch {
		case b.ID == ctrl:
		case b.Kafka39():
			kafka = append(kafka, b.ID)
		default:
			kbrokers = append(kbrokers, b.ID)
		}
	}
	k, a, b := kafka[0], kbrokers[0], kbrokers[1]
	t.Logf("IBP %s: controller %d (Kafka), K=%d (Kafka), A=%d and B=%d (kbroker)", ibp, ctrl, k, a, b)
	// Both kinds register alike at this IBP: the same fields, the same
	// record version (4 below 2.7-IV0, 5 with features from it).
	kafkaReg, kbrokerReg := registrationJSON(t, conn, k), registrationJSON(t, conn, a)
	if fmt.Sprint(sortedKeys(kafkaReg)) != fmt.Sprint(sortedKeys(kbrokerReg)) || fmt.Sprint(kafkaReg["version"]) != fmt.Sprint(kbrokerReg["version"]) {
		t.Errorf("registrations differ: Kafka broker %d %v, kbroker %d %v", k, kafkaReg, a, kbrokerReg)
	}
	t.Logf("registration version %v, fields %v", kbrokerReg["version"], sortedKeys(kbrokerReg))
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {k, a, b}, 1: {a, k, b}, 2: {k, b, a}}, minISR2)
	waitFullISR(t, conn, topic, partitions, 3)

	p := startChaosProducer(t, c.Addrs(), "mx", partitions, chaosAcksAllOpts(topic)...)
	waitProgress(t, p, "every partition takes writes", 30*time.Second, 0, 1, 2)

	for _, paused := range []int32{b, k} {
		kind := map[bool]string{true: "Kafka", false: "kbroker"}[c.Broker(paused).Kafka39()]
		if err := c.Broker(paused).Pause(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		shrunk := waitIsrWithout(t, conn, topic, partitions, paused, 30*time.Second)
		t.Logf("%s broker %d paused: out of the ISRs after %v: %v", kind, paused, time.Since(start).Round(time.Millisecond), shrunk)
		// Past replica.lag.time.max.ms (6 s) for certain, then back.
		time.Sleep(time.Until(start.Add(8 * time.Second)))
		if err := c.Broker(paused).Resume(); err != nil {
			t.Fatal(err)
		}
		waitISRSize(t, conn, topic, partitions, 3, 60*time.Second)
		t.Logf("%s broker %d back in every ISR %v after SIGCONT", kind, paused, time.Since(start).Round(time.Millisecond))
		waitProgress(t, p, "every partition takes writes after the pause", 60*time.Second, 0, 1, 2)
	}

	for _, victim := range []int32{k, a} {
		kind := map[bool]string{true: "Kafka", false: "kbroker"}[c.Broker(victim).Kafka39()]
		states := mustStates(t, conn, topic, partitions)
		var led []int32
		for part, s := range states {
			if s.Leader == victim {
				led = append(led, part)
			}
		}
		slices.Sort(led)
		if len(led) == 0 {
			t.Fatalf("%s broker %d leads nothing: %v", kind, victim, states)
		}
		c.Broker(victim).Kill()
		start := time.Now()
		for _, part := range led {
			waitLeaderChange(t, conn, topic, part, victim, 60*time.Second)
		}
		t.Logf("%s leader %d killed: partitions %v moved after %v", kind, victim, led, time.Since(start).Round(time.Millisecond))
		waitProgress(t, p, fmt.Sprintf("partitions %v take writes after the kill", led), 60*time.Second, led...)
		c.Broker(victim).Restart(t)
		waitISRSize(t, conn, topic, partitions, 3, 90*time.Second)
		t.Logf("%s broker %d back in every ISR %v after the kill", kind, victim, time.Since(start).Round(time.Millisecond))
	}

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
