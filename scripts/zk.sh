#!/usr/bin/env bash
# zk.sh start|stop DIR PORT
#
# Runs a single standalone ZooKeeper server (the Debian `zookeeper` package's
# ZooKeeperServerMain) on 127.0.0.1:PORT with its own zoo.cfg, data dir, log
# and pid file inside DIR. Used by tests, CI and `make cluster`. ZK_HOST
# (default 127.0.0.1) is the address to listen on instead: the network-fault
# tests run the script under `ip netns exec` with the namespace's address.
#
#   start: writes DIR/zoo.cfg, starts the server in the background, and waits
#          (at most ZK_START_TIMEOUT seconds, default 30) until it serves:
#          `srvr` names its mode. Exits non-zero (and stops the server) otherwise.
#   stop:  kills the pid recorded in DIR/zk.pid (TERM, then KILL after 10 s)
#          and removes the pid file. Never touches any other process.
#
# The classpath comes from the installed packages (dpkg -L), so no system
# path is spelled here; ZK_CLASSPATH overrides it. The package's jar carries
# its dependencies in its manifest Class-Path.
set -euo pipefail

usage() {
	echo "usage: $0 start|stop DIR PORT" >&2
	exit 2
}

[ $# -eq 3 ] || usage
cmd=$1
dir=$2
port=$3
case "$port" in '' | *[!0-9]*) usage ;; esac

pidfile="$dir/zk.pid"
host=${ZK_HOST:-127.0.0.1}

# serving: the server answers `srvr` with its mode only once its database
# is loaded and it takes sessions. `ruok` is no such test: a restarted
# server answers imok while it still turns every session away ("not
# running"). The four-letter word is whitelisted in the zoo.cfg we write.
serving() {
	(
		exec 2>/dev/null
		exec 3<>"/dev/tcp/$host/$port" || exit 1
		printf 'srvr' >&3
		reply=""
		IFS= read -r -d '' -t 2 reply <&3 || true
		[[ "$reply" == *"Mode:"* ]]
	)
}

classpath() {
	if [ -n "${ZK_CLASSPATH:-}" ]; then
		echo "$ZK_CLASSPATH"
		return
	fi
	local jar
	jar=$(dpkg -L libzookeeper-java 2>/dev/null | grep '/zookeeper\.jar$' | head -n1 || true)
	if [ -z "$jar" ] || [ ! -f "$jar" ]; then
		echo "zk.sh: ZooKeeper jar not found: install the Debian package (apt-get install -y zookeeper) or set ZK_CLASSPATH" >&2
		exit 1
	fi
	local cp="$jar"
	# A logging binding next to the jar sends the server's log to DIR/zk.log
	# (appended to: a restarted server's log follows the killed one's)
	# instead of slf4j's silent default.
	local simple
	simple="$(dirname "$jar")/slf4j-simple.jar"
	[ -f "$simple" ] && cp="$cp:$simple"
	echo "$cp"
}

# running PID: the process exists and is not a zombie. A server killed
# with SIGKILL is an orphan (the script setsid'd it and exited), and where
# nothing reaps orphans it stays a zombie, which kill -0 still finds.
running() {
	kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

alive() {
	[ -f "$pidfile" ] && running "$(cat "$pidfile")"
}

stop() {
	if ! [ -f "$pidfile" ]; then
		return 0
	fi
	local pid
	pid=$(cat "$pidfile")
	if running "$pid"; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do
			running "$pid" || break
			sleep 0.1
		done
		if running "$pid"; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$pidfile"
}

start() {
	mkdir -p "$dir/data"
	dir=$(cd "$dir" && pwd)
	pidfile="$dir/zk.pid"
	if alive; then
		echo "zk.sh: already running with pid $(cat "$pidfile")" >&2
		exit 1
	fi
	cat >"$dir/zoo.cfg" <<EOF
tickTime=500
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=$port
clientPortAddress=$host
maxClientCnxns=0
minSessionTimeout=1000
maxSessionTimeout=60000
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr,cons
autopurge.purgeInterval=0
EOF
	local cp
	cp=$(classpath)
	local java=${JAVA:-java}
	# setsid: the server must not die with the caller's terminal or process
	# group; stop() kills it by pid.
	setsid "$java" -Xmx256m -Dzookeeper.jmx.log4j.disable=true \
		-Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
		-cp "$cp" org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
		>>"$dir/zk.log" 2>&1 </dev/null &
	echo $! >"$pidfile"

	local deadline=$((SECONDS + ${ZK_START_TIMEOUT:-30}))
	while [ $SECONDS -lt $deadline ]; do
		if ! alive; then
			echo "zk.sh: server exited; last log lines:" >&2
			tail -n 20 "$dir/zk.log" >&2 || true
			rm -f "$pidfile"
			exit 1
		fi
		if serving; then
			echo "zk.sh: ZooKeeper up on $host:$port (pid $(cat "$pidfile"))"
			return 0
		fi
		sleep 0.2
	done
	echo "zk.sh: ZooKeeper did not answer on $host:$port in time" >&2
	stop
	exit 1
}

case "$cmd" in
start) start ;;
stop) stop ;;
*) usage ;;
esac
