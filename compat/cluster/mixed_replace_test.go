package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 14: a three-broker Kafka 3.9.1 cluster is replaced by kbroker one
// broker at a time, under load, and then replaced back: each broker in turn
// is stopped with SIGTERM (a controlled shutdown) and started as the other
// kind on the same broker.id, config and log directory, which it must read
// as the other kind wrote it (segments, indexes, checkpoints, leader epochs,
// producer snapshots, meta.properties, __consumer_offsets). An idempotent
// acks=all producer and a consumer group committing after processing run
// throughout. Nothing acknowledged is lost or duplicated, the producer gets
// no OUT_OF_ORDER_SEQUENCE or other failure, no committed offset moves
// back, and the replicas agree below the high watermark.
func TestMixedRollingReplacement(t *testing.T) {
	const topic, partitions = "rolling", 3
	c := harness.StartMixedCluster(t, []bool{true, true, true}, "zookeeper.session.timeout.ms=12000")
	conn := c.ZK.Connect(t)
	createTopic(t, c, topic, partitions, 3, minISR2)
	waitFullISR(t, conn, topic, partitions, 3)

	p := startChaosProducer(t, c.Addrs(), "rr", partitions, chaosAcksAllOpts(topic)...)
	g := startChaosGroup(t, c.Addrs(), topic)
	waitProgress(t, p, "every partition takes writes", 30*time.Second, 0, 1, 2)

	replace := func(round string) {
		for _, b := range c.Brokers {
			from := kindOf(c, b.ID)
			start := time.Now()
			// Kafka's JVM exits with status 143 on SIGTERM.
			if err := b.Term(); err != nil {
				t.Logf("broker %d (%s) after SIGTERM: %v", b.ID, from, err)
			}
			b.SwitchKind(t)
			b.Restart(t)
			waitISRSize(t, conn, topic, partitions, 3, 90*time.Second)
			waitProgress(t, p, fmt.Sprintf("%s: every partition takes writes after broker %d became %s", round, b.ID, kindOf(c, b.ID)), 60*time.Second, 0, 1, 2)
			t.Logf("%s: broker %d replaced, %s to %s, in %v; every ISR full", round, b.ID, from, kindOf(c, b.ID), time.Since(start).Round(time.Millisecond))
		}
	}
	replace("to kbroker")
	for _, b := range c.Brokers {
		if b.Kafka39() {
			t.Fatalf("broker %d is still Kafka", b.ID)
		}
	}
	replace("back to Kafka")

	waitProgress(t, p, "every partition takes writes at the end", 60*time.Second, 0, 1, 2)
	acked := p.stop(t)
	g.stop(t)
	if n := p.failures(); n > 0 {
		t.Errorf("%d records failed", n)
	}
	for _, m := range g.movedBack {
		t.Errorf("committed offset moved back: %s", m)
	}
	v := finishChaos(t, c, conn, topic, partitions, acked)
	t.Logf("rolling replacement: %d acknowledged; lost %d, duplicates %d, moved %d, divergent %d", len(acked), v.Lost, v.Duplicates, v.Moved, v.Divergent)
}
