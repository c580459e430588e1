package harness

import (
	"slices"
	"testing"
)

// StartMixedCluster starts ZooKeeper and one broker per entry of kafka39,
// with broker.id 1, 2, ...: Apache Kafka 3.9.1 in ZooKeeper mode (the jars
// of compat/lib39, scripts/deps-kafka39.sh) where the entry is true,
// kbroker where it is false. Every broker reads the same server.properties
// settings, overrides last (inter.broker.protocol.version, say), and is
// killed, paused and restarted by pid like any other ClusterBroker; a Kafka
// broker's restart is retried while Kafka exits at start-up, as a service
// manager would. It returns once every broker lists all of them.
func StartMixedCluster(t testing.TB, kafka39 []bool, overrides ...string) *Cluster {
	t.Helper()
	if Apache() {
		t.Fatal("harness: StartMixedCluster chooses each broker's kind itself (KBROKER_APACHE_KAFKA is set)")
	}
	var bin, lib string
	if slices.Contains(kafka39, true) {
		lib = kafka39Lib(t)
	}
	if slices.Contains(kafka39, false) {
		bin = Build(t)
	}
	rf := min(len(kafka39), 3)
	c := &Cluster{ZK: StartZooKeeper(t)}
	for i, isKafka := range kafka39 {
		id := int32(i + 1)
		b := newBroker(t, bin, append(slices.Clone(clusterDefaults), overrides...))
		if isKafka {
			b.bin = "java"
			b.apache = &apacheNode{lib: lib, zkMode: true}
		}
		c.Brokers = append(c.Brokers, configureClusterBroker(t, b, id, c.ZK.Addr, rf))
	}
	for _, b := range c.Brokers {
		b.start(t)
	}
	c.waitAllStarted(t)
	return c
}

// Kafka39 reports whether the broker is an Apache Kafka 3.9.1 process.
func (b *ClusterBroker) Kafka39() bool { return b.apache != nil && b.apache.zkMode }

// SwitchKind makes a stopped broker the other kind on the same broker.id,
// config and log dir: Apache Kafka 3.9.1 becomes kbroker and kbroker
// becomes Kafka, as an operator replaces a broker in place. The next
// Restart starts the new kind.
func (b *ClusterBroker) SwitchKind(t testing.TB) {
	t.Helper()
	if b.Running() {
		t.Fatalf("harness: SwitchKind of broker %d, which is still running", b.ID)
	}
	if b.Kafka39() {
		b.bin, b.apache = Build(t), nil
		return
	}
	b.bin, b.apache = "java", &apacheNode{lib: kafka39Lib(t), zkMode: true}
}
