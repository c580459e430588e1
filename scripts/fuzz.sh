#!/usr/bin/env bash
# Runs every Fuzz target in the repository for FUZZTIME each (default 10s).
# go test -fuzz accepts one target per run, so targets are found by name.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime="${FUZZTIME:-10s}"

n=0
failed=()
while IFS= read -r file; do
	dir="$(dirname "$file")"
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		echo "fuzz: $dir $target for $fuzztime"
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s "$dir"; then
			failed+=("$dir $target")
		fi
		n=$((n + 1))
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./compat/lib/' | sort)
echo "fuzz: $n targets run, ${#failed[@]} failed"
if ((${#failed[@]})); then
	printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
	exit 1
fi
