#!/usr/bin/env bash
# Runs franz-go's own pkg/kgo integration tests against a fresh standalone
# kbroker (KGO_SEEDS points them at it). The standalone broker also has a
# SASL_PLAINTEXT listener (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) with a SCRAM
# user made by kafka-configs (compat/bin, jars from `make deps`), for
# TestSCRAMAuth and TestSCRAMAuthBadCredentials (KGO_TEST_SCRAM_SEEDS,
# KGO_TEST_SCRAM); TestSCRAMAuth runs once more with SCRAM-SHA-512.
#
#   compat/kgo-suite.sh            the tests in compat/kgo-allowlist.txt
#   compat/kgo-suite.sh --all      every Test* one by one; writes a
#                                  pass/fail table to $KGO_RESULTS
#                                  (default: .cache/kgo-results.txt)
#   compat/kgo-suite.sh -run RE    the tests matching RE
#
# With --cluster first (compat/kgo-suite.sh --cluster [--all | -run RE]) the
# tests run against three cluster-mode kbrokers sharing a private ZooKeeper
# (scripts/zk.sh on a free port), with replication factor 3 (KGO_TEST_RF)
# and all three as seeds; the allow-list is then
# compat/kgo-allowlist-cluster.txt.
#
# The tests are compiled from the module cache (go test of a dependency
# package); if that cannot build inside our module, a scratch module is made
# in a temp dir. Nothing is copied into the repository.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

franz_version="$(go list -m -f '{{.Version}}' github.com/twmb/franz-go)"
pkg=github.com/twmb/franz-go/pkg/kgo
mode=allow
run_re=""
cluster=""
allowlist="$root/compat/kgo-allowlist.txt"
if [[ "${1:-}" == --cluster ]]; then
	cluster=1
	allowlist="$root/compat/kgo-allowlist-cluster.txt"
	shift
fi
case "${1:-}" in
--all) mode=all ;;
-run) mode=run; run_re="$2" ;;
"") ;;
*) echo "usage: $0 [--cluster] [--all | -run REGEX]" >&2; exit 2 ;;
esac

