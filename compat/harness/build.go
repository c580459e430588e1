package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const modulePath = "github.com/kbroker/kbroker"

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// RepoRoot is the directory holding kbroker's go.mod, found by walking up
// from the working directory (go test runs tests in their package dir).
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := findRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(mod, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("harness: go.mod of " + modulePath + " not found above the working directory")
		}
		dir = parent
	}
}

// Build builds bin/kbroker once per test binary and returns its path. A
// build failure fails every test that needs the broker, with the compiler's
// output.
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if bin := os.Getenv("KBROKER_BIN"); bin != "" {
			buildBin, buildErr = filepath.Abs(bin)
			return
		}
		root, err := findRepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(root, "bin", "kbroker")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", buildBin, "./cmd/kbroker")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = errors.New("go build ./cmd/kbroker: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}
