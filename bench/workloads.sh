# Sourced by bench/run.sh: the workloads of issue 5, each run against the
# broker whose pid is BROKER_PID and whose address is BOOTSTRAP, or
# SASL_BOOTSTRAP for its SASL_SSL listener (use_broker sets all three).
# Each measured run
# appends one tab-separated row to $RAW:
#   broker workload rep status mbps rps p50_ms p99_ms p999_ms cpu_s bytes rss_kb load1 client_cpu_s
# cpu_s is the broker's; client_cpu_s is the perf tool's or loadgen's,
# which shares the cores with the broker.
# p50/p99/p99.9 are what the tool reports: the producer perf test's
# send-to-ack latency at full speed (mostly client-side queueing), the
# loadgen's produce-to-consume latency at a fixed rate; the consumer perf
# test reports none.

# Client settings shared by every producer perf test run; identical for both
# brokers (the Java client's defaults, written out so the results file shows
# them).
PRODUCER_PROPS=(batch.size=16384 linger.ms=5 compression.type=none)
FILL_PROPS=(batch.size=262144 linger.ms=20 compression.type=none)

# The processes the probes read: BROKER_PIDS (the cluster workload's three
# brokers, summed) or else BROKER_PID.
probe_pids() { echo "${BROKER_PIDS:-$BROKER_PID}"; }

# sum_proc FILE PROGRAM: the number awk PROGRAM prints from
# /proc/<pid>/FILE, summed over the probed pids.
sum_proc() {
	local pid sum=0 v
	for pid in $(probe_pids); do
		v=$(awk "$2" "/proc/$pid/$1")
		sum=$((sum + v))
	done
	echo "$sum"
}

# cpu_ticks: utime+stime of the broker(s) (fields 14 and 15 of
# /proc/pid/stat; the command name in field 2 has no spaces for java or
# kbroker).
cpu_ticks() { sum_proc stat '{print $14 + $15}'; }

# reset_peak_rss: writing 5 to clear_refs resets VmHWM to the current RSS,
# so each run reports its own peak rather than the process's lifetime peak.
reset_peak_rss() {
	local pid
	for pid in $(probe_pids); do echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true; done
}

# peak_rss_kb: VmHWM, summed over the brokers of a cluster (each broker's
# own peak; they need not coincide, so the sum is an upper bound).
peak_rss_kb() { sum_proc status '/^VmHWM:/ {print $2}'; }

# TOPIC_ARGS: replication of the topics create_topic makes; the cluster
# workload sets replication factor 3 and min.insync.replicas=2.
TOPIC_ARGS=(--replication-factor 1)

create_topic() {
	"$TOOLS/kafka-topics" --bootstrap-server "$BOOTSTRAP" --create --topic "$1" \
		--partitions 6 "${TOPIC_ARGS[@]}" >/dev/null
}

delete_topic() {
	"$TOOLS/kafka-topics" --bootstrap-server "$BOOTSTRAP" --delete --topic "$1" >/dev/null 2>&1 || true
}

# log_cmd CMD...: keeps the exact command line for the results file, with the
# run-specific address and paths generalised.
log_cmd() {
	local key=$1
	shift
	grep -qxF "$key" "$RUN/commands.seen" 2>/dev/null && return 0
	echo "$key" >>"$RUN/commands.seen"
	local -a generalise=(-e "s|$BOOTSTRAP|\$BOOTSTRAP|g")
	[[ -z "${SASL_BOOTSTRAP:-}" ]] || generalise+=(-e "s|$SASL_BOOTSTRAP|\$SASL_BOOTSTRAP|g")
	echo "$*" | sed "${generalise[@]}" -e "s|$RUN|\$RUN|g" -e "s|$ROOT/||g" >>"$RUN/commands.txt"
}

