#!/usr/bin/env bash
# make bench-smoke (part of make test): the whole `make bench` machinery on
# tiny workloads, one repetition, both brokers and both clusters. It shows
# in CI what issue 5 asks of `make bench` besides its figures: it runs
# unattended, writes a table with every workload for both brokers, and
# leaves no server running. Its figures mean nothing and go to a temporary
# directory, never to bench/results.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

out=$(mktemp -d -t kbroker-bench-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT
pids="$out/pids"
: >"$pids"

RESULTS_DIR="$out/results" PIDS_FILE="$pids" REPS=1 RUN_SECONDS=1 WARMUP_RECORDS=20000 \
	LATENCY_SECONDS=5 CONSUME_RECORDS=50000 CLUSTER_RECORDS=20000 CLUSTER_WARMUP_RECORDS=20000 TXN_RECORDS=20000 \
	timeout 900 bench/run.sh

fail=0
tables=("$out"/results/*.md)
if [[ ${#tables[@]} != 1 || ! -s "${tables[0]}" ]]; then
	echo "bench-smoke: no results table written" >&2
	exit 1
fi
for wl in produce-1k-acks1 produce-1k-acksall produce-100b-acks1 produce-100b-acksall \
	produce-1k-txn produce-1k-sasl-ssl e2e-latency consume-2gib consume-sasl-ssl cluster-1k-acksall; do
	# Each workload's section says how many runs of each broker succeeded.
	if ! awk -v wl="## $wl" '$0 == wl {s = 1; next} /^## / {s = 0} s && /^.*Runs ok: Kafka 1\/1, kbroker 1\/1\./ {f = 1} END {exit !f}' "${tables[0]}"; then
		echo "bench-smoke: $wl lacks a successful run of both brokers:" >&2
		awk -v wl="## $wl" '$0 == wl {s = 1} /^## / && $0 != wl {s = 0} s' "${tables[0]}" >&2
		fail=1
	fi
done
started=$(wc -l <"$pids")
if [[ $started -lt 9 ]]; then
	# Two brokers, three of each kind in the clusters, ZooKeeper.
	echo "bench-smoke: only $started server pids recorded, want 9" >&2
	fail=1
fi
while read -r pid; do
	# A zombie has ended; it only waits for a parent that is gone to reap
	# it (where nothing reaps orphans), and kill -0 still finds it.
	if kill -0 "$pid" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null; then
		echo "bench-smoke: pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-120)) still running" >&2
		fail=1
	fi
done <"$pids"
if [[ $fail == 0 ]]; then
	echo "bench-smoke: ok, $started servers started and stopped, every workload ran on both brokers" >&2
fi
exit "$fail"
