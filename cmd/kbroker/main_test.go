package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args      []string
		path      string
		overrides []string
		bad       bool
	}{
		{args: []string{"s.properties"}, path: "s.properties"},
		{args: []string{"s.properties", "--override", "a=1", "--override=b=2=3"}, path: "s.properties", overrides: []string{"a=1", "b=2=3"}},
		{args: []string{"--override", "a=1", "s.properties"}, path: "s.properties", overrides: []string{"a=1"}},
		{args: nil, bad: true},
		{args: []string{"s.properties", "--override"}, bad: true},
		{args: []string{"s.properties", "--override", "novalue"}, bad: true},
		{args: []string{"s.properties", "--verbose"}, bad: true},
		{args: []string{"a", "b"}, bad: true},
	}
	for _, tt := range tests {
		path, overrides, err := parseArgs(tt.args)
		if tt.bad {
			if err == nil {
				t.Errorf("%q: accepted", tt.args)
			}
			continue
		}
		if err != nil || path != tt.path || !reflect.DeepEqual(overrides, tt.overrides) {
			t.Errorf("%q: got %q %q %v", tt.args, path, overrides, err)
		}
	}
}

// buildBinary compiles cmd/kbroker once per test run.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kbroker-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kbroker")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := buildBinary(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

func runBinary(t *testing.T, args ...string) (exitCode int, stderr string) {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var buf bytes.Buffer
	cmd.Stderr = &buf
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, buf.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), buf.String()
	}
	t.Fatalf("run: %v", err)
	return 0, ""
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBinaryRefusesBadValue(t *testing.T) {
	path := writeFile(t, "num.partitions=many\n")
	code, stderr := runBinary(t, path)
	if code != exitFailure || !strings.Contains(stderr, "num.partitions") || !strings.Contains(stderr, "many") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	// An override is checked the same way, and wins over the file.
	code, stderr = runBinary(t, writeFile(t, ""), "--override", "message.max.bytes=-5")
	if code != exitFailure || !strings.Contains(stderr, "message.max.bytes") {
		t.Fatalf("override: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestBinaryMissingConfig(t *testing.T) {
	code, stderr := runBinary(t, filepath.Join(t.TempDir(), "absent.properties"))
	if code == 0 || !strings.Contains(stderr, "absent.properties") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestBinaryUsage(t *testing.T) {
	if code, stderr := runBinary(t); code != exitUsage || !strings.Contains(stderr, "usage") {
		t.Fatalf("no args: exit %d, stderr:\n%s", code, stderr)
	}
	if code, _ := runBinary(t, "x.properties", "--override"); code != exitUsage {
		t.Fatalf("dangling --override: exit %d", code)
	}
}

// TestBinaryServesMetricsAndStopsOnSIGTERM starts a real broker on ephemeral
// ports, reads /metrics, and checks that SIGTERM ends it cleanly.
func TestBinaryServesMetricsAndStopsOnSIGTERM(t *testing.T) {
	bin, err := buildBinary()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	dir := t.TempDir()
	path := writeFile(t, "listeners=PLAINTEXT://127.0.0.1:0\nlog.dirs="+filepath.Join(dir, "data")+
		"\nmetrics.listener=127.0.0.1:0\npprof.enable=true\noffsets.topic.replication.factor=1\nsurprise.key=1\n")
	cmd := exec.Command(bin, path)
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed when the process is gone; waitErr is then its result.
	exited := make(chan struct{})
	var waitErr error
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	// Scan stderr for the metrics address, keeping the log for failures.
	var logMu sync.Mutex
	var logText strings.Builder
	addrCh := make(chan string, 1)
	scanDone := make(chan struct{})
	go func() {
		defer close(scanDone)
		re := regexp.MustCompile(`msg="serving metrics" addr=(\S+)`)
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			logMu.Lock()
			logText.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrCh <- m[1]
			}
		}
	}()
	go func() {
		<-scanDone
		waitErr = cmd.Wait()
		close(exited)
	}()
	logs := func() string { logMu.Lock(); defer logMu.Unlock(); return logText.String() }

	var addr string
	select {
	case addr = <-addrCh:
	case <-exited:
		t.Fatalf("exited early (%v):\n%s", waitErr, logs())
	case <-time.After(20 * time.Second):
		t.Fatalf("no metrics address logged:\n%s", logs())
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, p := range []string{"/metrics", "/debug/pprof/"} {
		resp, err := client.Get("http://" + addr + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", p, resp.Status)
		}
		if p == "/metrics" && !bytes.Contains(body, []byte("go_goroutines")) {
			t.Fatalf("/metrics lacks go_goroutines:\n%s", body)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", waitErr, logs())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after SIGTERM:\n%s", logs())
	}
	if l := logs(); !strings.Contains(l, "surprise.key") || !strings.Contains(l, "level=WARN") {
		t.Errorf("unknown key not warned about:\n%s", l)
	}
}
