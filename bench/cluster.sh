# Sourced by bench/run.sh: issue 5's cluster workload. Three brokers on this
# machine, replication factor 3, min.insync.replicas=2, acks=all.
#   kbroker: ZooKeeper (scripts/zk.sh, the Debian package) and bin/kbroker
#            with config/cluster/broker-N.properties, broker.id 1..3.
#   Kafka:   three KRaft nodes, each broker and controller in one process,
#            a static quorum (controller.quorum.voters), formatted with one
#            cluster id, -Xmx512M each so three JVMs fit the machine.
# BROKER_PIDS holds the three broker pids: the CPU and RSS probes of
# bench/workloads.sh sum over them. ZooKeeper is not a broker process; its
# CPU and peak RSS over the whole kbroker phase go to meta.txt instead, so
# the results file can say what the fourth process costs.

KAFKA_CLUSTER_JVM_OPTS=(-Xmx512M -Xms512M "${KAFKA_JVM_OPTS[@]:2}")
ZK_DIR=

# start_kafka_cluster DIR: sets BROKER_PIDS and BOOTSTRAP.
start_kafka_cluster() {
	local dir=$1 cp="$LIB/*" uuid i voters="" from=$((KAFKA_PORT + 10))
	local -a ports cports
	for i in 1 2 3; do
		ports[i]=$(free_port "$from")
		cports[i]=$(free_port $((ports[i] + 1)))
		from=$((cports[i] + 1))
		voters+="${voters:+,}$i@127.0.0.1:${cports[i]}"
	done
	uuid=$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
	BROKER_PIDS=""
	for i in 1 2 3; do
		mkdir -p "$dir/node-$i"
		write_kraft_config "$dir/node-$i" "$i" "${ports[i]}" "${cports[i]}" "controller.quorum.voters=$voters"
		java -cp "$cp" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn kafka.tools.StorageTool \
			format -t "$uuid" -c "$dir/node-$i/server.properties" >"$dir/node-$i/format.log" 2>&1
	done
	for i in 1 2 3; do
		java "${KAFKA_CLUSTER_JVM_OPTS[@]}" -cp "$cp" \
			-Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.logFile=System.err \
			kafka.Kafka "$dir/node-$i/server.properties" >"$dir/node-$i/server.log" 2>&1 &
		BROKER_PIDS+="${BROKER_PIDS:+ }$!"
		record_pid "$!"
	done
	BOOTSTRAP="127.0.0.1:${ports[1]},127.0.0.1:${ports[2]},127.0.0.1:${ports[3]}"
	{
		echo "# cluster: three nodes, node-N for N in 1 2 3, one cluster id:"
		echo "java -cp 'compat/lib/*' kafka.tools.StorageTool format -t <random-uuid> -c \$RUN/kafka-cluster/node-N/server.properties"
		echo "java ${KAFKA_CLUSTER_JVM_OPTS[*]} -cp 'compat/lib/*' kafka.Kafka \$RUN/kafka-cluster/node-N/server.properties"
		echo "# \$RUN/kafka-cluster/node-1/server.properties:"
		sed -e "s|$RUN|\$RUN|g" -e 's/^/#   /' "$dir/node-1/server.properties"
	} >>"$RUN/commands.txt"
	wait_cluster "$dir"
}

# start_kbroker_cluster DIR: ZooKeeper, then three kbrokers; sets
# BROKER_PIDS and BOOTSTRAP.
start_kbroker_cluster() {
	local dir=$1 i zk_port port mport from=$((KBROKER_PORT + 10))
	zk_port=$(free_port 22181)
	ZK_DIR="$dir/zk"
	"$ROOT/scripts/zk.sh" start "$ZK_DIR" "$zk_port" >&2
	record_pid "$(cat "$ZK_DIR/zk.pid")"
	BROKER_PIDS=""
	BOOTSTRAP=""
	for i in 1 2 3; do
		port=$(free_port "$from")
		mport=$(free_port $((port + 1)))
		from=$((mport + 1))
		mkdir -p "$dir/broker-$i/data"
		"$ROOT/bin/kbroker" "$ROOT/config/cluster/broker-$i.properties" \
			--override "listeners=PLAINTEXT://127.0.0.1:$port" \
			--override "log.dirs=$dir/broker-$i/data" \
			--override "zookeeper.connect=127.0.0.1:$zk_port" \
			--override "metrics.listener=127.0.0.1:$mport" >"$dir/broker-$i/server.log" 2>&1 &
		BROKER_PIDS+="${BROKER_PIDS:+ }$!"
		record_pid "$!"
		BOOTSTRAP+="${BOOTSTRAP:+,}127.0.0.1:$port"
	done
	{
		echo "# cluster: scripts/zk.sh start \$RUN/kbroker-cluster/zk <port>, then for N in 1 2 3:"
		echo "bin/kbroker config/cluster/broker-N.properties --override listeners=PLAINTEXT://127.0.0.1:<port N> --override log.dirs=\$RUN/kbroker-cluster/broker-N/data --override zookeeper.connect=127.0.0.1:<zk port> --override metrics.listener=127.0.0.1:<metrics port N>"
	} >>"$RUN/commands.txt"
	wait_cluster "$dir"
}

