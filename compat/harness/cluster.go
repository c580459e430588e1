package harness

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clusterReadyTimeout bounds the wait for every broker to see every other
// in its Metadata: registration plus the controller's UpdateMetadata.
const clusterReadyTimeout = 60 * time.Second

// Cluster is n brokers (broker.id 1..n) sharing one private ZooKeeper.
type Cluster struct {
	ZK      *ZooKeeper
	Brokers []*ClusterBroker
}

// ClusterBroker is a Broker with its broker.id.
type ClusterBroker struct {
	*Broker
	ID int32
}

// clusterDefaults are short timeouts so failure tests finish in seconds:
// a dead broker's session ends after 6 s, a stuck follower leaves the ISR
// after 6 s, a refused controlled shutdown is retried after 0.5 s.
var clusterDefaults = []string{
	"zookeeper.session.timeout.ms=6000",
	"replica.lag.time.max.ms=6000",
	"controlled.shutdown.retry.backoff.ms=500",
}

// StartCluster starts ZooKeeper and n brokers in cluster mode, each on a
// free loopback port with its own log dir, and waits until every broker
// answers ApiVersions and lists all n brokers in its Metadata. Overrides
// (key=value) apply to every broker, after the harness's settings.
func StartCluster(t testing.TB, n int, overrides ...string) *Cluster {
	t.Helper()
	return StartClusterPerBroker(t, n, nil, overrides...)
}

// StartClusterPerBroker is StartCluster with settings that differ between
// brokers (broker.rack, say): perBroker(id)'s overrides come last and win.
func StartClusterPerBroker(t testing.TB, n int, perBroker func(id int32) []string, overrides ...string) *Cluster {
	t.Helper()
	rf := min(n, 3)
	brokerOverrides := func(id int32) []string {
		o := slices.Clone(overrides)
		if perBroker != nil {
			o = append(o, perBroker(id)...)
		}
		return o
	}
	c := &Cluster{}
	if Apache() {
		c.Brokers = newApacheCluster(t, n, rf, brokerOverrides)
		startTogether(t, c.Brokers)
	} else {
		bin := Build(t)
		c.ZK = StartZooKeeper(t)
		for i := 1; i <= n; i++ {
			c.Brokers = append(c.Brokers, newClusterBroker(t, bin, int32(i), c.ZK.Addr, rf, brokerOverrides(int32(i))))
		}
		for _, b := range c.Brokers {
			b.start(t)
		}
	}
	c.waitAllStarted(t)
	return c
}

// waitAllStarted waits until the cluster is ready with every broker
// running. WaitReady counts the running brokers only: a broker that died
// at start-up (a port taken, say) must fail the start, not shrink the
// cluster.
func (c *Cluster) waitAllStarted(t testing.TB) {
	t.Helper()
	c.WaitReady(t)
	for _, b := range c.Brokers {
		if !b.Running() {
			t.Fatalf("broker %d exited during start-up; its log: %s", b.ID, b.LogPath)
		}
	}
}

func newClusterBroker(t testing.TB, bin string, id int32, zkAddr string, rf int, overrides []string) *ClusterBroker {
	t.Helper()
	b := newBroker(t, bin, append(slices.Clone(clusterDefaults), overrides...))
	return configureClusterBroker(t, b, id, zkAddr, rf)
}

// configureClusterBroker writes the cluster-mode config of a laid-out
// broker (listening on b.Addr) and registers it for the test's cleanup.
func configureClusterBroker(t testing.TB, b *Broker, id int32, zkAddr string, rf int) *ClusterBroker {
	t.Helper()
	props := fmt.Sprintf(`# written by compat/harness (cluster)
broker.id=%[1]d
listeners=PLAINTEXT://%[2]s
advertised.listeners=PLAINTEXT://%[2]s
log.dirs=%[3]s
zookeeper.connect=%[4]s
num.partitions=1
default.replication.factor=%[5]d
offsets.topic.replication.factor=%[5]d
transaction.state.log.replication.factor=%[5]d
transaction.state.log.min.isr=%[6]d
group.initial.rebalance.delay.ms=0
`, id, b.Addr, b.LogDir, zkAddr, rf, min(rf, 2))
	if err := os.WriteFile(b.ConfigPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	return registerClusterBroker(t, b, id)
}

// registerClusterBroker makes b broker id of a cluster, stopped (and its
// log shown on failure) at the end of the test.
func registerClusterBroker(t testing.TB, b *Broker, id int32) *ClusterBroker {
	cb := &ClusterBroker{Broker: b, ID: id}
	t.Cleanup(func() {
		b.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("broker %d (%s) log %s, tail:\n%s", id, b.Addr, b.LogPath, tailFile(b.LogPath, 24<<10))
		}
		keepLog(t, b.LogPath, fmt.Sprintf("broker-%d.log", id))
	})
	return cb
}