work="$(mktemp -d)"
# broker_pids[i] is the process of broker i (0 standalone, 1-3 cluster).
declare -a broker_pids=()
zk_port=""
stop_pid() {
	local pid=$1
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
	for pid in "${broker_pids[@]}"; do stop_pid "$pid"; done
	[[ -z "$zk_port" ]] || "$root/scripts/zk.sh" stop "$work/zk" "$zk_port" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

bin="${KBROKER_BIN:-}"
if [[ -z "$bin" ]]; then
	go build -o bin/kbroker ./cmd/kbroker
	bin="$root/bin/kbroker"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# write_config N PORT [PROP...]: the server.properties of broker N.
write_config() {
	local n=$1 port=$2
	shift 2
	{
		cat <<PROPS
broker.id=$n
listeners=PLAINTEXT://127.0.0.1:$port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
log.dirs=$work/kafka-logs-$n
num.partitions=1
group.initial.rebalance.delay.ms=0
PROPS
		printf '%s\n' "$@"
	} >"$work/server-$n.properties"
}

# start_broker N PORT: starts broker N and waits until it listens.
start_broker() {
	local n=$1 port=$2 pid
	"$bin" "$work/server-$n.properties" >>"$work/kbroker-$n.log" 2>&1 &
	pid=$!
	broker_pids[n]=$pid
	for _ in $(seq 300); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "kgo-suite: kbroker $n exited during start-up:" >&2
			tail -50 "$work/kbroker-$n.log" >&2
			return 1
		fi
		if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null; then
			return 0
		fi
		sleep 0.2
	done
	echo "kgo-suite: kbroker $n not listening on 127.0.0.1:$port after 60s" >&2
	return 1
}

# brokers_log_tail: the last lines of every broker's log, for a failure.
brokers_log_tail() {
	local f
	for f in "$work"/kbroker-*.log; do
		echo "----- $f" >&2
		tail -50 "$f" >&2
	done
}

# The SCRAM user of the SASL listener; the password is also its PLAIN one.
scram_user=kgo-scram
scram_pass=kgo-scram-secret

# sasl_props PORT: a SASL_PLAINTEXT listener on PORT besides PLAINTEXT
# (listeners must then name both), with PLAIN and both SCRAMs; the JAAS
# text is Kafka's, one per mechanism as Kafka wants without a JAAS file.
sasl_props() {
	local port=$1 sport=$2 m
	local ls="PLAINTEXT://127.0.0.1:$port,SASL_PLAINTEXT://127.0.0.1:$sport"
	echo "listeners=$ls"
	echo "advertised.listeners=$ls"
	echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT"
	echo "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
	echo "listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" user_$scram_user=\"$scram_pass\";"
	for m in scram-sha-256 scram-sha-512; do
		echo "listener.name.sasl_plaintext.$m.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"admin-secret\";"
	done
}

# create_scram_user: SCRAM-SHA-256 and -512 credentials for $scram_user,
# through the PLAINTEXT listener (AlterUserScramCredentials), then a wait
# until kcat authenticates with each on the SASL listener.
create_scram_user() {
	local port=$1 sport=$2 m i
	if ! compgen -G "$root/compat/lib/kafka-tools-*.jar" >/dev/null; then
		echo "kgo-suite: no Kafka tools in compat/lib; run make deps" >&2
		return 1
	fi
	"$root/compat/bin/kafka-configs" --bootstrap-server "127.0.0.1:$port" --alter \
		--add-config "SCRAM-SHA-256=[iterations=4096,password=$scram_pass],SCRAM-SHA-512=[password=$scram_pass]" \
		--entity-type users --entity-name "$scram_user" >"$work/kafka-configs.out" 2>&1 || {
		cat "$work/kafka-configs.out" >&2
		return 1
	}
	for m in SCRAM-SHA-256 SCRAM-SHA-512; do
		for i in $(seq 100); do
			if kcat -L -b "127.0.0.1:$sport" -m 2 -X security.protocol=sasl_plaintext -X sasl.mechanisms=$m \
				-X sasl.username=$scram_user -X sasl.password=$scram_pass >/dev/null 2>&1; then
				break
			fi
			if ((i == 100)); then
				echo "kgo-suite: $scram_user does not authenticate with $m on 127.0.0.1:$sport" >&2
				return 1
			fi
			sleep 0.2
		done
	done
}

declare -a ports=()
scram_seeds=""
if [[ -z "$cluster" ]]; then
	ports[0]="$(free_port)"
	sasl_port="$(free_port)"
	# A single broker cannot hold 3 replicas of the internal topics.
	mapfile -t sasl_lines < <(sasl_props "${ports[0]}" "$sasl_port")
	write_config 0 "${ports[0]}" offsets.topic.replication.factor=1 \
		transaction.state.log.replication.factor=1 transaction.state.log.min.isr=1 "${sasl_lines[@]}"
	start_broker 0 "${ports[0]}"
	if ! create_scram_user "${ports[0]}" "$sasl_port"; then
		brokers_log_tail
		exit 1
	fi
	seeds="127.0.0.1:${ports[0]}"
	scram_seeds="127.0.0.1:$sasl_port"
	rf=1
else
	zk_port="$(free_port)"
	"$root/scripts/zk.sh" start "$work/zk" "$zk_port" >/dev/null
	seeds=""
	for n in 1 2 3; do
		ports[n]="$(free_port)"
		seeds="${seeds:+$seeds,}127.0.0.1:${ports[n]}"
		# The harness's cluster timeouts (compat/harness/cluster.go).
		write_config "$n" "${ports[n]}" "zookeeper.connect=127.0.0.1:$zk_port" \
			default.replication.factor=3 offsets.topic.replication.factor=3 \
			transaction.state.log.replication.factor=3 zookeeper.session.timeout.ms=6000 \
			replica.lag.time.max.ms=6000 controlled.shutdown.retry.backoff.ms=500
	done
	for n in 1 2 3; do start_broker "$n" "${ports[n]}"; done
	# Topics with 3 replicas need all three registered: wait (60 s at
	# most) until every broker's Metadata lists 3 brokers.
	for n in 1 2 3; do
		for i in $(seq 300); do
			if kcat -L -b "127.0.0.1:${ports[n]}" -m 2 2>/dev/null | grep -q '^ 3 brokers:'; then
				break
			fi
			if ((i == 300)); then
				echo "kgo-suite: broker $n does not list 3 brokers after 60s" >&2
				brokers_log_tail
				exit 1
			fi
			sleep 0.2
		done
	done
	rf=3
fi

# How the test binary is built: inside our module if go can, else in a
# scratch module pinned to the same franz-go version.
gotest_dir="$root"
if ! go test -count=1 -run '^$' "$pkg" >/dev/null 2>&1; then
	gotest_dir="$work/scratch"
	mkdir -p "$gotest_dir"
	(cd "$gotest_dir" && go mod init kgosuite >/dev/null 2>&1 && go get "github.com/twmb/franz-go@$franz_version" >/dev/null)
fi

export KGO_SEEDS="$seeds"
export KGO_TEST_RF="$rf"
if [[ -n "$scram_seeds" ]]; then
	# franz-go's helpers_test.go: user:pass, SHA-256 unless :512 follows.
	export KGO_TEST_SCRAM_SEEDS="$scram_seeds"
	export KGO_TEST_SCRAM="$scram_user:$scram_pass"
fi
# Three brokers replicating every record take longer: 11000 records still
# make TestTxnEtl's producer end and begin a transaction (every 10000).
default_records=20000
[[ -z "$cluster" ]] || default_records=11000
export KGO_TEST_RECORDS="${KGO_TEST_RECORDS:-$default_records}"
export KGO_LOG_LEVEL="${KGO_LOG_LEVEL:-none}"

gotest() { (cd "$gotest_dir" && go test "$pkg" -count=1 "$@"); }

case "$mode" in
allow)
	tests="$(grep -v '^\s*#' "$allowlist" | awk 'NF {print $1}' | paste -sd '|' -)"
	if [[ -z "$tests" ]]; then
		echo "kgo-suite: ${allowlist#"$root/"} lists no test"
		exit 0
	fi
	gotest -timeout 20m -v -run "^($tests)\$" 2>&1 | tee "$work/kgo.out" | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)' || true
	if grep -q '^FAIL' "$work/kgo.out" || ! grep -q '^ok' "$work/kgo.out"; then
		tail -100 "$work/kgo.out"
		echo "kgo-suite: allow-listed franz-go tests failed; kbroker log tail:" >&2
		brokers_log_tail
		exit 1
	fi
	# TestSCRAMAuth once more with SCRAM-SHA-512 (the run above used 256).
	if [[ -n "$scram_seeds" ]] && grep -qx 'TestSCRAMAuth' "$allowlist"; then
		KGO_TEST_SCRAM="$scram_user:$scram_pass:512" gotest -timeout 5m -v -run '^TestSCRAMAuth$' >"$work/kgo-512.out" 2>&1 || true
		grep -E '^(=== RUN|--- |PASS|FAIL|ok)' "$work/kgo-512.out" | sed 's/^/[SCRAM-SHA-512] /' || true
		if grep -q '^FAIL' "$work/kgo-512.out" || ! grep -q '^ok' "$work/kgo-512.out" || grep -q -- '--- SKIP' "$work/kgo-512.out"; then
			tail -50 "$work/kgo-512.out"
			echo "kgo-suite: TestSCRAMAuth with SCRAM-SHA-512 failed; kbroker log tail:" >&2
			brokers_log_tail
			exit 1
		fi
	fi
	;;
