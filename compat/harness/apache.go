package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// apacheEnv, set to 1, makes StartBroker and StartCluster start Apache
// Kafka (KRaft, combined broker and controller, jars from compat/lib) in
// place of kbroker: a test's expectations can then be checked against the
// reference broker before kbroker has the feature. Only what a client sees
// is the same; tests that read ZooKeeper have no ZooKeeper in this mode.
const apacheEnv = "KBROKER_APACHE_KAFKA"

// formatTimeout bounds Kafka's StorageTool format (one JVM start).
const formatTimeout = 2 * time.Minute

// Apache reports whether the harness runs Apache Kafka (KBROKER_APACHE_KAFKA=1).
func Apache() bool { return os.Getenv(apacheEnv) == "1" }

// apacheNode is what a Broker needs to run as a Kafka node: a KRaft node
// (compat/lib), or a ZooKeeper-mode broker (zkMode, Kafka 3.9.1 from
// compat/lib39) that needs no storage format.
type apacheNode struct {
	lib       string
	clusterID string
	// standalone: the node is a quorum of one (format --standalone).
	standalone bool
	formatted  bool
	zkMode     bool
}

// apacheClusterID is a fixed base64 UUID: every node of a cluster must be
// formatted with the same one, and the harness's clusters are private.
const apacheClusterID = "a2Jyb2tlci1jb21wYXQtMQ"

// apacheProps is the KRaft part of a node's server.properties: the node is
// its own controller (standalone) or one of a static quorum of voters.
func apacheProps(id int32, b *Broker, controllerPort int, voters string) string {
	quorum := "controller.quorum.bootstrap.servers=127.0.0.1:" + strconv.Itoa(controllerPort)
	if voters != "" {
		quorum = "controller.quorum.voters=" + voters
	}
	return fmt.Sprintf(`# written by compat/harness (Apache Kafka, KRaft)
process.roles=broker,controller
node.id=%[1]d
%[2]s
listeners=PLAINTEXT://%[3]s,CONTROLLER://127.0.0.1:%[4]d
advertised.listeners=PLAINTEXT://%[3]s
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%[5]s
num.partitions=1
group.initial.rebalance.delay.ms=0
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
`, id, quorum, b.Addr, controllerPort, b.LogDir)
}

// apacheCommand is the command line of a Kafka node; the first start formats
// its log dir.
func (b *Broker) apacheCommand(t testing.TB) *exec.Cmd {
	t.Helper()
	cp := filepath.Join(b.apache.lib, "*")
	if !b.apache.formatted && !b.apache.zkMode {
		args := []string{"-cp", cp, "kafka.tools.StorageTool", "format", "-t", b.apache.clusterID, "-c", b.ConfigPath}
		if b.apache.standalone {
			args = append(args, "--standalone")
		}
		ctx, cancel := context.WithTimeout(context.Background(), formatTimeout)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "java", args...).CombinedOutput(); err != nil {
			t.Fatalf("kafka storage format %s: %v\n%s", b.ConfigPath, err, out)
		}
		b.apache.formatted = true
	}
	level := os.Getenv("KAFKA_LOG_LEVEL") // as for the tools in compat/bin
	if level == "" {
		level = "warn"
	}
	args := []string{"-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true", "-cp", cp,
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=" + level, "-Dorg.slf4j.simpleLogger.logFile=System.err",
		"kafka.Kafka", b.ConfigPath}
	// KAFKA_OPTS too, as for the tools: extra JVM flags, say a logger's level.
	args = append(strings.Fields(os.Getenv("KAFKA_OPTS")), args...)
	for _, o := range b.overrides {
		args = append(args, "--override", o)
	}
	return exec.Command("java", args...)
}

// newApacheBroker lays out a Kafka node like newBroker does a kbroker.
func newApacheBroker(t testing.TB, overrides []string) *Broker {
	t.Helper()
	lib := filepath.Join(RepoRoot(t), "compat", "lib")
	if m, _ := filepath.Glob(filepath.Join(lib, "kafka_2.13-*.jar")); len(m) == 0 {
		t.Fatalf("%s=1: no Kafka jars in %s; run `make deps`", apacheEnv, lib)
	}
	b := newBroker(t, "java", overrides)
	b.apache = &apacheNode{lib: lib, clusterID: apacheClusterID}
	return b
}

// apacheVoters is controller.quorum.voters for nodes 1..n on the given
// controller ports.
func apacheVoters(ports []int) string {
	var v []string
	for i, p := range ports {
		v = append(v, fmt.Sprintf("%d@%s", i+1, net.JoinHostPort("127.0.0.1", strconv.Itoa(p))))
	}
	return strings.Join(v, ",")
}

// newApacheCluster lays out n Kafka nodes (node.id 1..n), all of them
// controllers of one static quorum, with the replication factors
// newClusterBroker gives kbroker.
func newApacheCluster(t testing.TB, n, rf int, overrides func(id int32) []string) []*ClusterBroker {
	t.Helper()
	var ports []int
	for range n {
		ports = append(ports, FreePort(t))
	}
	voters := apacheVoters(ports)
	var out []*ClusterBroker
	for i := 1; i <= n; i++ {
		id := int32(i)
		b := newApacheBroker(t, append(slices.Clone(clusterDefaults), overrides(id)...))
		props := apacheProps(id, b, ports[i-1], voters) + fmt.Sprintf(`default.replication.factor=%[1]d
offsets.topic.replication.factor=%[1]d
transaction.state.log.replication.factor=%[1]d
transaction.state.log.min.isr=%[2]d
`, rf, min(rf, 2))
		if err := os.WriteFile(b.ConfigPath, []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, registerClusterBroker(t, b, id))
	}
	return out
}

// kafka39Lib is where scripts/deps-kafka39.sh puts Kafka 3.9.1's jars.
func kafka39Lib(t testing.TB) string {
	t.Helper()
	lib := filepath.Join(RepoRoot(t), "compat", "lib39")
	if m, _ := filepath.Glob(filepath.Join(lib, "kafka_2.13-3.9.1.jar")); len(m) == 0 {
		t.Fatalf("Kafka 3.9.1: no jars in %s; run scripts/deps-kafka39.sh (make deps-kafka39)", lib)
	}
	return lib
}

// kafka39RestartWindow bounds how long a Kafka 3.9 start is retried: Kafka
// exits at start-up while its previous run's registration is still in
// ZooKeeper (NodeExistsException), and a service manager restarts it
// until that session has expired.
const kafka39RestartWindow = 90 * time.Second

// startRetrying starts a ZooKeeper-mode Kafka node the way a service
// manager would: every time the process exits during start-up, it is
// started again a second later, until it serves or the window is over.
func (b *Broker) startRetrying(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(kafka39RestartWindow)
	for attempt := 1; ; attempt++ {
		b.launch(t)
		b.mu.Lock()
		done := b.done
		b.mu.Unlock()
		err := waitReady(b.Addr, done, time.Until(deadline))
		if err == nil {
			return
		}
		if !isClosed(done) || time.Now().After(deadline) {
			t.Fatalf("Kafka 3.9.1 %s not ready after %d starts: %v\nlog tail:\n%s", b.Addr, attempt, err, tailFile(b.LogPath, 16<<10))
		}
		t.Logf("harness: Kafka 3.9.1 %s exited during start-up (start %d); starting it again in 1s, as a service manager would", b.Addr, attempt)
		time.Sleep(time.Second)
	}
}
