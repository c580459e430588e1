package harness

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Apache Kafka itself, as a reference for tests that check their own
// logic: the same client code run against Kafka must pass.

// kafkaJVMOpts keep three nodes inside a small machine.
var kafkaJVMOpts = []string{"-Xmx512M", "-Xms512M", "-XX:+UseG1GC", "-Djava.awt.headless=true",
	"-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-Dorg.slf4j.simpleLogger.logFile=System.err"}

// StartKafkaCluster starts n Apache Kafka nodes from the jars in
// compat/lib, each a KRaft broker and controller in one process (node.id
// 1..n, a static quorum of all n), on free loopback ports, and waits until
// every node lists all n brokers in Metadata. It returns a Cluster whose
// ZK is nil: Restart, WaitReady and MetadataFrom work as for kbroker;
// Broker.Kill and Term signal the node's JVM by its pid. Replication
// factors of the internal topics are min(n, 3), their min ISR min(n, 2);
// the session and lag timeouts are the kbroker cluster's. Overrides
// (key=value) apply to every node, passed as --override like kbroker's.
func StartKafkaCluster(t testing.TB, n int, overrides ...string) *Cluster {
	t.Helper()
	root := RepoRoot(t)
	lib := filepath.Join(root, "compat", "lib")
	if m, _ := filepath.Glob(filepath.Join(lib, "kafka_2.13-*.jar")); len(m) == 0 {
		t.Fatalf("no Kafka server jar in %s; run `make deps`", lib)
	}
	c := &Cluster{}
	var voters []string
	cports := map[int32]int{}
	for i := int32(1); i <= int32(n); i++ {
		cports[i] = FreePort(t)
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i, cports[i]))
	}
	clusterID := kafkaClusterID(t)
	rf, minISR := min(n, 3), min(n, 2)
	for i := int32(1); i <= int32(n); i++ {
		b := newBroker(t, "kafka.Kafka", overrides)
		b.wrapper = append(append([]string{"java"}, kafkaJVMOpts...), "-cp", filepath.Join(lib, "*"))
		props := fmt.Sprintf(`# written by compat/harness (Apache Kafka, KRaft)
process.roles=broker,controller
node.id=%[1]d
controller.quorum.voters=%[2]s
listeners=PLAINTEXT://%[3]s,CONTROLLER://127.0.0.1:%[4]d
advertised.listeners=PLAINTEXT://%[3]s
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%[5]s
num.partitions=1
default.replication.factor=%[6]d
offsets.topic.replication.factor=%[6]d
transaction.state.log.replication.factor=%[6]d
transaction.state.log.min.isr=%[7]d
share.coordinator.state.topic.replication.factor=%[6]d
share.coordinator.state.topic.min.isr=%[7]d
group.initial.rebalance.delay.ms=0
broker.session.timeout.ms=6000
broker.heartbeat.interval.ms=1000
replica.lag.time.max.ms=6000
`, i, strings.Join(voters, ","), b.Addr, cports[i], b.LogDir, rf, minISR)
		if err := os.WriteFile(b.ConfigPath, []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		formatKafka(t, lib, clusterID, b)
		cb := &ClusterBroker{Broker: b, ID: i}
		id := i
		t.Cleanup(func() {
			b.stop(syscall.SIGKILL)
			if t.Failed() {
				t.Logf("kafka node %d (%s) log %s, tail:\n%s", id, b.Addr, b.LogPath, tailFile(b.LogPath, 16<<10))
			}
			keepLog(t, b.LogPath, fmt.Sprintf("kafka-%d.log", id))
		})
		c.Brokers = append(c.Brokers, cb)
	}
	// Every node must be started before any can answer: a KRaft broker
	// waits for the controller quorum, which needs a majority of voters.
	for _, b := range c.Brokers {
		b.launch(t)
	}
	for _, b := range c.Brokers {
		if err := waitReady(b.Addr, b.done, startTimeout); err != nil {
			t.Fatalf("kafka node %d not ready: %v\nlog tail:\n%s", b.ID, err, tailFile(b.LogPath, 16<<10))
		}
	}
	c.WaitReady(t)
	return c
}

// kafkaClusterID is a random Kafka Uuid in its string form (URL-safe
// base64 of 16 bytes, unpadded), not starting with '-', which the tools
// would read as a flag.
func kafkaClusterID(t testing.TB) string {
	for {
		var id [16]byte
		if _, err := rand.Read(id[:]); err != nil {
			t.Fatal(err)
		}
		s := base64.RawURLEncoding.EncodeToString(id[:])
		if s[0] != '-' {
			return s
		}
	}
}

// formatKafka writes the node's meta.properties with Kafka's StorageTool,
// as a deployment does before the first start.
func formatKafka(t testing.TB, lib, clusterID string, b *Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-cp", filepath.Join(lib, "*"), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"kafka.tools.StorageTool", "format", "-t", clusterID, "-c", b.ConfigPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("StorageTool format %s: %v\n%s", b.ConfigPath, err, out)
	}
}