run)
	gotest -timeout 20m -v -run "$run_re"
	;;
all)
	results="${KGO_RESULTS:-$root/.cache/kgo-results.txt}"
	mkdir -p "$(dirname "$results")"; : >"$results.log"
	: >"$results"
	srcdir="$(go list -m -f '{{.Dir}}' "github.com/twmb/franz-go@$franz_version" 2>/dev/null || true)"
	[[ -n "$srcdir" ]] || srcdir="$(cd "$gotest_dir" && go list -m -f '{{.Dir}}' github.com/twmb/franz-go)"
	mapfile -t names < <(sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' "$srcdir"/pkg/kgo/*_test.go | sort -u)
	for name in "${names[@]}"; do
		for n in "${!broker_pids[@]}"; do
			kill -0 "${broker_pids[n]}" 2>/dev/null || { echo "kgo-suite: broker $n died; restarting" >&2; start_broker "$n" "${ports[n]}"; }
		done
		start=$(date +%s)
		if gotest -timeout 5m -v -run "^${name}\$" >"$work/$name.out" 2>&1; then
			status=PASS
			# A test that skips itself (feature not advertised, env not set)
			# exits 0 but proves nothing: it is not allow-listed.
			grep -q -- "^--- SKIP: ${name} " "$work/$name.out" && status=SKIP
		else
			status=FAIL
			echo "----- $name" >>"$results.log"
			# The test's own lines, not the goroutine dump of a timeout.
			grep -E '^(=== |--- |\s+\S+_test\.go:[0-9]+:|panic:|FAIL)' "$work/$name.out" | head -60 >>"$results.log"
		fi
		printf '%s\t%s\t%ss\n' "$status" "$name" "$(($(date +%s) - start))" | tee -a "$results"
	done
	echo "kgo-suite: $(grep -c '^PASS' "$results") passed, $(grep -c '^FAIL' "$results") failed, $(grep -c '^SKIP' "$results") skipped; table in $results"
	;;
esac
