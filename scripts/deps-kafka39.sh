#!/usr/bin/env bash
# Installs Apache Kafka 3.9.1 (the broker, in ZooKeeper mode) as jars in
# compat/lib39, per compat/kafka39/pom.xml. The transaction tests in compat/
# can be pointed at it (KBROKER_ORACLE=kafka39) to record Kafka's own
# answers. Idempotent: the jars are fetched again only when the pom changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stamp=compat/lib39/.pom.sha256
want="$(sha256sum compat/kafka39/pom.xml | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && compgen -G 'compat/lib39/kafka_2.13-*.jar' >/dev/null; then
	echo "deps-kafka39: compat/lib39 up to date"
	exit 0
fi
echo "deps-kafka39: resolving Kafka 3.9.1 with Maven"
rm -rf compat/lib39
(cd compat/kafka39 && mvn -q -B dependency:copy-dependencies -DoutputDirectory=../lib39)
echo "$want" >"$stamp"
