#!/usr/bin/env bash
# Runs franz-go's own pkg/kgo integration tests against a fresh standalone
# kbroker (KGO_SEEDS points them at it).
#
#   compat/kgo-suite.sh            the tests in compat/kgo-allowlist.txt
#   compat/kgo-suite.sh --all      every Test* one by one; writes a
#                                  pass/fail table to $KGO_RESULTS
#                                  (default: .cache/kgo-results.txt)
#   compat/kgo-suite.sh -run RE    the tests matching RE
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
case "${1:-}" in
--all) mode=all ;;
-run) mode=run; run_re="$2" ;;
"") ;;
*) echo "usage: $0 [--all | -run REGEX]" >&2; exit 2 ;;
esac

work="$(mktemp -d)"
broker_pid=""
cleanup() {
	if [[ -n "$broker_pid" ]] && kill -0 "$broker_pid" 2>/dev/null; then
		kill -TERM "$broker_pid" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$broker_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$broker_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

bin="${KBROKER_BIN:-}"
if [[ -z "$bin" ]]; then
	go build -o bin/kbroker ./cmd/kbroker
	bin="$root/bin/kbroker"
fi

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
addr="127.0.0.1:$port"
cat >"$work/server.properties" <<PROPS
broker.id=0
listeners=PLAINTEXT://$addr
advertised.listeners=PLAINTEXT://$addr
log.dirs=$work/kafka-logs
num.partitions=1
offsets.topic.replication.factor=1
group.initial.rebalance.delay.ms=0
PROPS

start_broker() {
	"$bin" "$work/server.properties" >>"$work/kbroker.log" 2>&1 &
	broker_pid=$!
	for _ in $(seq 300); do
		if ! kill -0 "$broker_pid" 2>/dev/null; then
			echo "kgo-suite: kbroker exited during start-up:" >&2
			tail -50 "$work/kbroker.log" >&2
			return 1
		fi
		if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null; then
			return 0
		fi
		sleep 0.2
	done
	echo "kgo-suite: kbroker not listening on $addr after 60s" >&2
	return 1
}
start_broker

# How the test binary is built: inside our module if go can, else in a
# scratch module pinned to the same franz-go version.
gotest_dir="$root"
if ! go test -count=1 -run '^$' "$pkg" >/dev/null 2>&1; then
	gotest_dir="$work/scratch"
	mkdir -p "$gotest_dir"
	(cd "$gotest_dir" && go mod init kgosuite >/dev/null 2>&1 && go get "github.com/twmb/franz-go@$franz_version" >/dev/null)
fi

export KGO_SEEDS="$addr"
export KGO_TEST_RF=1
export KGO_TEST_RECORDS="${KGO_TEST_RECORDS:-20000}"
export KGO_LOG_LEVEL="${KGO_LOG_LEVEL:-none}"

gotest() { (cd "$gotest_dir" && go test "$pkg" -count=1 "$@"); }

case "$mode" in
allow)
	tests="$(grep -v '^\s*#' "$root/compat/kgo-allowlist.txt" | awk 'NF {print $1}' | paste -sd '|' -)"
	if [[ -z "$tests" ]]; then
		echo "kgo-suite: compat/kgo-allowlist.txt lists no test"
		exit 0
	fi
	gotest -timeout 20m -v -run "^($tests)\$" 2>&1 | tee "$work/kgo.out" | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)' || true
	if grep -q '^FAIL' "$work/kgo.out" || ! grep -q '^ok' "$work/kgo.out"; then
		tail -100 "$work/kgo.out"
		echo "kgo-suite: allow-listed franz-go tests failed; kbroker log tail:" >&2
		tail -50 "$work/kbroker.log" >&2
		exit 1
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
		kill -0 "$broker_pid" 2>/dev/null || { echo "kgo-suite: broker died; restarting" >&2; start_broker; }
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
