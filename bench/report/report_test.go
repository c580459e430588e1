package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawLine builds a raw.tsv row in bench/workloads.sh's column order, as
// written before client_cpu_s was added (13 columns).
func rawLine(broker, workload, rep, status, mbps, p99, cpu, bytes, rss string) string {
	return strings.Join([]string{broker, workload, rep, status, mbps, "1000", "1", p99, "3", cpu, bytes, rss, "0.5"}, "\t")
}

// withClientCPU appends the 14th column, client_cpu_s.
func withClientCPU(line, clientCPU string) string {
	return line + "\t" + clientCPU
}

func writeRaw(t *testing.T, lines ...string) []row {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.tsv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readRows(path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Client CPU is read from 14-column rows and summarized per GB like broker
// CPU; 13-column rows (older raw files) still render, with the client
// figures shown as not recorded rather than as failures or zeros.
func TestClientCPU(t *testing.T) {
	rows := writeRaw(t,
		withClientCPU(rawLine("kafka", "produce-1k-acks1", "1", "ok", "100", "10", "2", "1000000000", "409600"), "6"),
		withClientCPU(rawLine("kafka", "produce-1k-acks1", "2", "ok", "100", "10", "2", "1000000000", "409600"), "4"),
		withClientCPU(rawLine("kafka", "produce-1k-acks1", "3", "ok", "100", "10", "2", "1000000000", "409600"), "8"),
		withClientCPU(rawLine("kbroker", "produce-1k-acks1", "1", "ok", "100", "10", "1", "1000000000", "20480"), "3"),
		withClientCPU(rawLine("kbroker", "produce-1k-acks1", "2", "fail", "0", "0", "0", "1000000000", "20480"), "0.5"),
		rawLine("kafka", "produce-1k-acksall", "1", "ok", "100", "10", "2", "1000000000", "409600"),
		rawLine("kbroker", "produce-1k-acksall", "1", "ok", "100", "10", "1", "1000000000", "20480"),
	)
	if !rows[0].hasClientCPU || rows[0].clientCPUSeconds != 6 {
		t.Errorf("14-column row: client CPU %v %v, want 6 true", rows[0].clientCPUSeconds, rows[0].hasClientCPU)
	}
	if rows[5].hasClientCPU {
		t.Error("13-column row has a client CPU")
	}
	s := summarize(rows)
	if c := s.get("produce-1k-acks1", "kafka", "client CPU s/GB"); !c.ok || c.v != 6 {
		t.Errorf("kafka client CPU s/GB = %+v, want 6", c)
	}
	// The failed run's 0.5 s is left out.
	if c := s.get("produce-1k-acks1", "kbroker", "client CPU s/GB"); !c.ok || c.v != 3 {
		t.Errorf("kbroker client CPU s/GB = %+v, want 3", c)
	}
	if r, ok := s.ratio("produce-1k-acks1", "client CPU s/GB"); !ok || r != 0.5 {
		t.Errorf("client CPU ratio = %v %v, want 0.5", r, ok)
	}
	// Per run 8, 6, 10 s/GB and shares 6/8, 4/6, 8/10: medians of the runs.
	if c := s.get("produce-1k-acks1", "kafka", "broker+client CPU s/GB"); !c.ok || c.v != 8 {
		t.Errorf("kafka broker+client CPU s/GB = %+v, want 8", c)
	}
	if c := s.get("produce-1k-acks1", "kafka", "client share of CPU"); !c.ok || c.v != 0.75 {
		t.Errorf("kafka client share = %+v, want 0.75", c)
	}
	c := s.get("produce-1k-acksall", "kafka", "client CPU s/GB")
	if c.ok || !c.unrecorded || c.String() != "–" {
		t.Errorf("client CPU of 13-column rows = %+v %q, want unrecorded", c, c.String())
	}
	if _, ok := s.ratio("produce-1k-acksall", "client CPU s/GB"); ok {
		t.Error("ratio of unrecorded client CPU reported ok")
	}
	if c := s.get("produce-1k-acksall", "kafka", "broker CPU s/GB"); !c.ok || c.v != 2 {
		t.Errorf("broker CPU s/GB of a 13-column row = %+v, want 2", c)
	}

	var b strings.Builder
	render(&b, s, rows, map[string]string{}, "")
	out := b.String()
	for _, want := range []string{
		"| client CPU s/GB | 6.00 | 3.00 | 0.50× |\n",
		"| client CPU s/GB | – | – | – |\n",
		"| produce-1k-acks1 | 8.00 | 4.00 | 0.50× | 75% | 75% | 0.84 | 0.42 | 2.67× |\n",
		"| produce-1k-acksall | – | – | – | – | – | – | – | – |\n",
		"| kafka | produce-1k-acks1 | 1 | ok | 100.0 | 1000 | 1.00 | 10.00 | 3.00 | 2.00 | 2.00 | 6.00 | 400.0 | 0.50 |\n",
		"| kafka | produce-1k-acksall | 1 | ok | 100.0 | 1000 | 1.00 | 10.00 | 3.00 | 2.00 | 2.00 | – | 400.0 | 0.50 |\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "NaN") {
		t.Errorf("report shows NaN:\n%s", out)
	}
}

func TestMedianUsesOnlySuccessfulRuns(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		rawLine("kafka", "produce-1k-acks1", "1", "ok", "100", "10", "2", "1000000000", "409600"),
		rawLine("kafka", "produce-1k-acks1", "2", "ok", "120", "12", "2", "1000000000", "409600"),
		rawLine("kafka", "produce-1k-acks1", "3", "ok", "80", "8", "2", "1000000000", "409600"),
		rawLine("kbroker", "produce-1k-acks1", "1", "ok", "300", "1", "1", "1000000000", "20480"),
		rawLine("kbroker", "produce-1k-acks1", "2", "fail", "0", "0", "0", "1000000000", "20480"),
		rawLine("kbroker", "produce-1k-acks1", "3", "ok", "200", "2", "1", "1000000000", "20480"),
	}
	path := filepath.Join(dir, "raw.tsv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readRows(path)
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(rows)
	if c := s.get("produce-1k-acks1", "kafka", "MB/s"); !c.ok || c.v != 100 {
		t.Errorf("kafka MB/s median = %+v, want 100", c)
	}
	// Two successful runs: the lower middle one, never the failed zero.
	if c := s.get("produce-1k-acks1", "kbroker", "MB/s"); !c.ok || c.v != 200 {
		t.Errorf("kbroker MB/s median = %+v, want 200", c)
	}
	if r, ok := s.ratio("produce-1k-acks1", "MB/s"); !ok || r != 2 {
		t.Errorf("ratio = %v %v, want 2", r, ok)
	}
	if c := s.get("produce-1k-acks1", "kafka", "broker CPU s/GB"); c.v != 2 {
		t.Errorf("CPU s/GB = %v, want 2", c.v)
	}
	if got := s.okRep["produce-1k-acks1"]["kbroker"]; got != 2 {
		t.Errorf("kbroker ok runs = %d, want 2", got)
	}
	// A workload nobody ran has no figure and no ratio.
	if c := s.get("consume-2gib", "kafka", "MB/s"); c.ok || c.String() != "fail" {
		t.Errorf("missing workload cell = %+v %q", c, c.String())
	}
	if _, ok := s.ratio("consume-2gib", "MB/s"); ok {
		t.Error("ratio of a missing workload reported ok")
	}
	met := map[string]bool{}
	for _, tg := range targets {
		if tg.workload == "produce-1k-acks1" {
			_, m, ok := tg.met(s)
			met[tg.metric] = m && ok
		}
	}
	if !met["MB/s"] {
		t.Error("2× throughput not counted as meeting the 1.5× target")
	}
	if !met["broker CPU s/GB"] {
		t.Error("0.5× CPU not counted as meeting the 0.7× target")
	}
}

func TestReadRowsRejectsWrongColumnCount(t *testing.T) {
	long := withClientCPU(withClientCPU(rawLine("kafka", "produce-1k-acks1", "1", "ok", "1", "1", "1", "1", "1"), "1"), "1")
	for _, line := range []string{"kafka\tproduce-1k-acks1\t1\tok", long} {
		path := filepath.Join(t.TempDir(), "raw.tsv")
		if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readRows(path); err == nil {
			t.Errorf("a %d-column row was accepted", strings.Count(line, "\t")+1)
		}
	}
}

// The cluster workload's RSS is a sum over three brokers: it must not stand
// in for a single broker's peak in the RSS target, and its throughput ratio
// is listed where the targets say whether the cluster was measured.
func TestClusterWorkloadKeptOutOfSingleBrokerRSS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raw.tsv")
	lines := []string{
		rawLine("kafka", "produce-1k-acks1", "1", "ok", "100", "10", "2", "1000000000", "1048576"),
		rawLine("kbroker", "produce-1k-acks1", "1", "ok", "100", "10", "2", "1000000000", "20480"),
		rawLine("kafka", "cluster-1k-acksall", "1", "ok", "40", "10", "2", "1000000000", "3145728"),
		rawLine("kbroker", "cluster-1k-acksall", "1", "ok", "60", "10", "2", "1000000000", "2097152"),
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readRows(path)
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(rows)
	if kb, _ := peakRSS(s, "kbroker"); kb != 20 {
		t.Errorf("kbroker single-broker peak RSS = %v MiB, want 20 (cluster sum excluded)", kb)
	}
	var b strings.Builder
	renderTargets(&b, s)
	if !strings.Contains(b.String(), "| cluster-1k-acksall | 1.50× |") {
		t.Errorf("targets table lacks the cluster throughput ratio:\n%s", b.String())
	}
	b.Reset()
	render(&b, s, rows, map[string]string{}, "")
	if strings.Contains(b.String(), "## Not measured") {
		t.Error("cluster measured but reported as not measured")
	}
}

// section is the text of a report from the heading start up to the next
// "## " heading.
func section(t *testing.T, out, start string) string {
	t.Helper()
	i := strings.Index(out, start)
	if i < 0 {
		t.Fatalf("report lacks %q:\n%s", start, out)
	}
	rest := out[i+len(start):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// Busy cores come from each run's own bytes and MB/s (2^20 bytes a MB, as
// the tools count), the ratio bound from the medians of Kafka's
// broker+client and kbroker's client CPU per GB, and the bound is noted
// under the targets only for a produce throughput target that was missed.
func TestBusyCoresAndRatioBound(t *testing.T) {
	const mib1000 = "1048576000" // 10 s at 100 MB/s
	rows := writeRaw(t,
		withClientCPU(rawLine("kafka", "produce-1k-acks1", "1", "ok", "100", "10", "4", mib1000, "409600"), "12"),
		withClientCPU(rawLine("kafka", "produce-1k-acks1", "2", "ok", "100", "10", "4", mib1000, "409600"), "14"),
		withClientCPU(rawLine("kafka", "produce-1k-acks1", "3", "ok", "100", "10", "4", mib1000, "409600"), "10"),
		withClientCPU(rawLine("kbroker", "produce-1k-acks1", "1", "ok", "125", "10", "2", mib1000, "20480"), "10"),
		// Met (2×): no note even though its bound is known.
		withClientCPU(rawLine("kafka", "produce-1k-acksall", "1", "ok", "100", "10", "4", mib1000, "409600"), "12"),
		withClientCPU(rawLine("kbroker", "produce-1k-acksall", "1", "ok", "200", "10", "2", mib1000, "20480"), "10"),
		// Missed, but no client CPU recorded: no bound, no note.
		rawLine("kafka", "produce-100b-acks1", "1", "ok", "100", "10", "4", mib1000, "409600"),
		rawLine("kbroker", "produce-100b-acks1", "1", "ok", "110", "10", "2", mib1000, "20480"),
	)
	s := summarize(rows)
	// Kafka's runs: (4+12)/10, (4+14)/10, (4+10)/10 cores; kbroker's (2+10)/8.
	if c := s.get("produce-1k-acks1", "kafka", "busy cores"); !c.ok || math.Abs(c.v-1.6) > 1e-9 {
		t.Errorf("kafka busy cores = %+v, want 1.6", c)
	}
	if c := s.get("produce-1k-acks1", "kbroker", "busy cores"); !c.ok || math.Abs(c.v-1.5) > 1e-9 {
		t.Errorf("kbroker busy cores = %+v, want 1.5", c)
	}
	// 16 s over 10 s of client CPU for the same bytes.
	if r, ok := s.ratioBound("produce-1k-acks1"); !ok || math.Abs(r-1.6) > 1e-9 {
		t.Errorf("ratio bound = %v %v, want 1.6", r, ok)
	}
	if _, ok := s.ratioBound("produce-100b-acks1"); ok {
		t.Error("ratio bound without client CPU reported ok")
	}
	if c := s.get("produce-100b-acks1", "kafka", "busy cores"); c.ok || !c.unrecorded {
		t.Errorf("busy cores without client CPU = %+v, want unrecorded", c)
	}

	var b strings.Builder
	render(&b, s, rows, map[string]string{"cpus": "2"}, "")
	out := b.String()
	head := section(t, out, "## Headline")
	for _, want := range []string{
		"out of 2 CPUs",
		"busy cores near 2)",
		"| busy cores, Kafka run | busy cores, kbroker run | ratio bound |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
		"| produce-1k-acks1 | 15.26 | 11.44 | 0.75× | 75% | 83% | 1.60 | 1.50 | 1.60× |\n",
		"| produce-100b-acks1 | – | – | – | – | – | – | – | – |\n",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("headline section lacks %q:\n%s", want, head)
		}
	}
	targets := section(t, out, "## Issue 5 targets")
	note := "- produce-1k-acks1: bound 1.60× with the client's own CPU (see CPU of the whole run)\n"
	if !strings.Contains(targets, "| produce throughput ≥ 1.5× Kafka | produce-1k-acks1 | 1.25× | **no** |\n") ||
		!strings.Contains(targets, "|\n\n"+note) {
		t.Errorf("targets lack the missed target and its note after the table:\n%s", targets)
	}
	if strings.Count(targets, "bound") != 1 {
		t.Errorf("targets note a bound other than produce-1k-acks1's:\n%s", targets)
	}
}

// A workload with no row at all (the cluster with CLUSTER_RECORDS=0) is left
// out of the headline, whole-run and targets tables; one whose runs all
// failed still shows "fail".
func TestSkippedWorkloadOmitted(t *testing.T) {
	lines := []string{
		withClientCPU(rawLine("kafka", "produce-1k-acks1", "1", "ok", "100", "10", "2", "1000000000", "409600"), "6"),
		withClientCPU(rawLine("kbroker", "produce-1k-acks1", "1", "ok", "100", "10", "1", "1000000000", "20480"), "3"),
		withClientCPU(rawLine("kafka", "consume-2gib", "1", "fail", "0", "0", "0", "1000000000", "409600"), "1"),
		withClientCPU(rawLine("kbroker", "consume-2gib", "1", "fail", "0", "0", "0", "1000000000", "20480"), "1"),
	}
	rows := writeRaw(t, lines...)
	var b strings.Builder
	render(&b, summarize(rows), rows, map[string]string{}, "")
	out := b.String()
	head, targets := section(t, out, "## Headline"), section(t, out, "## Issue 5 targets")
	if !strings.Contains(head, "| consume-2gib | fail | fail | – | – | – | – | fail | fail | – | fail | fail | – |\n") {
		t.Errorf("failed workload not shown as fail in the headline:\n%s", head)
	}
	if !strings.Contains(targets, "| consume throughput ≥ Kafka | consume-2gib | – | no figure |\n") {
		t.Errorf("failed workload missing from the targets:\n%s", targets)
	}
	for _, name := range []string{"cluster-1k-acksall", "e2e-latency", "produce-1k-acksall", "produce-100b-acks1"} {
		if strings.Contains(head, name) || strings.Contains(targets, name) {
			t.Errorf("%s has no rows but is in the headline or targets:\n%s\n%s", name, head, targets)
		}
	}
	if !strings.Contains(out, "## Not measured") {
		t.Error("skipped cluster not explained under Not measured")
	}

	// The cluster ran and every run failed: it stays, as failed.
	lines = append(lines,
		rawLine("kafka", "cluster-1k-acksall", "1", "fail", "0", "0", "0", "1000000000", "3145728"),
		rawLine("kbroker", "cluster-1k-acksall", "1", "fail", "0", "0", "0", "1000000000", "2097152"))
	rows = writeRaw(t, lines...)
	b.Reset()
	render(&b, summarize(rows), rows, map[string]string{}, "")
	out = b.String()
	head, targets = section(t, out, "## Headline"), section(t, out, "## Issue 5 targets")
	if !strings.Contains(head, "| cluster-1k-acksall | fail | fail | – |") || !strings.Contains(head, "\ncluster-1k-acksall: 3 brokers") {
		t.Errorf("failed cluster not shown as fail in the headline:\n%s", head)
	}
	if !strings.Contains(targets, "| cluster mode, 3 brokers rf 3 | cluster-1k-acksall | – | not measured |\n") {
		t.Errorf("failed cluster missing from the targets:\n%s", targets)
	}
}

// The transactional workload is a produce workload like the others: in the
// headline, the whole-run CPU table and, with no target of its own, under
// the targets with its throughput ratio; a kbroker that fails every run
// (no transactions yet) shows as failed, not as missing.
func TestTxnWorkload(t *testing.T) {
	rows := writeRaw(t,
		withClientCPU(rawLine("kafka", "produce-1k-txn", "1", "ok", "40", "10", "2", "1000000000", "409600"), "6"),
		withClientCPU(rawLine("kbroker", "produce-1k-txn", "1", "ok", "60", "10", "1", "1000000000", "20480"), "3"),
	)
	var b strings.Builder
	render(&b, summarize(rows), rows, map[string]string{"txn_duration_ms": "100", "txn_records": "200000"}, "")
	out := b.String()
	head, targets := section(t, out, "## Headline"), section(t, out, "## Issue 5 targets")
	if !strings.Contains(head, "| produce-1k-txn | 40.00 | 60.00 | 1.50× |") {
		t.Errorf("headline lacks produce-1k-txn:\n%s", head)
	}
	if !strings.Contains(head, "| produce-1k-txn | 8.00 | 4.00 | 0.50× |") {
		t.Errorf("whole-run CPU table lacks produce-1k-txn:\n%s", head)
	}
	if !strings.Contains(targets, "| transactions (no target set; throughput) | produce-1k-txn | 1.50× | – |\n") {
		t.Errorf("targets lack produce-1k-txn:\n%s", targets)
	}
	if !strings.Contains(out, "committed once 100 ms old (`--transaction-duration-ms 100`), 200000 × 1 KiB per run") {
		t.Error("transaction duration not in the header")
	}
	if !strings.Contains(out, "## produce-1k-txn\n") {
		t.Error("no section for produce-1k-txn")
	}

	rows = writeRaw(t,
		withClientCPU(rawLine("kafka", "produce-1k-txn", "1", "ok", "40", "10", "2", "1000000000", "409600"), "6"),
		withClientCPU(rawLine("kbroker", "produce-1k-txn", "1", "fail", "0", "0", "0", "1000000000", "20480"), "1"),
	)
	b.Reset()
	render(&b, summarize(rows), rows, map[string]string{}, "")
	out = b.String()
	head, targets = section(t, out, "## Headline"), section(t, out, "## Issue 5 targets")
	if !strings.Contains(head, "| produce-1k-txn | 40.00 | fail | – |") {
		t.Errorf("failed kbroker runs not shown as fail:\n%s", head)
	}
	if !strings.Contains(targets, "| transactions | produce-1k-txn | – | not measured |\n") {
		t.Errorf("failed transactions missing from the targets:\n%s", targets)
	}
}

// The SASL_SSL workloads are in the headline (consume-sasl-ssl without
// latencies, like consume-2gib), under the targets with their throughput
// ratios, and in the cost table against each broker's own plaintext run.
func TestSASLSSLWorkloads(t *testing.T) {
	full := []string{
		withClientCPU(rawLine("kafka", "produce-1k-acks1", "1", "ok", "100", "10", "2", "1000000000", "409600"), "6"),
		withClientCPU(rawLine("kbroker", "produce-1k-acks1", "1", "ok", "200", "10", "1", "1000000000", "20480"), "3"),
		withClientCPU(rawLine("kafka", "produce-1k-sasl-ssl", "1", "ok", "80", "12", "4", "1000000000", "409600"), "6"),
		withClientCPU(rawLine("kbroker", "produce-1k-sasl-ssl", "1", "ok", "120", "11", "3", "1000000000", "20480"), "3"),
		withClientCPU(rawLine("kafka", "consume-2gib", "1", "ok", "400", "0", "1", "1000000000", "409600"), "6"),
		withClientCPU(rawLine("kbroker", "consume-2gib", "1", "ok", "500", "0", "0.5", "1000000000", "20480"), "3"),
		withClientCPU(rawLine("kafka", "consume-sasl-ssl", "1", "ok", "200", "0", "3", "1000000000", "409600"), "6"),
		withClientCPU(rawLine("kbroker", "consume-sasl-ssl", "1", "ok", "300", "0", "2", "1000000000", "20480"), "3"),
	}
	for _, tc := range []struct {
		name             string
		lines            []string
		head, targets    []string
		cost             []string
		absent           []string
		wantCostTable    bool
		wantSASLSections bool
	}{
		{
			name:  "both ran",
			lines: full,
			head: []string{
				"| produce-1k-sasl-ssl | 80.00 | 120.0 | 1.50× | 12.00 | 11.00 | 0.92× |",
				"| consume-sasl-ssl | 200.0 | 300.0 | 1.50× | – | – | – |",
			},
			targets: []string{
				"| produce over SASL_SSL (no target set; throughput) | produce-1k-sasl-ssl | 1.50× | – |\n",
				"| consume over SASL_SSL (no target set; throughput) | consume-sasl-ssl | 1.50× | – |\n",
			},
			cost: []string{
				"| produce-1k-sasl-ssl | produce-1k-acks1 | 0.80× | 0.60× | 2.00× | 3.00× |\n",
				"| consume-sasl-ssl | consume-2gib | 0.50× | 0.60× | 3.00× | 4.00× |\n",
			},
			wantCostTable:    true,
			wantSASLSections: true,
		},
		{
			name: "kbroker failed over SASL_SSL",
			lines: append(full[:2:2],
				withClientCPU(rawLine("kafka", "produce-1k-sasl-ssl", "1", "ok", "80", "12", "4", "1000000000", "409600"), "6"),
				withClientCPU(rawLine("kbroker", "produce-1k-sasl-ssl", "1", "fail", "0", "0", "0", "1000000000", "20480"), "1")),
			head:             []string{"| produce-1k-sasl-ssl | 80.00 | fail | – |"},
			targets:          []string{"| produce over SASL_SSL | produce-1k-sasl-ssl | – | not measured |\n"},
			cost:             []string{"| produce-1k-sasl-ssl | produce-1k-acks1 | 0.80× | – | 2.00× | – |\n"},
			absent:           []string{"consume-sasl-ssl"},
			wantCostTable:    true,
			wantSASLSections: true,
		},
		{
			name:   "not run",
			lines:  full[:2],
			absent: []string{"sasl-ssl", "SASL_SSL"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := writeRaw(t, tc.lines...)
			var b strings.Builder
			meta := map[string]string{}
			if tc.wantSASLSections {
				meta["sasl_mechanism"] = "SCRAM-SHA-512"
			}
			render(&b, summarize(rows), rows, meta, "")
			out := b.String()
			head, targets := section(t, out, "## Headline"), section(t, out, "## Issue 5 targets")
			for _, want := range tc.head {
				if !strings.Contains(head, want) {
					t.Errorf("headline lacks %q:\n%s", want, head)
				}
			}
			for _, want := range tc.targets {
				if !strings.Contains(targets, want) {
					t.Errorf("targets lack %q:\n%s", want, targets)
				}
			}
			if got := strings.Contains(head, "**Cost of SASL_SSL**"); got != tc.wantCostTable {
				t.Errorf("cost table shown %v, want %v:\n%s", got, tc.wantCostTable, head)
			}
			for _, want := range tc.cost {
				if !strings.Contains(head, want) {
					t.Errorf("cost table lacks %q:\n%s", want, head)
				}
			}
			if tc.wantSASLSections && !strings.Contains(out, "one SCRAM-SHA-512 user made with kafka-configs") {
				t.Error("the SASL mechanism is not in the header")
			}
			for _, name := range tc.absent {
				if strings.Contains(head, name) || strings.Contains(targets, name) {
					t.Errorf("%s has no rows but is in the headline or targets:\n%s\n%s", name, head, targets)
				}
			}
		})
	}
}
