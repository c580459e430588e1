package compat

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kbroker/kbroker/compat/harness"
)

// The oracle recorder: a test writes what a broker answers as a transcript
// (one line per request, in words and error names, with nothing that
// differs between two correct brokers such as producer ids or ports), and
// compares it with a golden file recorded against Apache Kafka 3.9.1.
//
// KBROKER_ORACLE=kafka39 runs the same test against Kafka 3.9.1
// (harness.StartKafka39, jars from scripts/deps-kafka39.sh) and rewrites the
// golden file with Kafka's answers instead of comparing: that is how the
// tables are regenerated. Without it the test runs against kbroker.

// oracleEnv names the broker the recording tests run against.
const oracleEnv = "KBROKER_ORACLE"

// recordingKafka39 reports whether this run records Kafka 3.9.1's answers.
func recordingKafka39(t *testing.T) bool {
	t.Helper()
	switch v := os.Getenv(oracleEnv); v {
	case "":
		return false
	case "kafka39":
		return true
	default:
		t.Fatalf("%s=%q: the only oracle is kafka39", oracleEnv, v)
		return false
	}
}

// startOracleTarget starts the broker under test: Kafka 3.9.1 when
// recording, else a standalone kbroker. Both get the same overrides.
func startOracleTarget(t *testing.T, overrides ...string) string {
	t.Helper()
	if recordingKafka39(t) {
		return harness.StartKafka39(t, overrides...).Addr
	}
	return harness.StartBroker(t, overrides...).Addr
}

// transcript is what one scenario saw, line by line.
type transcript struct {
	mu    sync.Mutex
	lines []string
}

func (tr *transcript) add(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

func (tr *transcript) snapshot() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.lines...)
}

// golden is a file of transcripts, one section per scenario:
//
//	== scenario name
//	line
//	line
//
// Lines starting with # are comments.
type golden struct {
	path   string
	record bool

	mu       sync.Mutex
	want     map[string][]string
	order    []string
	recorded map[string][]string
}

// openGolden reads compat/testdata/<name>. When recording, the sections the
// test runs are replaced by what Kafka 3.9.1 answers and the file is
// written back at the end of the test; the sections of scenarios left out
// by -run stay as they were.
func openGolden(t *testing.T, name, header string) *golden {
	t.Helper()
	g := &golden{
		path:     filepath.Join("testdata", name),
		record:   recordingKafka39(t),
		want:     map[string][]string{},
		recorded: map[string][]string{},
	}
	if g.record {
		t.Cleanup(func() { g.write(t, header) })
	}
	f, err := os.Open(g.path)
	if err != nil {
		if g.record && os.IsNotExist(err) {
			return g
		}
		t.Fatalf("golden %s: %v (record it with %s=kafka39)", g.path, err, oracleEnv)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	section := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "== "):
			section = strings.TrimPrefix(line, "== ")
			g.want[section] = []string{}
			g.order = append(g.order, section)
		case section == "":
			t.Fatalf("golden %s: line %q outside a section", g.path, line)
		default:
			g.want[section] = append(g.want[section], line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return g
}

// check compares a scenario's transcript with Kafka 3.9.1's, or records it.
func (g *golden) check(t *testing.T, section string, tr *transcript) {
	t.Helper()
	got := tr.snapshot()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.record {
		if _, known := g.want[section]; !known {
			g.order = append(g.order, section)
			g.want[section] = nil
		}
		g.recorded[section] = got
		return
	}
	want, ok := g.want[section]
	if !ok {
		t.Errorf("%s: no Kafka 3.9.1 answers in %s; record them with %s=kafka39", section, g.path, oracleEnv)
		return
	}
	if diff := transcriptDiff(want, got); diff != "" {
		t.Errorf("%s: answers differ from Kafka 3.9.1's (%s):\n%s", section, g.path, diff)
	}
}

func (g *golden) write(t *testing.T, header string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		b.WriteString("# " + line + "\n")
	}
	for _, section := range g.order {
		fmt.Fprintf(&b, "\n== %s\n", section)
		lines, ok := g.recorded[section]
		if !ok {
			lines = g.want[section]
		}
		for _, line := range lines {
			b.WriteString(line + "\n")
		}
	}
	if err := os.WriteFile(g.path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("write golden: %v", err)
		return
	}
	t.Logf("recorded Kafka 3.9.1's answers for %d scenarios in %s", len(g.recorded), g.path)
}

// transcriptDiff lists, line by line, what Kafka 3.9.1 answered and what the
// broker under test did; "" when they agree.
func transcriptDiff(want, got []string) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		w, g := "<nothing>", "<nothing>"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w == g {
			fmt.Fprintf(&b, "    %s\n", w)
			continue
		}
		fmt.Fprintf(&b, "  - Kafka 3.9.1: %s\n  + this broker: %s\n", w, g)
	}
	if strings.Contains(b.String(), "  - Kafka") {
		return b.String()
	}
	return ""
}
