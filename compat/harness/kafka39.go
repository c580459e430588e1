package harness

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafka39StartTimeout bounds a Kafka 3.9.1 start: JVM start-up, the
// ZooKeeper registration and the controller electing itself.
const kafka39StartTimeout = 90 * time.Second

// Kafka39 is one Apache Kafka 3.9.1 broker in ZooKeeper mode (the jars of
// compat/lib39, from scripts/deps-kafka39.sh) with its own private
// ZooKeeper: the oracle the compatibility tests record Kafka's answers
// from.
type Kafka39 struct {
	// Addr is host:port of the PLAINTEXT listener.
	Addr      string
	Port      int
	LogDir    string
	LogPath   string
	ZooKeeper *ZooKeeper

	cmd  *exec.Cmd
	done chan struct{}
}

// StartKafka39 starts ZooKeeper (3.8.4, the server in the ZooKeeper jar
// Kafka 3.9.1 ships with, so no Debian package is needed) and one Kafka
// 3.9.1 broker (broker.id 0) on free loopback ports, with internal topics
// of replication factor 1, and waits until the broker lists itself in
// Metadata. Overrides are key=value lines appended to server.properties,
// so they win. The test's cleanup stops the broker by its pid (SIGTERM,
// then SIGKILL), then ZooKeeper.
func StartKafka39(t testing.TB, overrides ...string) *Kafka39 {
	t.Helper()
	lib := filepath.Join(RepoRoot(t), "compat", "lib39")
	if m, _ := filepath.Glob(filepath.Join(lib, "kafka_2.13-3.9.1.jar")); len(m) == 0 {
		t.Fatalf("Kafka 3.9.1: no jars in %s; run scripts/deps-kafka39.sh (make deps-kafka39)", lib)
	}
	classpath := filepath.Join(lib, "*")
	zk := startZooKeeper(t, classpath)

	dir := t.TempDir()
	port := FreePort(t)
	k := &Kafka39{
		Addr:      net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Port:      port,
		LogDir:    filepath.Join(dir, "kafka-logs"),
		LogPath:   filepath.Join(dir, "kafka.log"),
		ZooKeeper: zk,
		done:      make(chan struct{}),
	}
	props := fmt.Sprintf(`# written by compat/harness
broker.id=0
zookeeper.connect=%[1]s
listeners=PLAINTEXT://%[2]s
advertised.listeners=PLAINTEXT://%[2]s
log.dirs=%[3]s
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
%[4]s
`, zk.Addr, k.Addr, k.LogDir, strings.Join(overrides, "\n"))
	configPath := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(configPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(k.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	k.cmd = exec.Command("java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-cp", classpath, "kafka.Kafka", configPath)
	k.cmd.Stdout, k.cmd.Stderr = logf, logf
	if err := k.cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start Kafka 3.9.1: %v", err)
	}
	go func() {
		_ = k.cmd.Wait()
		logf.Close()
		close(k.done)
	}()
	t.Cleanup(func() {
		k.stop()
		if t.Failed() {
			t.Logf("Kafka 3.9.1 %s log (%s), tail:\n%s", k.Addr, k.LogPath, tailFile(k.LogPath, 32<<10))
		}
	})
	if err := k.waitListed(); err != nil {
		t.Fatalf("Kafka 3.9.1 %s not ready: %v\nlog tail:\n%s", k.Addr, err, tailFile(k.LogPath, 16<<10))
	}
	return k
}

// waitListed polls Metadata until the broker lists itself: before that,
// the broker answers ApiVersions but has no metadata to create topics
// with.
func (k *Kafka39) waitListed() error {
	deadline := time.Now().Add(kafka39StartTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-k.done:
			return fmt.Errorf("process exited during start-up")
		default:
		}
		if last = k.metadataListsSelf(); last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not listed in its own Metadata within %v: %v", kafka39StartTimeout, last)
}

func (k *Kafka39) metadataListsSelf() error {
	resp, err := probe(k.Addr, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return err
	}
	meta := resp.(*kmsg.MetadataResponse)
	if len(meta.Brokers) == 0 || meta.ControllerID < 0 {
		return fmt.Errorf("metadata lists %d brokers, controller %d", len(meta.Brokers), meta.ControllerID)
	}
	return nil
}

// stop ends the broker it started, by its handle: SIGTERM (controlled
// shutdown), SIGKILL after stopTimeout.
func (k *Kafka39) stop() {
	if isClosed(k.done) {
		return
	}
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(stopTimeout):
		_ = k.cmd.Process.Kill()
		<-k.done
	}
}
