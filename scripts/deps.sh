#!/usr/bin/env bash
# Installs what the tests need beyond the Go toolchain: the Apache Kafka
# command-line tools (Maven jars in compat/lib, per compat/pom.xml) and kcat.
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

if ! command -v kcat >/dev/null; then
	if [[ "$(id -u)" == 0 ]]; then
		echo "deps: installing kcat"
		apt-get update -q
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q kcat
	else
		echo "deps: kcat missing and not root; install it (apt-get install kcat)" >&2
		exit 1
	fi
fi
