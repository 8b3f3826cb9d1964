#!/usr/bin/env bash
# Golden tests of the shaper, printed as TAP for prove(1):
#
#   prove tests/golden/run.sh        (from the top of the tree)
#
# For each tests/golden/shaper/X.in: build/bin/shaper -c X.yaml < X.in (or
# config.yaml when there is no X.yaml) must write exactly X.out and exit 0,
# or the code in X.rc when there is one; when X.err exists, its line must
# appear in what the shaper logged.
# SHAPER=path picks another binary (e.g. build-san/bin/shaper).
# GOLDEN_DIR and GOLDEN_PROG run another set of cases the same way, with
# another program (tests/golden/writer/run.sh).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${GOLDEN_DIR:-$top/tests/golden/shaper}
shaper=${GOLDEN_PROG:-${SHAPER:-${P2O_BIN:-$top/build/bin}/shaper}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$shaper" ]; then
	echo "1..0 # SKIP $shaper is not built (make)"
	exit 0
fi

n=0
fail=0
for in in "$dir"/*.in; do
	name=$(basename "$in" .in)
	n=$((n + 1))
	want_rc=0
	[ -f "$dir/$name.rc" ] && want_rc=$(cat "$dir/$name.rc")
	cfg=$dir/config.yaml
	[ -f "$dir/$name.yaml" ] && cfg=$dir/$name.yaml
	"$shaper" -c "$cfg" < "$in" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	why=
	if [ "$rc" != "$want_rc" ]; then
		why="exit $rc, want $want_rc"
	elif ! cmp -s "$tmp/out" "$dir/$name.out"; then
		why="output differs"
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
