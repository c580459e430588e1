package compat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// groupRow is one partition line of kafka-consumer-groups --describe.
type groupRow map[string]string

// describeGroup runs kafka-consumer-groups --describe and parses its table
// by the header's column names, so column order changes do not matter.
func describeGroup(t *testing.T, addr, group string) []groupRow {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	out, errOut, err := harness.RunTool(t, ctx, "kafka-consumer-groups",
		"--bootstrap-server", addr, "--describe", "--group", group)
	if err != nil {
		t.Fatalf("kafka-consumer-groups --describe: %v\n%s\n%s", err, out, errOut)
	}
	var header []string
	var rows []groupRow
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "GROUP" {
			header = f
			continue
		}
		if header == nil || f[0] != group || len(f) < len(header)-3 {
			continue
		}
		row := groupRow{}
		for i, h := range header {
			if i < len(f) {
				row[h] = f[i]
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatalf("kafka-consumer-groups --describe %s: no partition rows in:\n%s\n%s", group, out, errOut)
	}
	return rows
}

func TestConsoleRoundTrip(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "console"
	ctx := testCtx(t, 2*time.Minute)
	if out, errOut, err := harness.RunTool(t, ctx, "kafka-topics", "--bootstrap-server", b.Addr,
		"--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1"); err != nil {
		t.Fatalf("kafka-topics --create: %v\n%s\n%s", err, out, errOut)
	}
	consoleRoundTrip(t, b.Addr, topic, "console-g")
}

// consoleRoundTrip sends 10,000 lines with the Java console producer, reads
// them back in order with the console consumer in a group, and checks that
// kafka-consumer-groups shows lag 0.
func consoleRoundTrip(t *testing.T, addr, topic, group string) {
	t.Helper()
	const n = 10000

	var in strings.Builder
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("line-%05d payload %d", i, i*7)
		in.WriteString(want[i] + "\n")
	}
	ctx := testCtx(t, 3*time.Minute)
	if out, errOut, err := harness.RunToolInput(t, ctx, strings.NewReader(in.String()), "kafka-console-producer",
		"--bootstrap-server", addr, "--topic", topic, "--producer-property", "acks=all"); err != nil {
		t.Fatalf("kafka-console-producer: %v\n%s\n%s", err, out, errOut)
	}

	ctx = testCtx(t, 3*time.Minute)
	out, errOut, err := harness.RunTool(t, ctx, "kafka-console-consumer", "--bootstrap-server", addr,
		"--topic", topic, "--from-beginning", "--group", group,
		"--max-messages", fmt.Sprint(n), "--timeout-ms", "60000")
	if err != nil {
		t.Fatalf("kafka-console-consumer: %v\n%s\n%s", err, tail(out, 2000), errOut)
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(got) != n {
		t.Fatalf("console consumer printed %d lines, want %d; stderr:\n%s", len(got), n, errOut)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d: got %q, want %q", i, got[i], want[i])
		}
	}

	rows := describeGroup(t, addr, group)
	for _, r := range rows {
		if r["TOPIC"] != topic {
			continue
		}
		if r["LAG"] != "0" || r["CURRENT-OFFSET"] != fmt.Sprint(n) || r["LOG-END-OFFSET"] != fmt.Sprint(n) {
			t.Errorf("group %s partition %s: CURRENT-OFFSET %s LOG-END-OFFSET %s LAG %s; want %d %d 0",
				group, r["PARTITION"], r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"], n, n)
		}
	}
}
