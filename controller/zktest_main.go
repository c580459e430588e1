package controller

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

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
	script, err := filepath.Abs(filepath.Join("..", "scripts", "zk.sh"))
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
