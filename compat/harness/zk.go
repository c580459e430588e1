package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/kbroker/kbroker/zkstore"
)

// zkScriptTimeout bounds one zk.sh run: start waits for `srvr` itself (30 s
// by default), stop escalates TERM to KILL after 10 s.
const zkScriptTimeout = 60 * time.Second

// ZooKeeper is one standalone ZooKeeper server started by scripts/zk.sh,
// private to a test: its own port and data dir.
type ZooKeeper struct {
	// Addr is host:port of the client port, the value for
	// zookeeper.connect.
	Addr string
	Port int
	// Dir holds zoo.cfg, the data dir, zk.log and zk.pid.
	Dir string

	script string
	// classpath, when set, is ZK_CLASSPATH for zk.sh: the server's jars
	// instead of the Debian package's.
	classpath string
	// netns, when set, is the network namespace zk.sh runs in (under `ip
	// netns exec`), listening on host (ZK_HOST) there: see netns.go.
	netns, host string
}

// StartZooKeeper starts ZooKeeper on a free loopback port with a fresh data
// dir and waits until it serves (`srvr` names its mode). The test's cleanup stops it through
// its pid file (zk.sh stop), so only that process is ever signalled. Start
// it before the brokers: cleanups run last-in first-out, so the brokers end
// before their ZooKeeper does.
func StartZooKeeper(t testing.TB) *ZooKeeper {
	t.Helper()
	return startZooKeeper(t, "")
}

// startZooKeeper is StartZooKeeper with the server's classpath given
// (ZK_CLASSPATH); "" keeps zk.sh's default, the Debian package.
func startZooKeeper(t testing.TB, classpath string) *ZooKeeper {
	t.Helper()
	port := FreePort(t)
	z := &ZooKeeper{
		Addr:      net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Port:      port,
		Dir:       t.TempDir(),
		script:    filepath.Join(RepoRoot(t), "scripts", "zk.sh"),
		classpath: classpath,
	}
	t.Cleanup(func() { z.stop(t) })
	if out, err := z.run("start"); err != nil {
		t.Fatalf("zk.sh start: %v\n%s", err, out)
	}
	return z
}

// stop ends the server through its pid file and, when the test failed,
// keeps its log, over all its starts, beside the brokers'
// (KBROKER_KEEP_LOGS).
func (z *ZooKeeper) stop(t testing.TB) {
	if out, err := z.run("stop"); err != nil {
		t.Logf("zk.sh stop: %v\n%s", err, out)
	}
	if t.Failed() {
		keepLog(t, filepath.Join(z.Dir, "zk.log"), "zk.log")
	}
}

func (z *ZooKeeper) run(cmd string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), zkScriptTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, z.script, cmd, z.Dir, strconv.Itoa(z.Port))
	if z.netns != "" {
		c = exec.CommandContext(ctx, "ip", "netns", "exec", z.netns, z.script, cmd, z.Dir, strconv.Itoa(z.Port))
	}
	c.Env = os.Environ()
	if z.classpath != "" {
		c.Env = append(c.Env, "ZK_CLASSPATH="+z.classpath)
	}
	if z.host != "" {
		c.Env = append(c.Env, "ZK_HOST="+z.host)
	}
	// The server itself is setsid'd by the script and holds none of our
	// pipes, but bound the wait anyway.
	c.WaitDelay = 5 * time.Second
	return c.CombinedOutput()
}

// Connect opens a go-zookeeper session to the server, closed at the end of
// the test, and waits (bounded) until the session is established.
func (z *ZooKeeper) Connect(t testing.TB) *zk.Conn {
	t.Helper()
	const sessionTimeout = 10 * time.Second
	conn, events, err := zk.Connect([]string{z.Addr}, sessionTimeout, zk.WithLogInfo(false),
		zk.WithDialer(zkstore.HandshakeDialer(sessionTimeout)))
	if err != nil {
		t.Fatalf("zk connect %s: %v", z.Addr, err)
	}
	t.Cleanup(conn.Close)
	timeout := time.After(15 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn
			}
		case <-timeout:
			t.Fatalf("zk connect %s: no session within 15s (state %v)", z.Addr, conn.State())
		}
	}
}

