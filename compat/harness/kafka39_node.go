package harness

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// kafka39Node is one Apache Kafka 3.9.1 broker process (ZooKeeper mode)
// that can be killed and started again on the same config and log dir,
// for the secured standalone broker and cluster (secure_broker.go).
type kafka39Node struct {
	configPath, logPath, classpath string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	starts int
}

// launch starts the JVM without waiting for it to serve.
func (k *kafka39Node) launch(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(k.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.starts++
	fmt.Fprintf(logf, "=== harness: start %d ===\n", k.starts)
	cmd := exec.Command("java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-cp", k.classpath, "kafka.Kafka", k.configPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start Kafka 3.9.1: %v", err)
	}
	done := make(chan struct{})
	k.cmd, k.done = cmd, done
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
}

func (k *kafka39Node) running() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cmd != nil && !isClosed(k.done)
}

func (k *kafka39Node) exited() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.done
}

// stop signals the process it started and waits; after stopTimeout it
// kills it.
func (k *kafka39Node) stop(sig syscall.Signal) {
	k.mu.Lock()
	cmd, done := k.cmd, k.done
	k.mu.Unlock()
	if cmd == nil || isClosed(done) {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-done
	}
}
