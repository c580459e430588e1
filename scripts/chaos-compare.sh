#!/usr/bin/env bash
# Runs one chaos schedule (compat/cluster TestChaosSeeded) against kbroker
# and then against Apache Kafka 3.9.1 (ZooKeeper mode), one after the
# other on the same machine, and writes both reports, with the two summary
# lines side by side first, into one markdown file.
# Usage: [CHAOS_QUIET=5s-15s] scripts/chaos-compare.sh SEED FAULTS OUT
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seed=${1:?seed} faults=${2:?faults} out=${3:?output file}
quiet=${CHAOS_QUIET:-1s-3s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for target in kbroker kafka39; do
	echo "chaos-compare: seed $seed, $faults faults, $target"
	if ! CHAOS_SEED=$seed CHAOS_FAULTS=$faults CHAOS_QUIET=$quiet CHAOS_TARGET=$target CHAOS_REPORT="$tmp/$target.md" \
		go test -count=1 -timeout 180m -run '^TestChaosSeeded$' -v ./compat/cluster/ >"$tmp/$target.log" 2>&1; then
		echo "chaos-compare: the $target run failed; its log tail:" >&2
		tail -50 "$tmp/$target.log" >&2
		status=1
	fi
done
{
	echo "# Chaos comparison, seed $seed, $faults faults, quiet gaps $quiet"
	echo
	echo "The same schedule (\`make chaos-compare SEED=$seed FAULTS=$faults QUIET=$quiet\`) and workload, run"
	echo "against kbroker and then against Apache Kafka 3.9.1 in ZooKeeper mode, on one machine."
	echo
	echo '```'
	for target in kbroker kafka39; do
		grep -h '^chaos: seed=' "$tmp/$target.log" || echo "$target: no summary (the run failed)"
	done
	echo '```'
	for target in kbroker kafka39; do
		echo
		if [[ -f "$tmp/$target.md" ]]; then
			sed 's/^# /## /' "$tmp/$target.md"
		else
			echo "## $target: no report (the run failed)"
		fi
	done
} >"$out"
echo "chaos-compare: wrote $out"
exit $status