# measure BROKER WORKLOAD REP BYTES PARSER CMD...: runs CMD with the broker's
# CPU and peak RSS taken around it and CMD's own CPU counted; PARSER turns
# CMD's output into "mbps rps p50 p99 p999".
measure() {
	local broker=$1 wl=$2 rep=$3 bytes=$4 parser=$5
	shift 5
	local out="$RUN/$broker-$wl-$rep.out" before after fields status=ok client_ticks
	log_cmd "$wl" "$@"
	reset_peak_rss
	before=$(cpu_ticks)
	# A fresh subshell starts with cutime+cstime at zero and, once it has
	# waited for CMD, holds the CPU of CMD and every descendant it waited for
	# (timeout, the tool's JVM with all its threads). Only builtins run
	# after CMD, so nothing else is counted. The stat line is cut after the
	# command name, which may hold spaces: fields 16 and 17 are then the
	# 14th and 15th words.
	client_ticks=$(
		rc=0
		timeout "$STEP_TIMEOUT" "$@" >"$out" 2>&1 || rc=$?
		read -r stat <"/proc/$BASHPID/stat"
		read -r -a f <<<"${stat##*) }"
		echo $((f[13] + f[14]))
		exit "$rc"
	) || status=fail
	after=$(cpu_ticks)
	fields=$($parser "$out") || status=fail
	[[ -n "$fields" ]] || fields="0 0 0 0 0"
	local cpu_s client_cpu_s rss_kb
	cpu_s=$(awk -v a="$after" -v b="$before" -v hz="$CLK_TCK" 'BEGIN {printf "%.2f", (a - b) / hz}')
	client_cpu_s=$(awk -v t="$client_ticks" -v hz="$CLK_TCK" 'BEGIN {printf "%.2f", t / hz}')
	rss_kb=$(peak_rss_kb)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$broker" "$wl" "$rep" "$status" \
		"$(echo "$fields" | tr ' ' '\t')" "$cpu_s" "$bytes" "$rss_kb" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$client_cpu_s" >>"$RAW"
	echo "bench: $broker $wl #$rep $status: $fields cpu=${cpu_s}s client=${client_cpu_s}s rss=${rss_kb}kB" >&2
}

# "N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max
# latency, p50 ms 50th, p95 ms 95th, p99 ms 99th, p999 ms 99.9th."
parse_producer_perf() {
	grep -E '^[0-9]+ records sent, .*99\.9th' "$1" | tail -1 |
		sed -E 's/^[0-9]+ records sent, ([0-9.]+) records\/sec \(([0-9.]+) MB\/sec\).*, ([0-9]+) ms 50th, [0-9]+ ms 95th, ([0-9]+) ms 99th, ([0-9]+) ms 99.9th.*/\2 \1 \3 \4 \5/' |
		grep -E '^[0-9. ]+$'
}

# The CSV summary: start, end, MB, MB/s, count, count/s, rebalance ms,
# fetch ms, fetch MB/s, fetch count/s. We take the fetch rates: they leave
# out the consumer group join, which is not throughput.
parse_consumer_perf() {
	grep -E '^[0-9-]+ [0-9:]+, ' "$1" | tail -1 | awk -F', ' '{print $9, $10, 0, 0, 0}' | grep -E '^[0-9. ]+$'
}

parse_loadgen() {
	grep -E '^sent=' "$1" | tail -1 | tr ' ' '\n' |
		awk -F= '{v[$1] = $2} END {if (v["errors"] == 0 && v["sent"] == v["received"]) print v["mbps"], v["rps"], v["p50_ms"], v["p99_ms"], v["p999_ms"]}' |
		grep -E '^[0-9. ]+$'
}

# produce_run BROKER WORKLOAD REP SIZE ACKS COUNT [PERF_ARG...]: the
# PERF_ARGs go to kafka-producer-perf-test before its producer properties.
# The producer dials CLIENT_BOOTSTRAP when set (the SASL_SSL listener),
# BOOTSTRAP otherwise; the topic is made and deleted over BOOTSTRAP.
produce_run() {
	local broker=$1 wl=$2 rep=$3 size=$4 acks=$5 count=$6 topic="$2-$3"
	shift 6
	create_topic "$topic"
	measure "$broker" "$wl" "$rep" $((size * count)) parse_producer_perf \
		"$TOOLS/kafka-producer-perf-test" --topic "$topic" --num-records "$count" \
		--record-size "$size" --throughput -1 "$@" \
		--command-property "bootstrap.servers=${CLIENT_BOOTSTRAP:-$BOOTSTRAP}" "acks=$acks" "${PRODUCER_PROPS[@]}"
	delete_topic "$topic"
}

