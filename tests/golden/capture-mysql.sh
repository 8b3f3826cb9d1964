#!/usr/bin/env bash
# Golden tests of capture-mysql's assembler, printed as TAP for prove(1):
# each tests/golden/capture-mysql/X.tables (the catalogue, and in its
# "# binlog: FILE" line which file of tests/fixtures/mysql it reads)
# through binlog-decode must give exactly X.out; a case whose X.out ends
# in "error N: ..." must exit N.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/tests/golden/capture-mysql
fixtures=$top/tests/fixtures/mysql
decode=${P2O_BIN:-$top/build/bin}/../tests/binlog-decode
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$decode" ]; then
	echo "1..0 # SKIP $decode is not built"
	exit 0
fi
n=0
fail=0
for in in "$dir"/*.tables; do
	name=$(basename "$in" .tables)
	n=$((n + 1))
	bin=$(sed -n 's/^# binlog: //p' "$in")
	want_rc=$(sed -n 's/^error \([0-9]*\):.*/\1/p' "$dir/$name.out")
	"$decode" "$in" "$fixtures/$bin" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	why=
	if [ -z "$bin" ] || [ ! -f "$fixtures/$bin" ]; then
		why="no binlog named in $name.tables"
	elif [ "$rc" != "${want_rc:-0}" ]; then
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
