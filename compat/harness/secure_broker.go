package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Listener is one named listener of a secured broker, e.g.
// {Name: "CLIENT", Protocol: "SASL_SSL"}.
type Listener struct {
	Name, Protocol string
}

// SecureOptions describe a secured broker or cluster.
type SecureOptions struct {
	// Kafka39 starts Apache Kafka 3.9.1 (ZooKeeper mode, jars in
	// compat/lib39) instead of kbroker, with the same settings: the
	// reference the security tests are checked against.
	Kafka39 bool
	// Listeners are the secured listeners, each on its own free port,
	// besides the harness's PLAINTEXT one. No name may be PLAINTEXT.
	Listeners []Listener
	// Overrides are key=value settings for every broker, after the
	// harness's own, so they win.
	Overrides []string
}

// SecureNode is one secured broker: kbroker or Kafka 3.9.1.
//
// Every node keeps a PLAINTEXT listener (Addr) besides the secured ones:
// the harness's readiness probe (ApiVersions, Metadata) uses it, which
// needs no authorisation. Tests that check security talk to Listeners.
type SecureNode struct {
	ID int32
	// Addr is host:port of the PLAINTEXT listener.
	Addr string
	// Listeners maps each secured listener's name to its host:port.
	Listeners map[string]string
	// MetricsAddr is kbroker's metrics.listener ("" for Kafka 3.9.1,
	// whose metrics are JMX only).
	MetricsAddr string
	LogPath     string
	LogDir      string

	protocols []Listener
	broker    *Broker
	k39       *kafka39Node
}

// Kafka39 reports whether the node is Apache Kafka 3.9.1.
func (n *SecureNode) Kafka39() bool { return n.k39 != nil }

// Kill sends SIGKILL and waits for the exit.
func (n *SecureNode) Kill() {
	if n.k39 != nil {
		n.k39.stop(syscall.SIGKILL)
		return
	}
	n.broker.Kill()
}

// Running reports whether the node's last process has not exited.
func (n *SecureNode) Running() bool {
	if n.k39 != nil {
		return n.k39.running()
	}
	return n.broker.Running()
}

// Restart starts a stopped node again on the same ports, config and log
// dir, and waits until it answers on its PLAINTEXT listener.
func (n *SecureNode) Restart(t testing.TB) {
	t.Helper()
	if n.Running() {
		t.Fatal("harness: Restart of a node that is still running")
	}
	n.start(t)
}

func (n *SecureNode) start(t testing.TB) {
	t.Helper()
	if n.k39 == nil {
		n.broker.start(t)
		return
	}
	n.k39.launch(t)
	if err := waitListsSelf(n.Addr, n.k39.exited(), kafka39StartTimeout); err != nil {
		t.Fatalf("Kafka 3.9.1 broker %d (%s) not ready: %v\nlog tail:\n%s", n.ID, n.Addr, err, tailFile(n.LogPath, 16<<10))
	}
}

// waitListsSelf polls Metadata until the broker names a controller and
// at least one broker: a ZooKeeper-mode Kafka answers ApiVersions before
// it has metadata.
func waitListsSelf(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("process exited during start-up")
		default:
		}
		resp, err := probe(addr, kmsg.NewPtrMetadataRequest())
		if err == nil {
			meta := resp.(*kmsg.MetadataResponse)
			if len(meta.Brokers) > 0 && meta.ControllerID >= 0 {
				return nil
			}
			err = fmt.Errorf("metadata lists %d brokers, controller %d", len(meta.Brokers), meta.ControllerID)
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not serving Metadata within %v: %v", timeout, last)
}

// SecureCluster is n secured brokers (broker.id 1..n) sharing a private
// ZooKeeper.
type SecureCluster struct {
	ZK    *ZooKeeper
	Nodes []*SecureNode
}

