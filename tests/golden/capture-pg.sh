#!/usr/bin/env bash
# Golden tests of capture-pg's decoder, printed as TAP for prove(1): each
# tests/golden/capture-pg/X.msgs (real pgoutput messages recorded by
# record.sh from X.sql) through pgo-decode must give exactly X.out; a case
# whose X.out ends in "error N: ..." must exit N.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/tests/golden/capture-pg
decode=${P2O_BIN:-$top/build/bin}/../tests/pgo-decode
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$decode" ]; then
	echo "1..0 # SKIP $decode is not built"
	exit 0
fi
n=0
fail=0
for in in "$dir"/*.msgs; do
	name=$(basename "$in" .msgs)
	n=$((n + 1))
	want_rc=$(sed -n 's/^error \([0-9]*\):.*/\1/p' "$dir/$name.out")
	"$decode" < "$in" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	why=
	if [ "$rc" != "${want_rc:-0}" ]; then
		why="exit $rc, want ${want_rc:-0}"
	elif ! cmp -s "$tmp/out" "$dir/$name.out"; then
		why="frames differ"
	fi
	if [ -z "$why" ]; then
		echo "ok $n - $name"
	else
		fail=$((fail + 1))
		echo "not ok $n - $name: $why"
		diff -u "$dir/$name.out" "$tmp/out" | cut -c1-300 | sed 's/^/# /'
		sed 's/^/# stderr: /' "$tmp/err"
	fi
done
echo "1..$n"
[ "$fail" -eq 0 ]
