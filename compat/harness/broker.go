package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Bounds on process life cycle waits. Start-up includes log recovery, which
// after a SIGKILL may rescan segments; shutdown is a controlled shutdown.
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
)

// Broker is one kbroker process started by this package.
type Broker struct {
	// Addr is host:port of the PLAINTEXT listener.
	Addr string
	Port int
	// LogDir is log.dirs: kept across Restart, removed with the test's
	// temp dir.
	LogDir     string
	ConfigPath string
	// LogPath collects the broker's stdout and stderr over all its starts.
	LogPath string

	bin       string
	overrides []string
	// wrapper, when set, is a command line the broker runs under (e.g.
	// prlimit --nofile=512:512): the broker's binary and arguments are
	// appended to it.
	wrapper []string

	// apache, when set, makes this an Apache Kafka node (KBROKER_APACHE_KAFKA).
	apache *apacheNode

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	waited error
	starts int
}

// StartBroker starts a standalone broker (no zookeeper.connect) on a free
// loopback port and waits until it answers ApiVersions. Overrides are
// key=value pairs passed as --override, after the harness's own settings,
// so they win.
func StartBroker(t testing.TB, overrides ...string) *Broker {
	t.Helper()
	return StartBrokerWrapped(t, nil, overrides...)
}

// StartBrokerWrapped is StartBroker with the broker run under a wrapper
// command (for example {"prlimit", "--nofile=512:512"}); the wrapper must
// exec the broker so that Pid and signals reach the broker itself. A nil
// wrapper is StartBroker.
func StartBrokerWrapped(t testing.TB, wrapper []string, overrides ...string) *Broker {
	t.Helper()
	// A single broker cannot hold 3 replicas of __consumer_offsets or
	// __transaction_state, and Kafka's 3 s initial rebalance delay would
	// only slow every group test.
	const single = `offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
`
	var b *Broker
	var props string
	if Apache() {
		b = newApacheBroker(t, overrides)
		b.apache.standalone = true
		props = apacheProps(0, b, FreePort(t), "") + single
	} else {
		b = newBroker(t, Build(t), overrides)
		props = fmt.Sprintf(`# written by compat/harness
broker.id=0
listeners=PLAINTEXT://%[1]s
advertised.listeners=PLAINTEXT://%[1]s
log.dirs=%[2]s
num.partitions=1
group.initial.rebalance.delay.ms=0
`, b.Addr, b.LogDir) + single
	}
	b.wrapper = wrapper
	if err := os.WriteFile(b.ConfigPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("broker %s log (%s), tail:\n%s", b.Addr, b.LogPath, tailFile(b.LogPath, 64<<10))
		}
		keepLog(t, b.LogPath, "broker.log")
	})
	b.start(t)
	return b
}

// newBroker lays out a broker that is not started yet: a free loopback
// port, and its log dir, config and log in a fresh temp dir.
func newBroker(t testing.TB, bin string, overrides []string) *Broker {
	t.Helper()
	dir := t.TempDir()
	port := FreePort(t)
	return &Broker{
		Addr:       net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Port:       port,
		LogDir:     filepath.Join(dir, "kafka-logs"),
		ConfigPath: filepath.Join(dir, "server.properties"),
		LogPath:    filepath.Join(dir, "kbroker.log"),
		bin:        bin,
		overrides:  overrides,
	}
}

// Restart starts the broker again on the same port, config and log dir. The
// previous process must have been stopped with Term or Kill.
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	if b.Running() {
		t.Fatal("harness: Restart of a broker that is still running")
	}
	b.start(t)
}

func (b *Broker) start(t testing.TB) {
	t.Helper()
	if b.apache != nil && b.apache.zkMode {
		b.startRetrying(t)
		return
	}
	b.launch(t)
	b.waitStarted(t)
}

