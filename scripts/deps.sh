#!/usr/bin/env bash
# Installs what the tests need beyond the Go toolchain, so that `make test`
# runs on a fresh Debian machine: the Debian packages below (as root), then
# the Apache Kafka command-line tools (Maven jars in compat/lib, per
# compat/pom.xml). Idempotent: a package is installed only when missing, the
# jars fetched again only when compat/pom.xml changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# mvn resolves the jars below; javac compiles the transaction tests' Java
# clients; kcat runs the librdkafka tests; openssl (and the JDK's keytool)
# make the security tests' certificates; the zookeeper package's server runs
# under every cluster test (scripts/zk.sh). The network-fault tests and the
# chaos runs need root and, in the namespaces they make, iptables (the faults
# are DROP rules) and iproute2 (ip, tc): a fresh Debian has no iptables.
need=()
command -v mvn >/dev/null || need+=(maven)
command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
command -v kcat >/dev/null || need+=(kcat)
command -v openssl >/dev/null || need+=(openssl)
dpkg -s zookeeper >/dev/null 2>&1 || need+=(zookeeper)
if [[ "$(id -u)" == 0 ]]; then
	command -v iptables >/dev/null || need+=(iptables)
	{ command -v ip && command -v tc; } >/dev/null || need+=(iproute2)
fi
if ((${#need[@]})); then
	if [[ "$(id -u)" != 0 ]]; then
		echo "deps: missing ${need[*]}, and not root to install them (apt-get install ${need[*]})" >&2
		exit 1
	fi
	echo "deps: installing ${need[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

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
