#!/usr/bin/env bash
# Where the pipeline spends its instructions on the bench's rows 2-4:
# callgrind on the loader (a narrow table's initial load), on the shaper
# (that load's copy rows, and a captured 1-transaction stream), on the
# writer (the load's operations into the node) and on capture-pg (the
# stream), each fed frames captured beforehand, so the profile holds one
# stage's own work. Prints each stage's instructions and its top functions
# (self cost), and keeps the callgrind files in build/bench/profile for
# callgrind_annotate or kcachegrind, with the frames each stage read and
# the configuration, so one stage can be profiled again without servers
# (the shaper: shaper -c p.yaml --load-fd 4 4< copy.frames < /dev/null).
#   tests/bench/profile.sh [ROWS [narrow|wide]]
# default 200,000 narrow rows; wide: the bench's wide rows (two text
# columns of 1-2 kB and 1-8 kB), where the stages' cost is per byte
# Starts its own servers like run.sh; needs valgrind (Debian package).
set -eu -o pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" != "--inside" ]; then
	tests/install-deps.sh
	make -s all
	command -v valgrind >/dev/null || { echo "$0: valgrind is not installed" >&2; exit 69; }
	case ${2:-narrow} in narrow|wide) ;; *) echo "usage: $0 [ROWS [narrow|wide]]" >&2; exit 64 ;; esac
	exec tests/servers/run-with.sh --pg --os -- "$0" --inside "${1:-200000}" "${2:-narrow}"
fi
N=$2 KIND=$3
. tests/lib.sh
export PGOPTIONS="-c client_min_messages=warning"
S=p2o_prof
drop_slot $S; os_drop ${S}_prof
# the bench's narrow and wide rows (bench.py NARROW_SQL, WIDE_SQL)
if [ "$KIND" = wide ]; then
	COLS="id int primary key, title text, price numeric(12,2), body1 text, body2 text"
	rows() {
		echo "select g, 'title ' || g, (g % 10000) / 100.0, substr(repeat(md5(g::text) || ' ' || md5((g + 1)::text) || ' ', 32), 1, 1000 + g % 1000), substr(repeat(md5((g * 3)::text) || ' ' || md5((g * 5)::text) || ' ', 128), 1, 1000 + g * 7 % 7000) from generate_series($1, $2) g"
	}
else
	COLS="id int primary key, name text, qty int, price numeric(12,2), flag boolean, note text"
	rows() {
		echo "select g, 'item ' || g, g % 1000, (g % 10000) / 100.0, g % 3 = 0, 'n' || (g % 7) from generate_series($1, $2) g"
	}
fi
psql_q -c "drop table if exists prof; create table prof ($COLS)"
psql_q -c "insert into prof $(rows 1 $N); analyze prof"
mkconfig "$T/p.yaml" $S $S prof
CG="valgrind --tool=callgrind --quiet"
KEEP=$TOP/build/bench/profile
mkdir -p "$KEEP"
cp "$T/p.yaml" "$KEEP/"
top() {	# top NAME OUTFILE
	cp "$2" "$KEEP/"
	echo "== $1: $(callgrind_annotate "$2" 2>/dev/null | awk '/PROGRAM TOTALS/ {print $1; exit}') instructions"
	# the annotate's third block lists functions by self cost
	callgrind_annotate --threshold=100 "$2" 2>/dev/null | awk '
		/^-+$/ { n++; next }
		n >= 3 && NF && $1 ~ /[0-9]/ && !/PROGRAM TOTALS/ && k++ < 6'

}

# the load: loader alone, then the shaper on its copy rows, then the writer
$CG --callgrind-out-file="$T/cg.loader" loader -c "$T/p.yaml" > "$T/copy.frames" 2>/dev/null
top "loader, $N $KIND rows" "$T/cg.loader"
$CG --callgrind-out-file="$T/cg.shaper-load" \
	shaper -c "$T/p.yaml" --load-fd 4 4< "$T/copy.frames" < /dev/null > "$T/ops.frames"
top "shaper, $N copy rows" "$T/cg.shaper-load"
$CG --callgrind-out-file="$T/cg.writer" writer -c "$T/p.yaml" < "$T/ops.frames" 2>/dev/null
top "writer, $N documents" "$T/cg.writer"

# the stream: one transaction of N/2 rows, through capture-pg
M=$((N / 2))
$CG --callgrind-out-file="$T/cg.capture" capture-pg -c "$T/p.yaml" > "$T/s.frames" 2>/dev/null &
CAP=$!
slot_active() {
	[ "$(psql_q -c "select count(*) from pg_replication_slots where slot_name = '$S' and active")" = 1 ]
}
wait_for 120 slot_active
psql_q -c "insert into prof $(rows $((N + 1)) $((N + M)))"
for i in $(seq 1200); do
	# the transaction's commit follows its last row
	[ "$(grep -c '"k":"row"' "$T/s.frames")" -ge $M ] &&
		grep -q '"k":"commit"' "$T/s.frames" && break
	sleep 0.5
done
kill -TERM $CAP; wait $CAP || true
top "capture-pg, $M rows in 1 transaction" "$T/cg.capture"
$CG --callgrind-out-file="$T/cg.shaper-stream" shaper -c "$T/p.yaml" < "$T/s.frames" > /dev/null
top "shaper, $M streamed rows" "$T/cg.shaper-stream"
cp "$T/copy.frames" "$T/ops.frames" "$T/s.frames" "$KEEP/"
drop_slot $S; os_drop ${S}_prof
