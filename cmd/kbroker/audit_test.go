package main

import (
	"bytes"
	"strings"
	"testing"
)

// A command line kbroker audit cannot read is exit 2 with its usage, as
// the broker's own.
func TestAuditUsage(t *testing.T) {
	for _, args := range [][]string{
		{"audit"},
		{"audit", "--bootstrap-server"},
		{"audit", "--bootstrap-server", "127.0.0.1:1", "extra"},
		{"audit", "--bootstrap-server", "127.0.0.1:1", "--max-bytes", "0"},
		{"audit", "--nope"},
	} {
		var stderr bytes.Buffer
		if code := run(args, &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		if !strings.Contains(stderr.String(), "usage") && !strings.Contains(stderr.String(), "Usage") {
			t.Errorf("%v: no usage in %q", args, stderr.String())
		}
	}
}

// An unreachable cluster is not a verdict: exit 3.
func TestAuditUnreachable(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"audit", "--bootstrap-server", "127.0.0.1:1", "--timeout", "2s"}, &stderr); code != auditIncomplete {
		t.Fatalf("exit %d, want %d (%s)", code, auditIncomplete, stderr.String())
	}
}