// Broker returns the broker with broker.id id.
func (c *Cluster) Broker(id int32) *ClusterBroker {
	for _, b := range c.Brokers {
		if b.ID == id {
			return b
		}
	}
	return nil
}

// Addrs lists the addresses of the brokers whose process is running.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, b := range c.Brokers {
		if b.Running() {
			out = append(out, b.Addr)
		}
	}
	return out
}

// Restart starts a stopped broker again and waits until the running
// brokers all list it, and it lists them, in Metadata.
func (c *Cluster) Restart(t testing.TB, b *ClusterBroker) {
	t.Helper()
	b.Restart(t)
	c.WaitReady(t)
}

// WaitReady waits until every running broker's Metadata lists exactly the
// running brokers.
func (c *Cluster) WaitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(clusterReadyTimeout)
	var last error
	for time.Now().Before(deadline) {
		if last = c.checkReady(); last == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("cluster not ready within %v: %v", clusterReadyTimeout, last)
}

func (c *Cluster) checkReady() error {
	var want []int32
	for _, b := range c.Brokers {
		if b.Running() {
			want = append(want, b.ID)
		}
	}
	for _, b := range c.Brokers {
		if !b.Running() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		resp, err := MetadataFrom(ctx, b.Addr)
		cancel()
		if err != nil {
			return fmt.Errorf("broker %d: %w", b.ID, err)
		}
		var got []int32
		for _, rb := range resp.Brokers {
			got = append(got, rb.NodeID)
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("broker %d lists brokers %v, want %v", b.ID, got, want)
		}
	}
	return nil
}

// MetadataFrom sends one Metadata request to exactly the broker at addr
// (not to whichever broker a client would pick): for the named topics, or
// for every topic when none is named.
func MetadataFrom(ctx context.Context, addr string, topics ...string) (*kmsg.MetadataResponse, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.DialTimeout(2*time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, rt)
	}
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("no seed broker for %s", addr)
	}
	resp, err := seeds[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// Pause stops the broker process with SIGSTOP: it keeps its sockets and
// its ZooKeeper session until the session times out, like a long GC pause.
func (b *Broker) Pause() error { return b.signal(syscall.SIGSTOP) }

// Resume continues a paused broker with SIGCONT.
func (b *Broker) Resume() error { return b.signal(syscall.SIGCONT) }

// DumpGoroutines sends SIGQUIT, on which a Go process (kbroker) writes
// every goroutine's stack to its log and exits, and waits for the exit: a
// test that finds the cluster stuck calls it before failing. A JVM writes
// a thread dump and keeps running.
func (b *Broker) DumpGoroutines() {
	if b.signal(syscall.SIGQUIT) != nil {
		return
	}
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

func (b *Broker) signal(sig syscall.Signal) error {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil || isClosed(done) {
		return fmt.Errorf("broker %s is not running", b.Addr)
	}
	return cmd.Process.Signal(sig)
}

// KeepDir copies directory src into $KBROKER_KEEP_LOGS/<test name>/name
// when that variable is set: a partition's replicas that diverged, say,
// are evidence the end of the test would otherwise remove.
func KeepDir(t testing.TB, src, name string) {
	t.Helper()
	dir := os.Getenv("KBROKER_KEEP_LOGS")
	if dir == "" {
		return
	}
	dst := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), name)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Logf("keep %s: %v", src, err)
		return
	}
	t.Logf("kept %s in %s", src, dst)
}

// keepLog copies a log into $KBROKER_KEEP_LOGS/<test name>/ when that
// variable is set: the test's temp dir, and the log with it, is removed at
// the end, and a passing run's logs can still tell why it was slow.
func keepLog(t testing.TB, path, name string) {
	dir := os.Getenv("KBROKER_KEEP_LOGS")
	if dir == "" {
		return
	}
	// The log's own directory (a fresh temp dir) keeps runs of the same
	// test apart, as with -count.
	dir = filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+"-"+filepath.Base(filepath.Dir(filepath.Dir(path))))
	data, err := os.ReadFile(path)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	if err != nil {
		t.Logf("keep log %s: %v", path, err)
	}
}
