package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// workloads in the order of issue 5, with what each one is. A cluster
// workload's CPU and RSS figures are sums over its three broker processes.
var workloads = []struct {
	name, what string
	cluster    bool
}{
	{"produce-1k-acks1", "1 topic × 6 partitions, 1 KiB records, acks=1, max throughput (kafka-producer-perf-test)", false},
	{"produce-1k-acksall", "the same with acks=all", false},
	{"produce-100b-acks1", "100-byte records, acks=1, max throughput", false},
	{"produce-100b-acksall", "100-byte records, acks=all, max throughput", false},
	{"produce-1k-txn", "1 KiB records in transactions, each committed once it is --transaction-duration-ms old (kafka-producer-perf-test --transactional-id; " +
		"acks=all, idempotent); every commit's round trips to the transaction coordinator and its markers count against throughput", false},
	{"produce-1k-sasl-ssl", "produce-1k-acks1 through each broker's SASL_SSL listener: TLS with the run's test certificates, " +
		"the producer logged in with SCRAM-SHA-512 (kafka-producer-perf-test --command-config)", false},
	{"e2e-latency", "1 KiB records at a fixed rate (half of Kafka's 1 KiB acks=1 median), produce-to-consume latency (bench/loadgen, franz-go)", false},
	{"consume-2gib", "consume 2 GiB of 1 KiB records already written, from page cache (kafka-consumer-perf-test, fetch rates)", false},
	{"consume-sasl-ssl", "consume-2gib's records again through the SASL_SSL listener, SCRAM-SHA-512 (kafka-consumer-perf-test --command-config); " +
		"neither broker can use sendfile under TLS", false},
	{"cluster-1k-acksall", "3 brokers on this machine (kbroker: ZooKeeper and broker.id 1-3; Kafka: 3 KRaft nodes, broker and controller in each, -Xmx512M), " +
		"1 topic × 6 partitions, replication factor 3, min.insync.replicas=2, 1 KiB records, acks=all, max throughput (kafka-producer-perf-test); " +
		"broker CPU and peak RSS are sums over the 3 broker processes (each one's own peak), ZooKeeper not included", true},
}

var brokers = []string{"kafka", "kbroker"}

// hasLatency reports whether the workload's tool reports latencies:
// kafka-consumer-perf-test does not.
func hasLatency(workload string) bool { return !strings.HasPrefix(workload, "consume-") }

// metric is one figure of a workload; lowerIsBetter decides which way a
// ratio is good. A value of NaN means the run did not record the figure
// (client CPU in raw files from before it was recorded) and is left out
// of the median.
type metric struct {
	name          string
	value         func(row) float64
	lowerIsBetter bool
	latency       bool
}

var metrics = []metric{
	{"MB/s", func(r row) float64 { return r.mbps }, false, false},
	{"records/s", func(r row) float64 { return r.rps }, false, false},
	{"p50 latency ms", func(r row) float64 { return r.p50 }, true, true},
	{"p99 latency ms", func(r row) float64 { return r.p99 }, true, true},
	{"p99.9 latency ms", func(r row) float64 { return r.p999 }, true, true},
	{"broker CPU s/GB", row.cpuPerGB, true, false},
	{"client CPU s/GB", row.clientCPUPerGB, true, false},
	{"broker peak RSS MiB", func(r row) float64 { return r.rssKB / 1024 }, true, false},
}

// wholeRunMetrics are summarized like metrics but shown only in the "CPU
// of the whole run" table under the headline: each is a per-run figure, so
// its median is that of the runs rather than a sum of other medians.
var wholeRunMetrics = []metric{
	{"broker+client CPU s/GB", row.totalCPUPerGB, true, false},
	{"client share of CPU", row.clientShare, true, false},
	{"busy cores", row.busyCores, true, false},
}

func allMetrics() []metric { return append(slices.Clone(metrics), wholeRunMetrics...) }

// cell is the median of one metric for one broker and workload.
// unrecorded marks a figure that successful runs exist for but none of
// them recorded, which must not read as a failure.
type cell struct {
	v          float64
	ok         bool
	unrecorded bool
}

// summary[workload][broker][metric] plus the successful repetition counts.
type summary struct {
	cells map[string]map[string][]cell
	okRep map[string]map[string]int
	reps  map[string]map[string]int
}

func summarize(rows []row) summary {
	s := summary{cells: map[string]map[string][]cell{}, okRep: map[string]map[string]int{}, reps: map[string]map[string]int{}}
	for _, w := range workloads {
		s.cells[w.name] = map[string][]cell{}
		s.okRep[w.name] = map[string]int{}
		s.reps[w.name] = map[string]int{}
		for _, b := range brokers {
			var ok []row
			for _, r := range rows {
				if r.workload == w.name && r.broker == b {
					s.reps[w.name][b]++
					if r.ok {
						ok = append(ok, r)
					}
				}
			}
			s.okRep[w.name][b] = len(ok)
			for _, m := range allMetrics() {
				var vs []float64
				for _, r := range ok {
					if v := m.value(r); !math.IsNaN(v) {
						vs = append(vs, v)
					}
				}
				v, has := median(vs)
				s.cells[w.name][b] = append(s.cells[w.name][b], cell{v: v, ok: has, unrecorded: !has && len(ok) > 0})
			}
		}
	}
	return s
}

func (s summary) get(workload, broker, metricName string) cell {
	for i, m := range allMetrics() {
		if m.name == metricName {
			return s.cells[workload][broker][i]
		}
	}
	panic("unknown metric " + metricName)
}

// ratio is kbroker/Kafka; ok is false when either side is missing or Kafka's
// figure is zero.
func (s summary) ratio(workload, metricName string) (float64, bool) {
	k, kb := s.get(workload, "kafka", metricName), s.get(workload, "kbroker", metricName)
	if !k.ok || !kb.ok || k.v == 0 {
		return 0, false
	}
	return kb.v / k.v, true
}

// ratioBound is Kafka's broker+client CPU per GB over kbroker's client CPU
// per GB. When both runs are CPU-bound, throughput is the cores over the CPU
// per GB, so a kbroker whose broker took no CPU at all would still be held
// to this many times Kafka's throughput by its client alone.
func (s summary) ratioBound(workload string) (float64, bool) {
	k, kb := s.get(workload, "kafka", "broker+client CPU s/GB"), s.get(workload, "kbroker", "client CPU s/GB")
	if !k.ok || !kb.ok || kb.v == 0 {
		return 0, false
	}
	return k.v / kb.v, true
}

// ran reports whether raw.tsv has any row of the workload, failed or not:
// a workload the run skipped (the cluster with CLUSTER_RECORDS=0) is left
// out of the summary tables rather than shown as failed.
func (s summary) ran(workload string) bool {
	for _, b := range brokers {
		if s.reps[workload][b] > 0 {
			return true
		}
	}
	return false
}

func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func (c cell) String() string {
	switch {
	case c.unrecorded:
		return "–"
	case !c.ok:
		return "fail"
	}
	return num(c.v)
}