// StartSecureBroker starts one secured broker: a standalone kbroker, or
// Kafka 3.9.1 with its own ZooKeeper, and waits until it serves.
func StartSecureBroker(t testing.TB, opts SecureOptions) *SecureNode {
	t.Helper()
	if opts.Kafka39 {
		zk := startZooKeeper(t, kafka39Classpath(t))
		n := newKafka39SecureNode(t, 0, zk.Addr, 1, opts)
		n.start(t)
		return n
	}
	const single = `offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
`
	b := newBroker(t, Build(t), opts.Overrides)
	n := newSecureNode(t, 0, b.Addr, b.LogPath, b.LogDir, opts.Listeners)
	n.broker = b
	n.MetricsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
	props := fmt.Sprintf(`# written by compat/harness (secured)
broker.id=0
log.dirs=%s
num.partitions=1
group.initial.rebalance.delay.ms=0
metrics.listener=%s
`, b.LogDir, n.MetricsAddr) + single + n.listenerProps()
	writeFile(t, b.ConfigPath, props)
	t.Cleanup(func() {
		b.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("broker %s log (%s), tail:\n%s", b.Addr, b.LogPath, tailFile(b.LogPath, 64<<10))
		}
		keepLog(t, b.LogPath, "broker.log")
	})
	n.start(t)
	return n
}

// StartSecureCluster starts ZooKeeper and n secured brokers (kbroker in
// cluster mode, or Kafka 3.9.1) with the harness's short cluster timeouts
// and internal topics of replication factor min(n, 3), and waits until
// every broker lists all n in Metadata.
func StartSecureCluster(t testing.TB, n int, opts SecureOptions) *SecureCluster {
	t.Helper()
	rf := min(n, 3)
	c := &SecureCluster{}
	if opts.Kafka39 {
		c.ZK = startZooKeeper(t, kafka39Classpath(t))
		for id := 1; id <= n; id++ {
			c.Nodes = append(c.Nodes, newKafka39SecureNode(t, int32(id), c.ZK.Addr, rf, opts))
		}
		for _, node := range c.Nodes {
			node.k39.launch(t)
		}
	} else {
		bin := Build(t)
		c.ZK = StartZooKeeper(t)
		for id := 1; id <= n; id++ {
			b := newBroker(t, bin, append(slices.Clone(clusterDefaults), opts.Overrides...))
			node := newSecureNode(t, int32(id), b.Addr, b.LogPath, b.LogDir, opts.Listeners)
			node.broker = b
			node.MetricsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
			props := fmt.Sprintf(`# written by compat/harness (secured cluster)
broker.id=%[1]d
log.dirs=%[2]s
zookeeper.connect=%[3]s
num.partitions=1
default.replication.factor=%[4]d
offsets.topic.replication.factor=%[4]d
transaction.state.log.replication.factor=%[4]d
transaction.state.log.min.isr=%[5]d
group.initial.rebalance.delay.ms=0
metrics.listener=%[6]s
`, id, b.LogDir, c.ZK.Addr, rf, min(rf, 2), node.MetricsAddr) + node.listenerProps()
			writeFile(t, b.ConfigPath, props)
			registerClusterBroker(t, b, int32(id))
			c.Nodes = append(c.Nodes, node)
		}
		for _, node := range c.Nodes {
			node.broker.launch(t)
		}
	}
	c.WaitReady(t)
	for _, node := range c.Nodes {
		if !node.Running() {
			t.Fatalf("broker %d exited during start-up; its log: %s\n%s", node.ID, node.LogPath, tailFile(node.LogPath, 16<<10))
		}
	}
	return c
}

