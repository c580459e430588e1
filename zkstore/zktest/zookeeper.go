package zktest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main runs a test binary's tests: with KBROKER_TEST_ZK=start it first
// starts a private ZooKeeper with scripts/zk.sh, points the suite at it and
// stops it afterwards. Any other value is used as host:port of a running
// server; unset means the in-memory tree and the local store only. A
// package's TestMain calls os.Exit(zktest.Main(m)).
func Main(m *testing.M) int {
	if os.Getenv("KBROKER_TEST_ZK") != "start" {
		return m.Run()
	}
	return runWithZooKeeper(m)
}

func runWithZooKeeper(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kbroker-zk-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	script, err := zkScript()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	zk := func(cmd string) error {
		c := exec.Command(script, cmd, dir, fmt.Sprint(port))
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		return c.Run()
	}
	if err := zk("start"); err != nil {
		fmt.Fprintln(os.Stderr, "starting ZooKeeper:", err)
		return 1
	}
	defer func() {
		if err := zk("stop"); err != nil {
			fmt.Fprintln(os.Stderr, "stopping ZooKeeper:", err)
		}
	}()
	os.Setenv("KBROKER_TEST_ZK", fmt.Sprintf("127.0.0.1:%d", port))
	return m.Run()
}

// freePort asks the kernel for a port that is free now; ZooKeeper binds it
// a moment later, which is good enough for tests.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// zkScript finds scripts/zk.sh from the module root above the test's
// directory, wherever the package sits.
func zkScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "zk.sh"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test directory")
		}
		dir = parent
	}
}
