package zkstore

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Why a ZooKeeper connection ended is logged as a warning; reconnect
// attempts stay at debug.
func TestZooKeeperClientLogLevels(t *testing.T) {
	var buf bytes.Buffer
	l := slogPrintf{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	l.Printf("failed to connect to %s: %v", "127.0.0.1:2181", "refused")
	if buf.Len() != 0 {
		t.Fatalf("a reconnect attempt logged above debug: %s", buf.String())
	}
	l.Printf("recv loop terminated: %v", "i/o timeout")
	if out := buf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "recv loop terminated: i/o timeout") {
		t.Fatalf("connection end logged as %q", out)
	}
}
