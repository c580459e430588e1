#!/usr/bin/env bash
# make bench: kbroker and Apache Kafka, one after the other on this machine,
# driven by Kafka's own perf tools and bench/loadgen; writes
# bench/results/<date>.md. See bench/README.md for what is measured and how.
#
# Knobs (environment): REPS, RECORDS_1K, RECORDS_100, LATENCY_SECONDS,
# CONSUME_RECORDS, WARMUP_RECORDS, LATENCY_RATE (default: half of Kafka's
# measured 1 KiB acks=1 rate), BROKERS (default "kafka kbroker"; Kafka first
# because the latency rate derives from it), CLUSTER_RECORDS (1 KiB records
# per run of the 3-broker workload; 0 skips it), CLUSTER_WARMUP_RECORDS,
# TXN_DURATION_MS (how long each transaction of produce-1k-txn stays open),
# TXN_RECORDS (1 KiB records per produce-1k-txn run).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LIB="$ROOT/compat/lib"
TOOLS="$ROOT/compat/bin"
CLK_TCK=$(getconf CLK_TCK)

REPS=${REPS:-3}
# Unset record counts are calibrated on the first broker's warm-up to runs
# of RUN_SECONDS at the warm-up's rate (bench/workloads.sh, calibrate); a
# warmed-up Kafka runs about twice as fast as its warm-up, so 25 s gives
# measured runs of roughly 10-15 s.
RECORDS_1K=${RECORDS_1K:-}
RECORDS_100=${RECORDS_100:-}
RUN_SECONDS=${RUN_SECONDS:-25}
LATENCY_SECONDS=${LATENCY_SECONDS:-15}
CONSUME_RECORDS=${CONSUME_RECORDS:-2097152}
WARMUP_RECORDS=${WARMUP_RECORDS:-200000}
CLUSTER_RECORDS=${CLUSTER_RECORDS:-400000}
CLUSTER_WARMUP_RECORDS=${CLUSTER_WARMUP_RECORDS:-$((CLUSTER_RECORDS * 2))}
# Kafka Streams' commit.interval.ms under exactly-once: transactions of
# 100 ms are what a stream processor commits.
TXN_DURATION_MS=${TXN_DURATION_MS:-100}
# Not calibrated like RECORDS_1K: a commit every 100 ms holds the producer
# to a few MB/s (Kafka's first runs here: 3.5 MB/s), so the acks=1 rate
# would size a run past STEP_TIMEOUT.
TXN_RECORDS=${TXN_RECORDS:-200000}
BROKERS=${BROKERS:-kafka kbroker}
# RESULTS_DIR: where the table and profiles go. PIDS_FILE, when set, gets
# every server pid this run starts (bench/smoke.sh checks none is left).
RESULTS_DIR=${RESULTS_DIR:-bench/results}
PIDS_FILE=${PIDS_FILE:-}
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
PROFILE_SECONDS=${PROFILE_SECONDS:-8}
PROFILE_SECONDS_CONSUME=${PROFILE_SECONDS_CONSUME:-4}
# free_port FROM: the first port from FROM up that nothing uses. Below the
# kernel's ephemeral range (32768+), where client connections could take a
# fixed port between our check and the broker's bind.
free_port() {
	local p=$1
	while [[ -n "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ]]; do
		p=$((p + 1))
	done
	echo "$p"
}
# Away from the defaults so a developer's broker or the compat tests
# running next to us are not hit.
KAFKA_PORT=$(free_port 29092)
KAFKA_CONTROLLER_PORT=$(free_port $((KAFKA_PORT + 1)))
KBROKER_PORT=$(free_port 29192)
KBROKER_METRICS_PORT=$(free_port $((KBROKER_PORT + 1)))
KAFKA_SASL_SSL_PORT=$(free_port $((KAFKA_CONTROLLER_PORT + 1)))
KBROKER_SASL_SSL_PORT=$(free_port $((KBROKER_METRICS_PORT + 1)))

source "$ROOT/bench/brokers.sh"
source "$ROOT/bench/workloads.sh"
source "$ROOT/bench/cluster.sh"
source "$ROOT/bench/security.sh"

RUN=$(mktemp -d -t kbroker-bench.XXXXXX)
declare -A BROKER_PIDS_BY_NAME=() BOOTSTRAP_BY_NAME=() SASL_BOOTSTRAP_BY_NAME=()
BROKER_PID=
BROKER_PIDS=
PROFILE_PID=
cleanup() {
	local rc=$?
	[[ -n "${PROFILE_PID:-}" ]] && kill "$PROFILE_PID" 2>/dev/null
	stop_brokers
	stop_cluster
	if [[ $rc != 0 ]]; then
		echo "bench: failed (exit $rc); run directory kept at $RUN" >&2
	elif [[ -z "${KEEP_RUN:-}" ]]; then
		rm -rf "$RUN"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for jar in "$LIB"/kafka_2.13-*.jar "$LIB"/kafka-tools-*.jar; do
	[[ -f "$jar" ]] || {
		echo "bench: $jar missing; run make deps" >&2
		exit 1
	}
done
[[ -x bin/kbroker ]] || {
	echo "bench: bin/kbroker missing; run make build" >&2
	exit 1
}
go build -o "$RUN/loadgen" ./bench/loadgen
go build -o "$RUN/report" ./bench/report
# The SASL_SSL listeners' certificates and the clients' properties for them.
CERTS="$RUN/certs"
SASL_CLIENT_CONFIG="$RUN/client-sasl-ssl.properties"
make_certs "$CERTS"
write_sasl_ssl_client_config "$CERTS" "$SASL_CLIENT_CONFIG"
{
	echo "# keytool: a CA, the broker's PKCS12 keystore (SAN IP:127.0.0.1, signed by the CA), a truststore with the CA (bench/security.sh)"
	echo "# \$SASL_CLIENT_CONFIG, the --command-config of every SASL_SSL workload:"
	sed -e "s|$RUN|\$RUN|g" -e 's/^/#   /' "$SASL_CLIENT_CONFIG"
} >>"$RUN/commands.txt"

RAW="$RUN/raw.tsv"
: >"$RAW"
kafka_version=$(basename "$LIB"/kafka_2.13-*.jar .jar | sed 's/^kafka_2.13-//')
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "kbroker=$(git describe --always --dirty 2>/dev/null || echo unknown)"
	echo "kafka=$kafka_version"
	echo "go=$(go version | cut -d' ' -f3)"
	echo "java=$(java -version 2>&1 | head -1)"
	echo "kernel=$(uname -sr)"
	echo "cpus=$(nproc)"
	echo "cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "mem=$(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "reps=$REPS"
	echo "run_seconds=$RUN_SECONDS"
	echo "latency_seconds=$LATENCY_SECONDS"
	echo "consume_records=$CONSUME_RECORDS"
	echo "warmup_records=$WARMUP_RECORDS"
	echo "cluster_records=$CLUSTER_RECORDS"
	echo "cluster_warmup_records=$CLUSTER_WARMUP_RECORDS"
	echo "txn_duration_ms=$TXN_DURATION_MS"
	if [[ -n "$RECORDS_1K" ]]; then echo "records_1k=$RECORDS_1K (set by the caller)"; fi
	if [[ -n "$RECORDS_100" ]]; then echo "records_100=$RECORDS_100 (set by the caller)"; fi
	echo "txn_records=$TXN_RECORDS"
	echo "kafka_jvm=${KAFKA_JVM_OPTS[*]}"
	echo "producer_props=${PRODUCER_PROPS[*]}"
	echo "sasl_mechanism=$SASL_MECHANISM"
} >"$RUN/meta.txt"

started=$(date +%s)
# Both single brokers run side by side, each with its own port and data
# directory, so run_workloads can alternate between them run by run; the
# idle one only ticks over (Kafka's KRaft heartbeats) meanwhile.
for broker in $BROKERS; do
	echo "bench: starting $broker" >&2
	case $broker in
	kafka)
		start_kafka "$RUN/kafka" "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT" "$KAFKA_SASL_SSL_PORT"
		BOOTSTRAP_BY_NAME[$broker]="127.0.0.1:$KAFKA_PORT"
		SASL_BOOTSTRAP_BY_NAME[$broker]="127.0.0.1:$KAFKA_SASL_SSL_PORT"
		;;
	kbroker)
		METRICS="127.0.0.1:$KBROKER_METRICS_PORT"
		start_kbroker "$RUN/kbroker" "$KBROKER_PORT" "$KBROKER_METRICS_PORT" "$KBROKER_SASL_SSL_PORT"
		BOOTSTRAP_BY_NAME[$broker]="127.0.0.1:$KBROKER_PORT"
		SASL_BOOTSTRAP_BY_NAME[$broker]="127.0.0.1:$KBROKER_SASL_SSL_PORT"
		;;
	*)
		echo "bench: unknown broker $broker" >&2
		exit 2
		;;
	esac
	BROKER_PIDS_BY_NAME[$broker]=$BROKER_PID
	add_sasl_user "${BOOTSTRAP_BY_NAME[$broker]}" "${SASL_BOOTSTRAP_BY_NAME[$broker]}" "$RUN/$broker/sasl-user.log"
	echo "start_rss_kb_$broker=$(peak_rss_kb)" >>"$RUN/meta.txt"