# txn_run BROKER REP COUNT: 1 KiB records in transactions, each committed
# once TXN_DURATION_MS has passed since it began (the perf test's
# --transaction-duration-ms: commitTransaction blocks the sender, so every
# commit's round trips through the transaction coordinator, its
# __transaction_state write and the markers on all 6 partitions count
# against throughput). A fresh transactional id per run, so no run waits
# on an earlier one's state.
txn_run() {
	local broker=$1 rep=$2 count=$3
	produce_run "$broker" produce-1k-txn "$rep" 1024 all "$count" \
		--transactional-id "bench-txn-$broker-$rep" --transaction-duration-ms "$TXN_DURATION_MS"
}

# profile_kbroker BROKER NAME SECONDS [DELAY]: a CPU profile from kbroker's
# pprof endpoint in the background, DELAY (3) seconds from now, saved for
# bench/report.
profile_kbroker() {
	[[ "$1" == kbroker ]] || return 0
	# Start after the perf tool's JVM is up and the topic exists, so the
	# profile shows the workload rather than topic creation; a consume run
	# is over in a few seconds, so it starts sooner.
	(sleep "${4:-3}" && curl -sf -m $(($3 + 15)) -o "$RUN/profile-$2.pprof" \
		"http://$METRICS/debug/pprof/profile?seconds=$3") &
	PROFILE_PID=$!
}

wait_profile() {
	[[ -n "${PROFILE_PID:-}" ]] || return 0
	wait "$PROFILE_PID" || true
	PROFILE_PID=
}

