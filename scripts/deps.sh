#!/usr/bin/env bash
# Installs what the tests need beyond the Go toolchain: the Apache Kafka
# command-line tools (Maven jars in compat/lib, per compat/pom.xml), kcat and,
# as root, the network tools of the fault tests.
# Idempotent: the jars are fetched again only when compat/pom.xml changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stamp=compat/lib/.pom.sha256
want="$(sha256sum compat/pom.xml | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && compgen -G 'compat/lib/kafka-tools-*.jar' >/dev/null; then
	echo "deps: compat/lib up to date"
else
	echo "deps: resolving Kafka tools with Maven"
	rm -rf compat/lib
	(cd compat && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib)
	echo "$want" >"$stamp"
fi

# kcat runs the librdkafka tests. The network-fault tests and the chaos runs
# need root and, in the network namespaces they make, iptables (the faults
# are DROP rules) and iproute2 (ip, tc); a fresh Debian has neither iptables
# nor, in a slim image, iproute2.
need=()
command -v kcat >/dev/null || need+=(kcat)
if [[ "$(id -u)" == 0 ]]; then
	command -v iptables >/dev/null || need+=(iptables)
	{ command -v ip && command -v tc; } >/dev/null || need+=(iproute2)
fi
if ((${#need[@]})); then
	if [[ "$(id -u)" == 0 ]]; then
		echo "deps: installing ${need[*]}"
		apt-get update -q
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
	else
		echo "deps: ${need[*]} missing and not root; install it (apt-get install ${need[*]})" >&2
		exit 1
	fi
fi