# wait_cluster DIR: up to 90 s until a replication-factor-3 topic can be
# created, which needs all three brokers registered; every broker must stay
# alive meanwhile.
wait_cluster() {
	local dir=$1 i pid
	for ((i = 0; i < 90; i++)); do
		for pid in $BROKER_PIDS; do
			if ! kill -0 "$pid" 2>/dev/null; then
				echo "bench: cluster broker $pid exited during start-up; logs in $dir" >&2
				return 1
			fi
		done
		if "$TOOLS/kafka-topics" --bootstrap-server "$BOOTSTRAP" --create --topic cluster-ready \
			--partitions 1 --replication-factor 3 >/dev/null 2>&1; then
			delete_topic cluster-ready
			return 0
		fi
		sleep 1
	done
	echo "bench: cluster at $BOOTSTRAP not ready after 90 s; logs in $dir" >&2
	return 1
}

# stop_cluster: SIGTERM to all three brokers at once (one at a time, a KRaft
# node that lost its quorum waits for it), SIGKILL after 30 s; then
# ZooKeeper through zk.sh.
stop_cluster() {
	if [[ -n "${BROKER_PIDS:-}" ]]; then
		# shellcheck disable=SC2086 # BROKER_PIDS is a list
		stop_pids $BROKER_PIDS
		BROKER_PIDS=
	fi
	if [[ -n "${ZK_DIR:-}" ]]; then
		"$ROOT/scripts/zk.sh" stop "$ZK_DIR" 0 || true
		ZK_DIR=
	fi
}

# zk_usage: ZooKeeper's CPU seconds so far and its peak RSS in kB.
zk_usage() {
	local pid
	pid=$(cat "$ZK_DIR/zk.pid" 2>/dev/null) || return 0
	awk -v hz="$CLK_TCK" '{printf "%.2f ", ($14 + $15) / hz}' "/proc/$pid/stat" 2>/dev/null
	awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null
}

# run_cluster_workload BROKER: an unmeasured warm-up of CLUSTER_WARMUP_RECORDS
# (three fresh JVMs still compile their replication paths well into a
# 200000-record warm-up: Kafka's first measured runs went 10, 19, 25 MB/s),
# then REPS runs of
# CLUSTER_RECORDS x 1 KiB at acks=all into a topic with 6 partitions,
# replication factor 3 and min.insync.replicas=2.
run_cluster_workload() {
	local broker=$1 rep zk_before=""
	TOPIC_ARGS=(--replication-factor 3 --config min.insync.replicas=2)
	[[ -n "${ZK_DIR:-}" ]] && zk_before=$(zk_usage)
	create_topic cluster-warmup
	timeout "$STEP_TIMEOUT" "$TOOLS/kafka-producer-perf-test" --topic cluster-warmup \
		--num-records "$CLUSTER_WARMUP_RECORDS" --record-size 1024 --throughput -1 \
		--command-property "bootstrap.servers=$BOOTSTRAP" acks=all "${PRODUCER_PROPS[@]}" \
		>"$RUN/$broker-cluster-warmup.out" 2>&1 || true
	delete_topic cluster-warmup
	for rep in $(seq 1 "$REPS"); do
		produce_run "$broker" cluster-1k-acksall "$rep" 1024 all "$CLUSTER_RECORDS"
	done
	if [[ -n "$zk_before" ]]; then
		local zk_after
		zk_after=$(zk_usage)
		echo "zookeeper_cluster=$(awk -v b="${zk_before%% *}" -v a="$zk_after" \
			'BEGIN {split(a, x, " "); printf "%.2f CPU s over the kbroker cluster phase, peak RSS %.0f MiB", x[1] - b, x[2] / 1024}')" >>"$RUN/meta.txt"
	fi
	TOPIC_ARGS=(--replication-factor 1)
}
