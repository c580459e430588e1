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
		# No minimisation: the engine can report its own deadline
		# ("context deadline exceeded") when the budget ends while it
		# shrinks a new input, which is not a finding. A real crash still
		# fails with "Failing input written to testdata/fuzz/...".
		out="$(mktemp)"
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 0 "$dir" >"$out" 2>&1; then
			if grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out"; then
				# Shown without its "--- FAIL" line, which log readers
				# would count as a failing test.
				sed 's/^--- FAIL: /--- engine deadline: /' "$out"
				echo "fuzz: $dir $target: the engine's own deadline, not a finding; running it again"
				go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 0 "$dir" || failed+=("$dir $target")
			else
				cat "$out"
				failed+=("$dir $target")
			fi
		else
			cat "$out"
		fi
		rm -f "$out"
		n=$((n + 1))
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./compat/lib/' | sort)
echo "fuzz: $n targets run, ${#failed[@]} failed"
if ((${#failed[@]})); then
	printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
	exit 1
fi
