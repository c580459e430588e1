package main

import (
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
		"| produce-1k-acks1 | 8.00 | 4.00 | 0.50× | 75% | 75% |\n",
		"| produce-1k-acksall | – | – | – | – | – |\n",
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
