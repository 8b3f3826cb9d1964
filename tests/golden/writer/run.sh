#!/usr/bin/env bash
# Golden tests of the writer's requests, printed as TAP for prove(1):
#
#   prove tests/golden/writer/run.sh        (from the top of the tree)
#
# For each tests/golden/writer/X.in (operation frames): writer-requests -c
# config.yaml < X.in prints every request the writer would make (method,
# path, body), answered at once as a healthy node would, and what it would
# report; that must be exactly X.out, with exit 0 or the code in X.rc, and
# when X.err exists its line must appear in what was logged.
# WRITER_REQUESTS=path picks another build (e.g. build-san/tests/...).
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$top/tests/golden/writer
bin=${P2O_BIN:-$top/build/bin}
prog=${WRITER_REQUESTS:-$(dirname "$bin")/tests/writer-requests}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$prog" ]; then
	echo "1..0 # SKIP $prog is not built (make)"
	exit 0
fi

n=0
fail=0
for in in "$dir"/*.in; do
	name=$(basename "$in" .in)
	n=$((n + 1))
	want_rc=0
	[ -f "$dir/$name.rc" ] && want_rc=$(cat "$dir/$name.rc")
	"$prog" -c "$dir/config.yaml" < "$in" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	why=
	if [ "$rc" != "$want_rc" ]; then
		why="exit $rc, want $want_rc"
	elif ! cmp -s "$tmp/out" "$dir/$name.out"; then
		why="requests differ"
	elif [ -f "$dir/$name.err" ] &&
	    ! grep -qF -- "$(cat "$dir/$name.err")" "$tmp/err"; then
		why="log lacks: $(cat "$dir/$name.err")"
	fi
	if [ -z "$why" ]; then
		echo "ok $n - $name"
	else
		fail=$((fail + 1))
		echo "not ok $n - $name: $why"
		diff -u "$dir/$name.out" "$tmp/out" | sed 's/^/# /'
		sed 's/^/# stderr: /' "$tmp/err"
	fi
done
echo "1..$n"
[ "$fail" -eq 0 ]