// waitStarted waits until the launched process answers ApiVersions.
func (b *Broker) waitStarted(t testing.TB) {
	t.Helper()
	if err := waitReady(b.Addr, b.done, startTimeout); err != nil {
		t.Fatalf("broker %s not ready: %v\nlog tail:\n%s", b.Addr, err, tailFile(b.LogPath, 16<<10))
	}
}

// launch starts the process without waiting for it to answer.
func (b *Broker) launch(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(b.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if b.apache != nil {
		// Outside b.mu: the first start formats the log dir first.
		cmd = b.apacheCommand(t)
	}
	b.mu.Lock()
	b.starts++
	fmt.Fprintf(logf, "=== harness: start %d of %s ===\n", b.starts, b.Addr)
	args := []string{b.ConfigPath}
	for _, o := range b.overrides {
		args = append(args, "--override", o)
	}
	switch {
	case cmd != nil && len(b.wrapper) > 0:
		cmd = exec.Command(b.wrapper[0], append(append(b.wrapper[1:len(b.wrapper):len(b.wrapper)], cmd.Path), cmd.Args[1:]...)...)
	case cmd != nil:
	case len(b.wrapper) > 0:
		cmd = exec.Command(b.wrapper[0], append(append(b.wrapper[1:len(b.wrapper):len(b.wrapper)], b.bin), args...)...)
	default:
		cmd = exec.Command(b.bin, args...)
	}
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		b.mu.Unlock()
		logf.Close()
		t.Fatalf("start %s: %v", b.bin, err)
	}
	done := make(chan struct{})
	b.cmd, b.done = cmd, done
	b.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close()
		b.mu.Lock()
		b.waited = err
		b.mu.Unlock()
		close(done)
	}()
}

// waitReady polls ApiVersions until the broker answers, the process exits
// or the timeout passes.
func waitReady(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("process exited during start-up")
		default:
		}
		last = pingAPIVersions(addr)
		if last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no ApiVersions answer within %v: %v", timeout, last)
}

func pingAPIVersions(addr string) error {
	resp, err := probe(addr, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		return err
	}
	if code := resp.(*kmsg.ApiVersionsResponse).ErrorCode; code != 0 {
		return fmt.Errorf("ApiVersions error code %d", code)
	}
	return nil
}

// probe sends one request on a fresh connection, without retries, as a
// readiness check does.
func probe(addr string, req kmsg.Request) (kmsg.Response, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.DialTimeout(time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return cl.Request(ctx, req)
}

// Term sends SIGTERM (controlled shutdown) and waits for the exit; after
// stopTimeout it kills the process and reports that as an error. It returns
// the process's exit error (nil for exit status 0).
func (b *Broker) Term() error { return b.stop(syscall.SIGTERM) }

// Kill sends SIGKILL and waits for the exit.
func (b *Broker) Kill() { b.stop(syscall.SIGKILL) }

// Pid is the process id of the last started broker process, 0 when it
// was never started.
func (b *Broker) Pid() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil || b.cmd.Process == nil {
		return 0
	}
	return b.cmd.Process.Pid
}

// Running reports whether the last started process has not exited.
func (b *Broker) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cmd != nil && !isClosed(b.done)
}

func (b *Broker) stop(sig syscall.Signal) error {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if !isClosed(done) {
		_ = cmd.Process.Signal(sig)
	}
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("broker %s did not exit within %v of %v", b.Addr, stopTimeout, sig)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if sig == syscall.SIGKILL {
		return nil
	}
	return b.waited
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// handedOut holds every port FreePort returned in this test binary: the
// kernel may offer a just-closed port again, and two brokers of one
// cluster given the same port would share an address (one fails to bind).
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreePort returns a loopback TCP port that was free a moment ago and that
// no earlier call returned.
func FreePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for attempt := 0; attempt < 100; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("no fresh loopback port after 100 tries")
	return 0
}

func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	_, err = f.ReadAt(buf, off)
	if err != nil {
		return err.Error()
	}
	return string(buf)
}