// Node returns the node with broker.id id.
func (c *SecureCluster) Node(id int32) *SecureNode {
	for _, n := range c.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Restart starts a stopped node again and waits until every running
// node lists exactly the running ones.
func (c *SecureCluster) Restart(t testing.TB, n *SecureNode) {
	t.Helper()
	n.Restart(t)
	c.WaitReady(t)
}

// WaitReady waits until every running node's Metadata (PLAINTEXT) lists
// exactly the running nodes and names a controller.
func (c *SecureCluster) WaitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(max(clusterReadyTimeout, kafka39StartTimeout))
	var last error
	for time.Now().Before(deadline) {
		if last = c.checkReady(); last == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("secured cluster not ready: %v", last)
}

func (c *SecureCluster) checkReady() error {
	var want []int32
	for _, n := range c.Nodes {
		if n.Running() {
			want = append(want, n.ID)
		}
	}
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		resp, err := MetadataFrom(ctx, n.Addr)
		cancel()
		if err != nil {
			return fmt.Errorf("broker %d: %w", n.ID, err)
		}
		var got []int32
		for _, rb := range resp.Brokers {
			got = append(got, rb.NodeID)
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if fmt.Sprint(got) != fmt.Sprint(want) || resp.ControllerID < 0 {
			return fmt.Errorf("broker %d lists brokers %v (controller %d), want %v", n.ID, got, resp.ControllerID, want)
		}
	}
	return nil
}

// newSecureNode gives each secured listener a free port.
func newSecureNode(t testing.TB, id int32, addr, logPath, logDir string, listeners []Listener) *SecureNode {
	t.Helper()
	n := &SecureNode{ID: id, Addr: addr, LogPath: logPath, LogDir: logDir, Listeners: map[string]string{}}
	for _, l := range listeners {
		if l.Name == "PLAINTEXT" || n.Listeners[l.Name] != "" {
			t.Fatalf("harness: listener name %q is taken", l.Name)
		}
		n.Listeners[l.Name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
	}
	n.protocols = listeners
	return n
}

// listenerProps are listeners, advertised.listeners and
// listener.security.protocol.map for the PLAINTEXT and secured listeners.
func (n *SecureNode) listenerProps() string {
	ls := []string{"PLAINTEXT://" + n.Addr}
	protos := []string{"PLAINTEXT:PLAINTEXT"}
	for _, l := range n.protocols {
		ls = append(ls, l.Name+"://"+n.Listeners[l.Name])
		protos = append(protos, l.Name+":"+l.Protocol)
	}
	return fmt.Sprintf("listeners=%[1]s\nadvertised.listeners=%[1]s\nlistener.security.protocol.map=%[2]s\n",
		strings.Join(ls, ","), strings.Join(protos, ","))
}

func kafka39Classpath(t testing.TB) string {
	t.Helper()
	lib := filepath.Join(RepoRoot(t), "compat", "lib39")
	if m, _ := filepath.Glob(filepath.Join(lib, "kafka_2.13-3.9.1.jar")); len(m) == 0 {
		t.Fatalf("Kafka 3.9.1: no jars in %s; run scripts/deps-kafka39.sh (make deps-kafka39)", lib)
	}
	return filepath.Join(lib, "*")
}

// newKafka39SecureNode lays out (without starting) a Kafka 3.9.1 broker
// with ZooKeeper at zkAddr and internal topics of replication factor rf.
// Overrides are appended to server.properties, so they win.
func newKafka39SecureNode(t testing.TB, id int32, zkAddr string, rf int, opts SecureOptions) *SecureNode {
	t.Helper()
	dir := t.TempDir()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
	n := newSecureNode(t, id, addr, filepath.Join(dir, "kafka.log"), filepath.Join(dir, "kafka-logs"), opts.Listeners)
	extra := ""
	if rf > 1 {
		extra = strings.Join(clusterDefaults, "\n") + "\n"
	}
	props := fmt.Sprintf(`# written by compat/harness (secured Kafka 3.9.1)
broker.id=%[1]d
zookeeper.connect=%[2]s
log.dirs=%[3]s
num.partitions=1
default.replication.factor=%[4]d
offsets.topic.replication.factor=%[4]d
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=%[4]d
transaction.state.log.min.isr=%[5]d
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
`, id, zkAddr, n.LogDir, rf, min(rf, 2)) + extra + n.listenerProps() + strings.Join(opts.Overrides, "\n") + "\n"
	configPath := filepath.Join(dir, "server.properties")
	writeFile(t, configPath, props)
	n.k39 = &kafka39Node{configPath: configPath, logPath: n.LogPath, classpath: kafka39Classpath(t)}
	t.Cleanup(func() {
		n.k39.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("Kafka 3.9.1 broker %d (%s) log %s, tail:\n%s", id, addr, n.LogPath, tailFile(n.LogPath, 24<<10))
		}
		keepLog(t, n.LogPath, fmt.Sprintf("kafka39-%d.log", id))
	})
	if err := os.MkdirAll(n.LogDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return n
}