// Pid is the server's pid, from the pid file zk.sh keeps in Dir.
func (z *ZooKeeper) Pid() (int, error) {
	b, err := os.ReadFile(filepath.Join(z.Dir, "zk.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Signal sends sig to the server: SIGSTOP and SIGCONT pause and resume it
// (every broker's session may expire meanwhile), SIGKILL ends it until
// Start.
func (z *ZooKeeper) Signal(sig syscall.Signal) error {
	pid, err := z.Pid()
	if err != nil {
		return err
	}
	return syscall.Kill(pid, sig)
}

// Start starts the server again, on the same port and data dir, after a
// SIGKILL, and waits until it answers.
func (z *ZooKeeper) Start(t testing.TB) {
	t.Helper()
	if out, err := z.run("start"); err != nil {
		t.Fatalf("zk.sh start: %v\n%s", err, out)
	}
}

// observerIP is the source address of the harness's own look at the
// server (FourLetterWord): inside 127.0.0.0/8, so it reaches the server on
// loopback, but not 127.0.0.1, so BlockClients does not cut it off.
var observerIP = net.IPv4(127, 0, 0, 2)

// FourLetterWord sends one of the whitelisted four-letter commands
// (ruok, srvr, stat, mntr, cons) from observerIP and returns the server's
// answer.
func (z *ZooKeeper) FourLetterWord(word string) (string, error) {
	if z.netns != "" {
		return "", fmt.Errorf("FourLetterWord: ZooKeeper runs in network namespace %s, out of the observer address's reach", z.netns)
	}
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: observerIP}}
	conn, err := d.Dial("tcp", z.Addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return "", err
	}
	if _, err := conn.Write([]byte(word)); err != nil {
		return "", err
	}
	// The server closes the connection after its answer.
	out, err := io.ReadAll(conn)
	return string(out), err
}

// BlockClients drops every packet from 127.0.0.1 — the brokers and the
// test's own sessions — to the server's port, with an iptables rule in
// the INPUT chain (root only), until the returned function or the test's
// cleanup removes it. FourLetterWord still gets through.
//
// Pause alone does not make the server's host look frozen: the kernel
// still accepts connections and buffers the clients' pings, and a resumed
// server that reads them before its session expirer runs keeps those
// sessions alive. Blocking the clients as well leaves the server nothing
// from them until the test lifts the block.
func (z *ZooKeeper) BlockClients(t testing.TB) (unblock func()) {
	t.Helper()
	if z.netns != "" {
		t.Fatalf("BlockClients is for a ZooKeeper on loopback; this one runs in network namespace %s", z.netns)
	}
	rule := []string{"INPUT", "-i", "lo", "-p", "tcp", "-s", "127.0.0.1", "-d", "127.0.0.1",
		"--dport", strconv.Itoa(z.Port), "-j", "DROP"}
	iptables := func(op string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "iptables", append([]string{"-w", op}, rule...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("iptables %s %v: %v: %s", op, rule, err, out)
		}
		return nil
	}
	if err := iptables("-I"); err != nil {
		t.Fatalf("block ZooKeeper's clients (needs root and iptables): %v", err)
	}
	var once sync.Once
	unblock = func() {
		once.Do(func() {
			if err := iptables("-D"); err != nil {
				t.Errorf("unblock ZooKeeper's clients: %v", err)
			}
		})
	}
	t.Cleanup(unblock)
	return unblock
}

// Ephemerals is the server's count of ephemeral znodes (mntr's
// zk_ephemerals_count): 0 once every session that held one has ended.
func (z *ZooKeeper) Ephemerals() (int, error) {
	out, err := z.FourLetterWord("mntr")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "zk_ephemerals_count"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("no zk_ephemerals_count in mntr: %q", out)
}
