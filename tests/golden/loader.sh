#!/usr/bin/env bash
# Golden tests of the loader's copy rows, printed as TAP for prove(1): each
# tests/golden/loader/X.rows (rows as the source returns them) with the
# table of X.table through copy-decode must give exactly X.out; a case
# whose X.out ends in "error N: ..." must exit N. Then the copy rows of
# rows the captures' golden cases insert must carry the same documents as
# the stream's inserts: a loaded row and a streamed row are one document.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/tests/golden/loader
decode=${P2O_BIN:-$top/build/bin}/../tests/copy-decode
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$decode" ]; then
	echo "1..0 # SKIP $decode is not built"
	exit 0
fi
n=0
fail=0
report() {	# report NAME WHY
	n=$((n + 1))
	if [ -z "$2" ]; then echo "ok $n - $1"
	else fail=$((fail + 1)); echo "not ok $n - $1: $2"; fi
}
for in in "$dir"/*.table; do
	name=$(basename "$in" .table)
	want_rc=$(sed -n 's/^error \([0-9]*\):.*/\1/p' "$dir/$name.out")
	"$decode" "$in" < "$dir/$name.rows" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	why=
	if [ "$rc" != "${want_rc:-0}" ]; then
		why="exit $rc, want ${want_rc:-0}"
	elif ! cmp -s "$tmp/out" "$dir/$name.out"; then
		why="frames differ"
	fi
	report "$name" "$why"
	if [ -n "$why" ]; then
		diff -u "$dir/$name.out" "$tmp/out" | cut -c1-300 | sed 's/^/# /'
		sed 's/^/# stderr: /' "$tmp/err"
	fi
done

# NAME.out's documents against the stream's inserts of JQ-selected rows
same_docs() {	# same_docs NAME STREAM.out JQ-FILTER
	local copy stream
	copy=$(sed -E 's/^[0-9]+ //' "$dir/$1.out" | jq -c '.new' | sort)
	stream=$(sed -E 's/^[0-9]+ //' "$2" | jq -c "select(.op == \"i\" $3) | .new" | sort)
	[ -n "$copy" ] && [ "$copy" = "$stream" ]
}
if command -v jq >/dev/null; then
	same_docs types "$top/tests/golden/capture-pg/types.out" "" &&
	    why= || why="the documents differ"
	report "PostgreSQL: the copy rows of typed are capture-pg's inserts of it" "$why"
	same_docs mysql "$top/tests/golden/capture-mysql/mariadb.out" \
	    "and (.new.id == 1 or .new.id == 2)" && why= || why="the documents differ"
	report "MariaDB: the copy rows of cz are capture-mysql's inserts of it" "$why"
fi
echo "1..$n"
[ "$fail" -eq 0 ]
