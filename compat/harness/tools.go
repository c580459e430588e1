package harness

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// defaultToolTimeout bounds a tool run whose context has no deadline. JVM
// start-up alone takes a second or two on a small machine.
const defaultToolTimeout = 3 * time.Minute

// ToolPath is the wrapper script for a Kafka command-line tool in compat/bin.
func ToolPath(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(RepoRoot(t), "compat", "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tool %s: %v", name, err)
	}
	lib := filepath.Join(RepoRoot(t), "compat", "lib")
	if m, _ := filepath.Glob(filepath.Join(lib, "kafka-tools-*.jar")); len(m) == 0 {
		t.Fatalf("tool %s: no Kafka jars in %s; run `make deps`", name, lib)
	}
	return p
}

// RunTool runs a Kafka command-line tool from compat/bin with no input.
func RunTool(t testing.TB, ctx context.Context, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return RunToolInput(t, ctx, nil, name, args...)
}

// RunToolInput runs a Kafka command-line tool with stdin from in.
func RunToolInput(t testing.TB, ctx context.Context, in io.Reader, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return run(t, ctx, in, ToolPath(t, name), args...)
}

// Kcat runs kcat (librdkafka's command-line client) with stdin from in (nil
// for none).
func Kcat(t testing.TB, ctx context.Context, in io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat not installed (make deps installs it): %v", err)
	}
	return run(t, ctx, in, path, args...)
}

func run(t testing.TB, ctx context.Context, in io.Reader, path string, args ...string) (string, string, error) {
	t.Helper()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultToolTimeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = in
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// The wrappers exec java, so the context's kill reaches the JVM itself;
	// WaitDelay stops us from hanging on pipes a stray child might hold.
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %v in %v", filepath.Base(path), strings.Join(args, " "), errOrOK(err), time.Since(start).Round(time.Millisecond))
	return stdout.String(), stderr.String(), err
}

func errOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
