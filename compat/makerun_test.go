package compat

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// TestMakeRun is the README's quick start: `make run` starts a standalone
// broker from config/server.properties, the Java console producer sends
// 10,000 lines to a topic it auto-creates, the console consumer in a group
// reads them back in order, and kafka-consumer-groups shows lag 0. The port
// and data dir are moved off 9092 and ./data so the test cannot collide
// with a broker the developer is running.
func TestMakeRun(t *testing.T) {
	root := harness.RepoRoot(t)
	harness.Build(t)
	port := harness.FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	data := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "run", "DATA="+data,
		"RUN_ARGS=--override listeners=PLAINTEXT://"+addr+" --override metrics.listener=")
	cmd.Dir = root
	logPath := data + ".log"
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// make and the broker share a process group, ended together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("make run output:\n%s", tail(string(out), 8000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("make run: no broker on %s", addr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	consoleRoundTrip(t, addr, "quickstart", "g")
}
