package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// javacTimeout bounds one javac run of a program in compat/java.
const javacTimeout = 3 * time.Minute

var javaBuilds = struct {
	sync.Mutex
	dirs map[string]string
}{dirs: map[string]string{}}

// JavaProgram compiles compat/java/<class>.java against the jars in
// compat/lib (once per test binary, and not again while the source is
// unchanged: the classes live in .cache/java/<source hash>) and returns the
// class path to run it with.
func JavaProgram(t testing.TB, class string) string {
	t.Helper()
	root := RepoRoot(t)
	lib := filepath.Join(root, "compat", "lib")
	if m, _ := filepath.Glob(filepath.Join(lib, "kafka-clients-*.jar")); len(m) == 0 {
		t.Fatalf("java %s: no Kafka jars in %s; run `make deps`", class, lib)
	}
	javaBuilds.Lock()
	defer javaBuilds.Unlock()
	if dir, ok := javaBuilds.dirs[class]; ok {
		return dir + string(os.PathListSeparator) + filepath.Join(lib, "*")
	}
	src := filepath.Join(root, "compat", "java", class+".java")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	dir := filepath.Join(root, ".cache", "java", class+"-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, class+".class")); err != nil {
		// Into a fresh dir renamed into place: a compile cut short leaves
		// no half-written cache behind.
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), class+"-tmp-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		ctx, cancel := context.WithTimeout(context.Background(), javacTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "javac", "-nowarn", "-cp", filepath.Join(lib, "*"), "-d", tmp, src).CombinedOutput()
		if err != nil {
			t.Fatalf("javac %s: %v\n%s", src, err, out)
		}
		if err := os.Rename(tmp, dir); err != nil && !exists(filepath.Join(dir, class+".class")) {
			t.Fatal(err)
		}
	}
	javaBuilds.dirs[class] = dir
	return dir + string(os.PathListSeparator) + filepath.Join(lib, "*")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// RunJava runs class (compiled by JavaProgram) with args; the client's own
// logging is at warn, on stderr.
func RunJava(t testing.TB, ctx context.Context, class string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cp := JavaProgram(t, class)
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java not installed: %v", err)
	}
	return run(t, ctx, nil, java, append([]string{"-Xmx256m", "-cp", cp,
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.logFile=System.err",
		class}, args...)...)
}

// TxnClient runs compat/java/TxnClient with args, bounded by timeout, and
// fails the test on a non-zero exit, with the ends of its output.
func TxnClient(t testing.TB, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, errOut, err := RunJava(t, ctx, "TxnClient", args...)
	if err != nil {
		t.Fatalf("TxnClient %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, lastBytes(out, 4000), lastBytes(errOut, 4000))
	}
	return out
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
