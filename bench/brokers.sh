# Sourced by bench/run.sh: start, wait for and stop the two brokers under
# test. Both get the same treatment: a fresh data directory on the same disk,
# a listener on 127.0.0.1 only, logs into the run directory, and a pid we kill
# ourselves (never by name: other engineers' brokers share this machine).

# Kafka's own start script adds these to the heap flags
# (KAFKA_JVM_PERFORMANCE_OPTS in bin/kafka-run-class.sh); we keep them so the
# JVM runs the way Kafka ships it.
KAFKA_JVM_OPTS=(-Xmx1G -Xms1G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20
	-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent
	-XX:MaxInlineLevel=15 -Djava.awt.headless=true)

# write_kraft_config DIR ID PORT CONTROLLER_PORT QUORUM_PROP [PROP...]: a
# KRaft node in combined mode (broker and controller in one process) with
# the listener layout every Kafka node of the bench shares, Kafka defaults
# otherwise. QUORUM_PROP says how it finds the controller quorum; the PROPs
# follow num.partitions. With SASL_SSL_PORT set (the single broker), the
# node gets a SASL_SSL listener there too, configured by
# sasl_ssl_broker_props (bench/security.sh).
write_kraft_config() {
	local dir=$1 id=$2 port=$3 cport=$4 quorum=$5
	shift 5
	local listeners="PLAINTEXT://127.0.0.1:$port" map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
	if [[ -n "${SASL_SSL_PORT:-}" ]]; then
		listeners+=",SASL_SSL://127.0.0.1:$SASL_SSL_PORT"
		map+=,SASL_SSL:SASL_SSL
	fi
	{
		cat <<PROPS
process.roles=broker,controller
node.id=$id
$quorum
listeners=$listeners,CONTROLLER://127.0.0.1:$cport
advertised.listeners=$listeners
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$map
log.dirs=$dir/data
num.partitions=1
PROPS
		printf '%s\n' "$@" group.initial.rebalance.delay.ms=0
		[[ -z "${SASL_SSL_PORT:-}" ]] || sasl_ssl_broker_props "$CERTS"
	} >"$dir/server.properties"
}

# start_kafka DIR PORT CONTROLLER_PORT SASL_SSL_PORT: formats the storage
# with Kafka's StorageTool and starts kafka.Kafka; sets BROKER_PID.
start_kafka() {
	local dir=$1 port=$2 cport=$3
	mkdir -p "$dir"
	# A single node cannot hold the internal topics' default 3 replicas.
	SASL_SSL_PORT=$4 write_kraft_config "$dir" 1 "$port" "$cport" "controller.quorum.bootstrap.servers=127.0.0.1:$cport" \
		offsets.topic.replication.factor=1 transaction.state.log.replication.factor=1 \
		transaction.state.log.min.isr=1 share.coordinator.state.topic.replication.factor=1 \
		share.coordinator.state.topic.min.isr=1
	local cp="$LIB/*" uuid
	uuid=$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
	java -cp "$cp" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn kafka.tools.StorageTool \
		format -t "$uuid" -c "$dir/server.properties" --standalone >"$dir/format.log" 2>&1
	java "${KAFKA_JVM_OPTS[@]}" -cp "$cp" \
		-Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.logFile=System.err \
		kafka.Kafka "$dir/server.properties" >"$dir/server.log" 2>&1 &
	BROKER_PID=$!
	record_pid "$BROKER_PID"
	{
		echo "java -cp 'compat/lib/*' kafka.tools.StorageTool format -t <random-uuid> -c \$RUN/kafka/server.properties --standalone"
		echo "java ${KAFKA_JVM_OPTS[*]} -cp 'compat/lib/*' kafka.Kafka \$RUN/kafka/server.properties"
		echo "# \$RUN/kafka/server.properties:"
		sed -e "s|$RUN|\$RUN|g" -e 's/^/#   /' "$dir/server.properties"
	} >>"$RUN/commands.txt"
	wait_port "$port" "$dir/server.log"
}

# start_kbroker DIR PORT METRICS_PORT SASL_SSL_PORT: bin/kbroker standalone
# with pprof on, like Kafka's single node a transaction state log of one
# replica, and the same SASL_SSL listener (sasl_ssl_broker_props, one
# --override a line).
start_kbroker() {
	local dir=$1 port=$2 mport=$3 sport=$4 line i
	mkdir -p "$dir/data"
	local -a overrides=(
		--override "listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sport"
		--override "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL"
		--override "log.dirs=$dir/data"
		--override "metrics.listener=127.0.0.1:$mport"
		--override "pprof.enable=true"
		--override transaction.state.log.replication.factor=1
		--override transaction.state.log.min.isr=1
	)
	while IFS= read -r line; do
		overrides+=(--override "$line")
	done < <(sasl_ssl_broker_props "$CERTS")
	"$ROOT/bin/kbroker" "$ROOT/config/server.properties" "${overrides[@]}" >"$dir/server.log" 2>&1 &
	BROKER_PID=$!
	record_pid "$BROKER_PID"
	{
		printf 'bin/kbroker config/server.properties'
		for ((i = 1; i < ${#overrides[@]}; i += 2)); do printf " --override '%s'" "${overrides[i]}"; done
		echo
	} | sed -e "s|$RUN|\$RUN|g" >>"$RUN/commands.txt"
	wait_port "$port" "$dir/server.log"
}

# wait_port PORT LOG: up to 60 s for the broker to answer metadata requests.
wait_port() {
	local port=$1 log=$2 i
	for ((i = 0; i < 120; i++)); do
		if ! kill -0 "$BROKER_PID" 2>/dev/null; then
			echo "bench: broker exited during start-up; last log lines:" >&2
			tail -20 "$log" >&2
			return 1
		fi
		if "$TOOLS/kafka-topics" --bootstrap-server "127.0.0.1:$port" --list >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.5
	done
	echo "bench: broker on port $port not ready after 60 s" >&2
	return 1
}

# record_pid PID: notes a server this run started in PIDS_FILE (if set).
record_pid() {
	[[ -z "${PIDS_FILE:-}" ]] || echo "$1" >>"$PIDS_FILE"
}

# stop_brokers: every single broker run.sh started.
stop_brokers() {
	local pid current=${BROKER_PID:-}
	for pid in $current "${BROKER_PIDS_BY_NAME[@]}"; do
		BROKER_PID=$pid
		stop_broker
	done
	BROKER_PIDS_BY_NAME=()
}

# stop_broker: SIGTERM, then SIGKILL after 30 s.
stop_broker() {
	[[ -n "${BROKER_PID:-}" ]] || return 0
	stop_pids "$BROKER_PID"
	BROKER_PID=
}

# stop_pids PID...: SIGTERM to all at once, SIGKILL to any left after 30 s.
stop_pids() {
	local pid i alive
	for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
	for ((i = 0; i < 60; i++)); do
		alive=
		for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
		[[ -n "$alive" ]] || break
		sleep 0.5
	done
	for pid in "$@"; do
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}
