# tests/golden/golden.bash - what the golden tests of one stage's
# boundary share, printed as TAP for prove(1): sourced by capture-pg.sh,
# capture-mysql.sh and loader.sh after setting "helper" (the program under
# tests/ that turns a case's input into frames).
#
#   golden_run NAME WANT.out CMD...   CMD's stdout must be WANT.out, and
#                                     its exit the N of a last "error N:"
#                                     line in it (0 without one)
#   golden_ok NAME WHY                a check of the script's own (WHY ""
#                                     when it holds)
#   golden_done                       the plan; exit 1 on any failure
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
prog=${P2O_BIN:-$top/build/bin}/../tests/$helper
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ ! -x "$prog" ]; then
	echo "1..0 # SKIP $prog is not built"
	exit 0
fi
n=0
fail=0

golden_ok() {
	n=$((n + 1))
	if [ -z "$2" ]; then
		echo "ok $n - $1"
		return 0
	fi
	fail=$((fail + 1))
	echo "not ok $n - $1: $2"
	return 1
}

golden_run() {
	local name=$1 want=$2 want_rc rc why=
	shift 2
	want_rc=$(sed -n 's/^error \([0-9]*\):.*/\1/p' "$want")
	"$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ "$rc" != "${want_rc:-0}" ]; then
		why="exit $rc, want ${want_rc:-0}"
	elif ! cmp -s "$tmp/out" "$want"; then
		why="frames differ"
	fi
	if ! golden_ok "$name" "$why"; then
		diff -u "$want" "$tmp/out" | cut -c1-300 | sed 's/^/# /'
		sed 's/^/# stderr: /' "$tmp/err"
	fi
}

golden_done() {
	echo "1..$n"
	[ "$fail" -eq 0 ]
}