# warm_up BROKER SIZE COUNT [NAME PERF_ARG...]: an unmeasured producer perf
# test run, so the JVM compiles its hot paths and both brokers create their
# first segments; prints the records/s it reached. NAME (default SIZE) names
# the run; the PERF_ARGs and CLIENT_BOOTSTRAP are as in produce_run.
warm_up() {
	local broker=$1 size=$2 count=$3 name=${4:-$2}
	shift $(($# < 4 ? $# : 4))
	local topic="warmup-$name"
	create_topic "$topic"
	timeout "$STEP_TIMEOUT" "$TOOLS/kafka-producer-perf-test" --topic "$topic" --num-records "$count" \
		--record-size "$size" --throughput -1 "$@" --command-property "bootstrap.servers=${CLIENT_BOOTSTRAP:-$BOOTSTRAP}" acks=1 \
		"${PRODUCER_PROPS[@]}" >"$RUN/$broker-warmup-$name.out" 2>&1 || true
	delete_topic "$topic"
	{ parse_producer_perf "$RUN/$broker-warmup-$name.out" || true; } | awk '{printf "%d", $2}'
}

# calibrate RATE MIN MAX: records for a run of RUN_SECONDS at RATE, clamped.
# The machine is shared and its speed varies from day to day; sizing the
# runs from the first broker's warm-up keeps them "a few tens of seconds"
# while both brokers still get exactly the same record counts.
calibrate() {
	awk -v r="${1:-0}" -v s="$RUN_SECONDS" -v lo="$2" -v hi="$3" \
		'BEGIN {n = r * s; if (n < lo) n = lo; if (n > hi) n = hi; printf "%d", n}'
}

# use_broker BROKER: points the probes and the clients at one of the
# single brokers that run_workloads alternates between.
use_broker() {
	BROKER_PID=${BROKER_PIDS_BY_NAME[$1]}
	BOOTSTRAP=${BOOTSTRAP_BY_NAME[$1]}
	SASL_BOOTSTRAP=${SASL_BOOTSTRAP_BY_NAME[$1]}
}

# rep_order REP BROKER...: the brokers in the order repetition REP runs
# them: as given for odd repetitions, reversed for even ones, so neither
# broker always runs right after the other (whose deleted topic's pages, for
# one, the kernel is still freeing: kbroker deletes files at once, Kafka
# after file.delete.delay.ms).
rep_order() {
	local rep=$1
	shift
	if ((rep % 2)); then
		echo "$@"
	else
		local i out=()
		for ((i = $#; i >= 1; i--)); do out+=("${!i}"); done
		echo "${out[@]}"
	fi
}

# run_workloads BROKER...: every workload, each repetition run once per
# broker in turn (Kafka, kbroker, then kbroker, Kafka, ...). Alternating rather than
# running one broker's whole series and then the other's puts both under
# the same conditions: on this shared VM the cost of writing to the page
# cache drifts over minutes (fresh guest pages cost several times more
# than recycled ones), and so do the other tenants' loads.
run_workloads() {
	local brokers=("$@") broker rep rate
	for broker in "${brokers[@]}"; do
		use_broker "$broker"
		rate=$(warm_up "$broker" 1024 "$WARMUP_RECORDS")
		if [[ -z "${RECORDS_1K:-}" ]]; then
			RECORDS_1K=$(calibrate "$rate" 100000 3000000)
			echo "records_1k=$RECORDS_1K (calibrated on $broker's warm-up: $rate records/s)" >>"$RUN/meta.txt"
		fi
		rate=$(warm_up "$broker" 100 $((WARMUP_RECORDS * 3)))
		if [[ -z "${RECORDS_100:-}" ]]; then
			RECORDS_100=$(calibrate "$rate" 300000 20000000)
			echo "records_100=$RECORDS_100 (calibrated on $broker's warm-up: $rate records/s)" >>"$RUN/meta.txt"
		fi
	done

	local spec wl size acks
	for spec in produce-1k-acks1:1024:1 produce-1k-acksall:1024:all produce-100b-acks1:100:1 produce-100b-acksall:100:all; do
		IFS=: read -r wl size acks <<<"$spec"
		local count=$RECORDS_1K
		[[ $size == 100 ]] && count=$RECORDS_100
		for rep in $(seq 1 "$REPS"); do
			for broker in $(rep_order "$rep" "${brokers[@]}"); do
				use_broker "$broker"
				[[ $rep == 1 && $acks == 1 ]] && profile_kbroker "$broker" "$wl" "$PROFILE_SECONDS"
				produce_run "$broker" "$wl" "$rep" "$size" "$acks" "$count"
				wait_profile
			done
		done
	done

	for rep in $(seq 1 "$REPS"); do
		for broker in $(rep_order "$rep" "${brokers[@]}"); do
			use_broker "$broker"
			[[ $rep == 1 ]] && profile_kbroker "$broker" produce-1k-txn "$PROFILE_SECONDS"
			txn_run "$broker" "$rep" "$TXN_RECORDS"
			wait_profile
		done
	done

	# produce-1k-acks1 again, through the SASL_SSL listener: the same records
	# and producer settings, the producer logged in as the SCRAM user
	# (bench/security.sh). Each broker's TLS and SASL paths get an
	# unmeasured warm-up first, as its plaintext ones did.
	for broker in "${brokers[@]}"; do
		use_broker "$broker"
		CLIENT_BOOTSTRAP=$SASL_BOOTSTRAP warm_up "$broker" 1024 "$WARMUP_RECORDS" 1k-sasl-ssl \
			--command-config "$SASL_CLIENT_CONFIG" >/dev/null
	done
	for rep in $(seq 1 "$REPS"); do
		for broker in $(rep_order "$rep" "${brokers[@]}"); do
			use_broker "$broker"
			[[ $rep == 1 ]] && profile_kbroker "$broker" produce-1k-sasl-ssl "$PROFILE_SECONDS"
			CLIENT_BOOTSTRAP=$SASL_BOOTSTRAP produce_run "$broker" produce-1k-sasl-ssl "$rep" 1024 1 "$RECORDS_1K" \
				--command-config "$SASL_CLIENT_CONFIG"
			wait_profile
		done
	done

	# Fixed rate: half of Kafka's median 1 KiB acks=1 throughput (measured
	# above); kbroker gets the same rate.
	if [[ -z "${LATENCY_RATE:-}" ]]; then
		LATENCY_RATE=$(awk -F'\t' '$1 == "kafka" && $2 == "produce-1k-acks1" && $4 == "ok" {print $6}' "$RAW" |
			sort -n | awk '{v[NR] = $1} END {if (NR) printf "%d", v[int((NR + 1) / 2)] / 2}')
		[[ -n "$LATENCY_RATE" && "$LATENCY_RATE" -gt 0 ]] || LATENCY_RATE=10000
		echo "latency_rate=$LATENCY_RATE" >>"$RUN/meta.txt"
	fi
	for rep in $(seq 1 "$REPS"); do
		for broker in $(rep_order "$rep" "${brokers[@]}"); do
			use_broker "$broker"
			local topic="latency-$rep"
			create_topic "$topic"
			[[ $rep == 1 ]] && profile_kbroker "$broker" latency "$((LATENCY_SECONDS - 2))"
			measure "$broker" e2e-latency "$rep" $((1024 * LATENCY_RATE * LATENCY_SECONDS)) parse_loadgen \
				"$RUN/loadgen" -bootstrap "$BOOTSTRAP" -topic "$topic" -rate "$LATENCY_RATE" -size 1024 \
				-acks 1 -duration "${LATENCY_SECONDS}s" -warmup 3s
			wait_profile
			delete_topic "$topic"
		done
	done

	# Consume: write CONSUME_RECORDS x 1 KiB once per broker, then read it
	# all REPS times, each with a new group from the earliest offset. The
	# data was just written, so it is in the page cache (both brokers' 2 GiB
	# fit in it together).
	# The fill is set-up, not a measured run: larger batches (the same for
	# both brokers) make it quicker on a slow machine.
	local -a fill
	for broker in "${brokers[@]}"; do
		use_broker "$broker"
		create_topic consume
		fill=("$TOOLS/kafka-producer-perf-test" --topic consume --num-records "$CONSUME_RECORDS"
			--record-size 1024 --throughput -1 --command-property "bootstrap.servers=$BOOTSTRAP" acks=1 "${FILL_PROPS[@]}")
		log_cmd fill "${fill[@]}"
		timeout "$STEP_TIMEOUT" "${fill[@]}" >"$RUN/$broker-consume-fill.out" 2>&1 || echo "bench: $broker consume fill failed" >&2
		echo "bench: $broker consume fill: $(parse_producer_perf "$RUN/$broker-consume-fill.out")" >&2
	done
	for rep in $(seq 1 "$REPS"); do
		for broker in $(rep_order "$rep" "${brokers[@]}"); do
			use_broker "$broker"
			[[ $rep == 1 ]] && profile_kbroker "$broker" consume "$PROFILE_SECONDS_CONSUME" 1
			measure "$broker" consume-2gib "$rep" $((1024 * CONSUME_RECORDS)) parse_consumer_perf \
				"$TOOLS/kafka-consumer-perf-test" --bootstrap-server "$BOOTSTRAP" --topic consume \
				--num-records "$CONSUME_RECORDS" --group "bench-$rep" --timeout 60000
			wait_profile
		done
	done
	# The same records again through the SASL_SSL listener, each run a new
	# group. Over TLS neither broker can hand the log to the socket with
	# sendfile: both encrypt in user space (see bench/README.md).
	for rep in $(seq 1 "$REPS"); do
		for broker in $(rep_order "$rep" "${brokers[@]}"); do
			use_broker "$broker"
			[[ $rep == 1 ]] && profile_kbroker "$broker" consume-sasl-ssl "$PROFILE_SECONDS_CONSUME" 1
			measure "$broker" consume-sasl-ssl "$rep" $((1024 * CONSUME_RECORDS)) parse_consumer_perf \
				"$TOOLS/kafka-consumer-perf-test" --bootstrap-server "$SASL_BOOTSTRAP" \
				--command-config "$SASL_CLIENT_CONFIG" --topic consume \
				--num-records "$CONSUME_RECORDS" --group "bench-sasl-ssl-$rep" --timeout 60000
			wait_profile
		done
	done
	for broker in "${brokers[@]}"; do
		use_broker "$broker"
		delete_topic consume
	done
}
