#!/usr/bin/env bash
# tests/repeat.sh [-b BUILD] N TEST... — run each test N times in a row on one
# set of real servers, and print how many runs of each passed. A test that
# fails once in twenty runs is a defect; this is how to find it before CI
# does. TEST is an integration test (tests/integration/*.t), a unit test
# binary (build/tests/t-*) or a golden script. The output of every failed
# run is kept in a directory named at the end.
#   tests/repeat.sh 20 build/tests/t-supervisor-e2e tests/integration/500-crash.t
set -u
cd "$(dirname "$0")/.."
b=build
if [ "${1:-}" = -b ]; then b=$2; shift 2; fi
if [ "${1:-}" != --inside ]; then
	[ $# -ge 2 ] && [ "$1" -gt 0 ] 2>/dev/null || {
		echo "usage: tests/repeat.sh [-b BUILD] N TEST..." >&2; exit 64; }
	exec tests/servers/run-with.sh --pg --mariadb --os -- "$0" --inside "$b" "$@"
fi
b=$2 n=$3; shift 3
keep=$(mktemp -d /tmp/p2o-repeat.XXXXXX)
bad=0
for t in "$@"; do
	pass=0
	for i in $(seq "$n"); do
		out=$keep/$(basename "$t").$i
		if P2O_BIN=$PWD/$b/bin prove -v "$t" > "$out" 2>&1; then
			pass=$((pass + 1)); rm -f "$out"
		else
			echo "$t: run $i failed: $(grep -m1 '^not ok' "$out")"
		fi
	done
	echo "$t: $pass of $n runs passed"
	[ "$pass" -eq "$n" ] || bad=1
done
[ "$bad" -eq 0 ] && rmdir "$keep" 2>/dev/null
[ "$bad" -eq 0 ] || echo "failed runs kept in $keep"
exit $bad
