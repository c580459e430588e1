// Package logtest is test support for packages that need a partition log:
// New opens an empty logstore.FileLog, the broker's real log, in the test's
// own temporary directory and closes it when the test ends. Nothing in the
// broker imports it.
//
// logstore's own tests also have MemLog (logstore/memlog_test.go), an
// in-memory model of FileLog that the conformance and differential tests
// compare it with.
package logtest

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/kbroker/kbroker/logstore"
)

// New opens an empty log with cfg in a fresh directory under t.TempDir.
// Its warnings are discarded; it is closed at the end of the test.
func New(t testing.TB, cfg logstore.Config) *logstore.FileLog {
	t.Helper()
	l, err := logstore.OpenFileLog(filepath.Join(t.TempDir(), "test-0"), cfg,
		logstore.FileLogOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("logtest: open log: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("logtest: close log: %v", err)
		}
	})
	return l
}
