package compat

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// TestToolWrappers checks every wrapper in compat/bin starts its tool: a
// wrong main class or a missing jar shows here rather than in a test that
// needs a broker.
func TestToolWrappers(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(harness.RepoRoot(t), "compat", "bin", "kafka-*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no wrappers in compat/bin: %v", err)
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, time.Minute)
			// The argparse4j tools (producer perf test, verifiable producer)
			// have no --version; their --help prints usage and exits 1, so
			// only the usage text tells the main class was found.
			arg, want, argparse := "--version", "4.4.0", false
			switch name {
			case "kafka-producer-perf-test":
				arg, want, argparse = "--help", "--num-records NUM-RECORDS", true
			case "kafka-verifiable-producer":
				arg, want, argparse = "--help", "--max-messages MAX-MESSAGES", true
			}
			out, errOut, err := harness.RunTool(t, ctx, name, arg)
			if (err != nil && !argparse) || !strings.Contains(out+errOut, want) {
				t.Fatalf("%s %s: %v, want %q in output:\n%s\n%s", name, arg, err, want, out, tail(errOut, 2000))
			}
		})
	}
}

// TestPerfTools runs Kafka's producer and consumer perf tests against the
// broker: a smoke test of the paths benchmarks use.
func TestPerfTools(t *testing.T) {
	b := harness.StartBroker(t)
	const topic, n = "perf", "50000"
	createTopic(t, b.Addr, topic, 3, nil)
	out := tool(t, "kafka-producer-perf-test", "--topic", topic, "--num-records", n, "--record-size", "200",
		"--throughput", "-1", "--bootstrap-server", b.Addr, "--command-property", "acks=all", "compression.type=lz4")
	if !regexp.MustCompile(`(?m)^` + n + ` records sent`).MatchString(out) {
		t.Fatalf("kafka-producer-perf-test did not report %s records sent:\n%s", n, tail(out, 2000))
	}
	out = tool(t, "kafka-consumer-perf-test", "--bootstrap-server", b.Addr, "--topic", topic,
		"--num-records", n, "--timeout", "60000")
	// The summary line is CSV: start, end, MB, MB/s, count, count/s, ...
	if !regexp.MustCompile(`(?m)^[^,]+, [^,]+, [0-9.]+, [0-9.]+, ` + n + `, `).MatchString(out) {
		t.Fatalf("kafka-consumer-perf-test did not consume %s records:\n%s", n, tail(out, 2000))
	}
}
