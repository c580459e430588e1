package main

import (
	"fmt"
	"strings"
)

func render(b *strings.Builder, s summary, rows []row, meta map[string]string, commands string) {
	fmt.Fprintf(b, "# kbroker vs Apache Kafka %s: %s\n\n", meta["kafka"], meta["date"])
	fmt.Fprintf(b, "Written by `make bench` (bench/run.sh). kbroker `%s` (%s); Apache Kafka %s "+
		"(`org.apache.kafka:kafka_2.13`, KRaft combined mode, one node; three for the cluster workload) on %s; tools and clients "+
		"from `org.apache.kafka:kafka-tools` %s; bench/loadgen on franz-go.\n\n",
		meta["kbroker"], meta["go"], meta["kafka"], meta["java"], meta["kafka"])
	fmt.Fprintf(b, "Machine: %s CPUs (%s), %s, %s. **Shared machine**: other engineers ran "+
		"tests at the same time; load average %s at the start, %s at the end (1-minute load "+
		"per run in the raw table). The clients (JVM perf tools, loadgen) run on the same 2 "+
		"cores as the broker, so absolute figures are low and noisy; the ratios are what to read.\n\n",
		meta["cpus"], meta["cpu_model"], meta["mem"], meta["kernel"], meta["load_start"], meta["load_end"])
	fmt.Fprintf(b, "Each workload ran %s times per broker (median shown). Both single brokers ran side by side, "+
		"each after an unmeasured warm-up (%s × 1 KiB and 3× as many 100-byte records), and every repetition "+
		"alternated between them, the order reversed every other repetition: Kafka run 1, kbroker run 1, "+
		"kbroker run 2, Kafka run 2, Kafka run 3, kbroker run 3. "+
		"The cluster workload ran Kafka's three-broker cluster first, then kbroker's. "+
		"Records per produce run: %s × 1 KiB, %s × 100 B; fixed-rate runs %s s; consume %s × 1 KiB; "+
		"cluster runs %s × 1 KiB (after an unmeasured warm-up of %s). "+
		"Whole run: %s s.\n\n",
		meta["reps"], meta["warmup_records"], meta["records_1k"], meta["records_100"],
		meta["latency_seconds"], meta["consume_records"], meta["cluster_records"], meta["cluster_warmup_records"], meta["duration_s"])
	if d := meta["txn_duration_ms"]; d != "" {
		fmt.Fprintf(b, "Transactions of produce-1k-txn: committed once %s ms old (`--transaction-duration-ms %s`), %s × 1 KiB per run.\n\n", d, d, meta["txn_records"])
	}

	if m := meta["sasl_mechanism"]; m != "" {
		fmt.Fprintf(b, "SASL_SSL workloads (produce-1k-sasl-ssl, consume-sasl-ssl): each single broker also had a SASL_SSL listener "+
			"on 127.0.0.1 with the same keystore (RSA 2048, made with keytool for the run) and one %s user made with kafka-configs "+
			"over its PLAINTEXT listener; the clients verify the broker's certificate (subjectAltName IP:127.0.0.1).\n\n", m)
	}
	renderHeadline(b, s)
	renderWholeRunCPU(b, s, meta["cpus"])
	renderSecurityCost(b, s)
	renderTargets(b, s)
	for _, w := range workloads {
		renderWorkload(b, s, w.name, w.what)
	}
	if s.okRep["cluster-1k-acksall"]["kafka"] == 0 && s.okRep["cluster-1k-acksall"]["kbroker"] == 0 {
		b.WriteString("## Not measured\n\n" +
			"- Cluster mode (3 brokers on this machine, replication factor 3, `min.insync.replicas=2`, " +
			"`acks=all`): no successful run in this run (`CLUSTER_RECORDS=0`, or both clusters failed; see the raw table).\n\n")
	}
	b.WriteString("## How it was measured\n\n" +
		"- Broker CPU: utime+stime of the broker process from `/proc/<pid>/stat` before and after " +
		"each run, divided by the payload bytes of the run (records × record size, 10^9 bytes = 1 GB).\n" +
		"- Client CPU: utime+stime of the client (the perf tool's JVM, or bench/loadgen) and its children, " +
		"per 10^9 payload bytes like broker CPU. The client runs inside a subshell whose " +
		"cutime+cstime (`/proc/<pid>/stat` fields 16 and 17), read once the client has exited, " +
		"hold the CPU of every descendant it waited for.\n" +
		"- Peak RSS: `VmHWM` from `/proc/<pid>/status` after each run; it is reset before each run " +
		"by writing 5 to `/proc/<pid>/clear_refs`, so it is that run's peak.\n" +
		"- Cluster workload: CPU is summed over the three broker processes; peak RSS is the sum of " +
		"each broker's own peak (an upper bound of the cluster's simultaneous peak). kbroker's cluster " +
		"also needs ZooKeeper, which Kafka's KRaft nodes do not; it is left out of the sums and " +
		"reported separately: " + orNone(meta["zookeeper_cluster"]) + ".\n" +
		"- Produce latencies are what kafka-producer-perf-test reports at full speed (send to " +
		"acknowledgement, dominated by the client's own queue); e2e-latency is from the scheduled " +
		"send time to the consumer's poll, warm-up (3 s) excluded, no coordinated omission.\n" +
		"- Consume throughput is the perf test's fetch.MB.sec / fetch.nMsg.sec (group join excluded).\n" +
		"- kbroker was profiled (pprof, 100 Hz) during the first repetition of three workloads; " +
		"the profiles are at the end.\n\n")
	fmt.Fprintf(b, "## Commands\n\nLatency rate: %s records/s. Producer settings for every perf test run: `%s`. "+
		"`$BOOTSTRAP` is 127.0.0.1 and the broker's port; `$RUN` a temp dir on the same disk.\n\n```\n%s```\n\n",
		meta["latency_rate"], meta["producer_props"], commands)
	renderRaw(b, rows)
}

