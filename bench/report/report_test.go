package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawLine builds a raw.tsv row in bench/workloads.sh's column order.
func rawLine(broker, workload, rep, status, mbps, p99, cpu, bytes, rss string) string {
	return strings.Join([]string{broker, workload, rep, status, mbps, "1000", "1", p99, "3", cpu, bytes, rss, "0.5"}, "\t")
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

func TestReadRowsRejectsShortRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raw.tsv")
	if err := os.WriteFile(path, []byte("kafka\tproduce-1k-acks1\t1\tok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readRows(path); err == nil {
		t.Fatal("a 4-column row was accepted")
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