done
# shellcheck disable=SC2086 # BROKERS is a list
run_workloads $BROKERS
stop_brokers
for broker in $BROKERS; do rm -rf "${RUN:?}/$broker/data"; done
# The cluster workload: three brokers of each kind, the same order.
if [[ "$CLUSTER_RECORDS" -gt 0 ]]; then
	for broker in $BROKERS; do
		echo "bench: === $broker cluster ===" >&2
		case $broker in
		kafka) start_kafka_cluster "$RUN/kafka-cluster" ;;
		kbroker) start_kbroker_cluster "$RUN/kbroker-cluster" ;;
		esac
		run_cluster_workload "$broker"
		stop_cluster
		rm -rf "$RUN/$broker-cluster"/*/data
	done
fi
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RUN/meta.txt"
echo "duration_s=$(($(date +%s) - started))" >>"$RUN/meta.txt"

# Flat (where the cycles are) and cumulative (which kbroker path spends
# them) views; the raw profiles are kept next to the results for pprof.
day=$(date -u +%Y-%m-%d)
mkdir -p "$RESULTS_DIR/$day-profiles"
for p in "$RUN"/profile-*.pprof; do
	[[ -s "$p" ]] || continue
	cp "$p" "$RESULTS_DIR/$day-profiles/"
	{
		go tool pprof -top -nodecount=15 bin/kbroker "$p" 2>/dev/null
		echo
		go tool pprof -top -cum -nodecount=30 -focus=kbroker bin/kbroker "$p" 2>/dev/null | sed -n '/flat%/,$p'
	} >"${p%.pprof}.top" || true
done

out="$RESULTS_DIR/$day.md"
"$RUN/report" -run "$RUN" -out "$out"
echo "bench: wrote $out" >&2