func orNone(v string) string {
	if v == "" {
		return "not recorded"
	}
	return v
}

// renderHeadline is the compact table the README quotes.
func renderHeadline(b *strings.Builder, s summary) {
	b.WriteString("## Headline (medians; ratio = kbroker / Kafka)\n\n" +
		"| workload | Kafka MB/s | kbroker MB/s | ratio | Kafka p99 ms | kbroker p99 ms | ratio | Kafka CPU s/GB | kbroker CPU s/GB | ratio | Kafka RSS MiB | kbroker RSS MiB | ratio |\n" +
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, w := range workloads {
		if !s.ran(w.name) {
			continue
		}
		fmt.Fprintf(b, "| %s |", w.name)
		for _, m := range []string{"MB/s", "p99 latency ms", "broker CPU s/GB", "broker peak RSS MiB"} {
			if m == "p99 latency ms" && !hasLatency(w.name) {
				b.WriteString(" – | – | – |")
				continue
			}
			fmt.Fprintf(b, " %s | %s | %s |", s.get(w.name, "kafka", m), s.get(w.name, "kbroker", m), ratioString(s, w.name, m))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if s.ran("cluster-1k-acksall") {
		b.WriteString("cluster-1k-acksall: 3 brokers, replication factor 3, min.insync.replicas=2, acks=all; " +
			"its CPU and RSS are sums over the 3 broker processes (ZooKeeper, kbroker's fourth process, not included).\n\n")
	}
}

// renderWholeRunCPU shows what each produce run cost the machine, broker
// and client together: on 2 shared cores, CPU the broker does not use is
// left to the client, so throughput is partly the client's own limit.
func renderWholeRunCPU(b *strings.Builder, s summary, cpus string) {
	outOf, near := "the machine's CPUs", "the CPU count"
	if cpus != "" {
		outOf, near = cpus+" CPUs", cpus
	}
	fmt.Fprintf(b, "**CPU of the whole run**: broker plus client (kafka-producer-perf-test's JVM, on the same cores) "+
		"CPU seconds per GB, and the client's share of that sum; medians over the runs. "+
		"Busy cores: broker plus client CPU seconds per second of the run (payload bytes over the tool's MB/s), "+
		"out of %s; the client's CPU includes its JVM start-up, which the tool's time leaves out, so busy cores read a little high. "+
		"Ratio bound: Kafka's broker+client s/GB over kbroker's client s/GB. When the runs are CPU-bound "+
		"(busy cores near %s), it is the kbroker/Kafka throughput ratio kbroker would reach if the broker itself used no CPU, "+
		"since the client's CPU per GB then bounds it.\n\n"+
		"| workload | Kafka broker+client s/GB | kbroker broker+client s/GB | ratio | Kafka client share | kbroker client share "+
		"| busy cores, Kafka run | busy cores, kbroker run | ratio bound |\n"+
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n", outOf, near)
	for _, w := range workloads {
		if !strings.HasPrefix(w.name, "produce-") || !s.ran(w.name) {
			continue
		}
		const total, share, busy = "broker+client CPU s/GB", "client share of CPU", "busy cores"
		bound := "–"
		if r, ok := s.ratioBound(w.name); ok {
			bound = fmt.Sprintf("%.2f×", r)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w.name,
			s.get(w.name, "kafka", total), s.get(w.name, "kbroker", total), ratioString(s, w.name, total),
			percent(s.get(w.name, "kafka", share)), percent(s.get(w.name, "kbroker", share)),
			cores(s.get(w.name, "kafka", busy)), cores(s.get(w.name, "kbroker", busy)), bound)
	}
	b.WriteString("\n")
}

// cores keeps two decimals whatever the size, unlike num, so that the
// column reads evenly against the CPU count.
func cores(c cell) string {
	if !c.ok {
		return c.String()
	}
	return fmt.Sprintf("%.2f", c.v)
}

func percent(c cell) string {
	if !c.ok {
		return c.String()
	}
	return fmt.Sprintf("%.0f%%", 100*c.v)
}

func ratioString(s summary, workload, metricName string) string {
	r, ok := s.ratio(workload, metricName)
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.2f×", r)
}

func renderWorkload(b *strings.Builder, s summary, name, what string) {
	fmt.Fprintf(b, "## %s\n\n%s. Runs ok: Kafka %d/%d, kbroker %d/%d.\n\n| figure | Kafka | kbroker | kbroker/Kafka |\n| --- | ---: | ---: | ---: |\n",
		name, what, s.okRep[name]["kafka"], s.reps[name]["kafka"], s.okRep[name]["kbroker"], s.reps[name]["kbroker"])
	for _, m := range metrics {
		if m.latency && !hasLatency(name) {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", m.name, s.get(name, "kafka", m.name), s.get(name, "kbroker", m.name), ratioString(s, name, m.name))
	}
	b.WriteString("\n")
}

func renderRaw(b *strings.Builder, rows []row) {
	b.WriteString("## Raw runs\n\n| broker | workload | rep | status | MB/s | records/s | p50 ms | p99 ms | p99.9 ms | " +
		"broker CPU s | broker CPU s/GB | client CPU s | peak RSS MiB | load1 |\n" +
		"| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rows {
		status := "ok"
		if !r.ok {
			status = "fail"
		}
		client := "–"
		if r.hasClientCPU {
			client = num(r.clientCPUSeconds)
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f |\n",
			r.broker, r.workload, r.rep, status, num(r.mbps), num(r.rps), num(r.p50), num(r.p99), num(r.p999),
			num(r.cpuSeconds), num(r.cpuPerGB()), client, num(r.rssKB/1024), r.load1)
	}
}
