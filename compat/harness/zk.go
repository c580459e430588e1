package harness

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkScriptTimeout bounds one zk.sh run: start waits for `ruok` itself (30 s
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
// dir and waits until it answers `ruok`. The test's cleanup stops it through
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
	t.Cleanup(func() {
		if out, err := z.run("stop"); err != nil {
			t.Logf("zk.sh stop: %v\n%s", err, out)
		}
	})
	if out, err := z.run("start"); err != nil {
		t.Fatalf("zk.sh start: %v\n%s", err, out)
	}
	return z
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
	conn, events, err := zk.Connect([]string{z.Addr}, 10*time.Second, zk.WithLogInfo(false))
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
