#!/usr/bin/env bash
# The cost of traces: a pipeline's streaming throughput with traces off and
# with every batch traced (traces.sample_ratio 1, spans to a real Jaeger),
# on the servers tests/servers/run-with.sh --pg --os --jaeger started:
#   tests/servers/run-with.sh --pg --os --jaeger -- tests/bench/traces.sh [ROWS] [RUNS]
# ROWS rows (default 100,000) in transactions of 100 committed back to back
# by one client, timed from the first commit until /synced says the source's
# position then is acknowledged (every row durable in the index, the
# checkpoint stored).
# After a warm-up run that is not counted, RUNS runs of each (default 3),
# interleaved: off on, on off, off on, ...
# (each pair in the other order, so a drift of the host's load weighs on
# both alike), and the median of each is reported. The wall clock of a
# shared machine moves by more than the cost measured, so the line also
# carries what the host cannot inflate much: the CPU (every thread's, from
# /proc/PID/task/*/schedstat) the pipeline's processes spent over the same
# interval, per 100,000 rows, median of the runs (and of it, the threads
# other than each process's main one: the trace exporters); and what
# Jaeger spent taking the spans, which a deployment pays on another
# machine.
# Per-run figures and the split by process go to stderr. Prints one line:
#   traces: 100000 rows in txns of 100, median of 3: off 6250 rows/s, on
#   6100 rows/s (-2.4 %); pipeline CPU per 100k rows off 0.300 s, on
#   0.320 s (+6.7 %, exporter threads 0.015 s); Jaeger 0.120 s; load 1.9-3.1
set -u
. "$(dirname "$0")/../lib.sh"
ROWS=${1:-100000}
RUNS=${2:-3}
case $ROWS$RUNS in '' | *[!0-9]*) echo "usage: $0 [ROWS] [RUNS]" >&2; exit 64 ;; esac
[ -n "${JAEGER_OTLP_URL:-}" ] || { echo "$0: no Jaeger (run-with.sh --jaeger)" >&2; exit 64; }
S=p2o_bench_traces
METRICS_PORT=$(free_port)
APORT=$(free_port)
JPID=$(cat "$P2O_SERVERS_DIR/jaeger/jaeger.pid" 2>/dev/null || echo)

# cpu_ns PID -> "ALL OTHERS": the CPU time in ns of the process's threads,
# and of those but its main one (the trace exporter's), from the first
# field of each one's schedstat (nanoseconds, where /proc/PID/stat counts
# ticks of 10 ms, too coarse for a stage that spends 50 ms on a run);
# "0 0" when it is gone
cpu_ns() {
	local f a t=0 o=0
	for f in /proc/$1/task/*/schedstat; do
		read -r a _ < "$f" 2>/dev/null || continue
		t=$((t + a))
		[ "$f" = "/proc/$1/task/$1/schedstat" ] || o=$((o + a))
	done
	echo "$t $o"
}
# the supervisor and its stages, by name: "name=pid ..."
procs() {
	local p
	echo "supervisor=$SUP"
	for p in $(pgrep -P "$SUP"); do
		echo "$(cat "/proc/$p/comm" 2>/dev/null | sed 's/^pg2osync-//')=$p"
	done
}
load1() { cut -d' ' -f1 /proc/loadavg; }

run() {	# run off|on -> "rows/s cpu-ns exporter-ns jaeger-ns load0 load1 name=cpu-ns..."
	local mode=$1 t0 t1 n kv a o j0 j1 l0 l1 split='' total=0 others=0
	local -A c0 o0
	drop_slot $S; os_drop ${S}_bt
	psql_q -c "drop table if exists bt; create table bt (id int primary key, a text, b int)"
	mkconfig "$T/cfg.yaml" $S $S bt
	printf 'api:\n  bind: 127.0.0.1:%s\n' "$APORT" >> "$T/cfg.yaml"
	if [ "$mode" = on ]; then
		printf 'traces:\n  endpoint: %s\n  sample_ratio: 1\n' "$JAEGER_OTLP_URL" >> "$T/cfg.yaml"
	fi
	: > "$T/sup.log"
	sup_start || { echo "$0: the pipeline did not start" >&2; tail "$T/sup.log" >&2; exit 1; }
	wait_for 60 grep -q "'loader' finished" "$T/sup.log"
	for kv in $(procs); do
		read -r a o < <(cpu_ns "${kv#*=}")
		c0[$kv]=$a o0[$kv]=$o
	done
	j0=0; [ -n "$JPID" ] && read -r j0 _ < <(cpu_ns "$JPID")
	l0=$(load1)
	t0=$(date +%s.%N)
	psql_q -c "do \$\$ begin for i in 0..$((ROWS / 100 - 1)) loop
		insert into bt select g, 'row ' || g, g from generate_series(i * 100 + 1, i * 100 + 100) g;
		commit; end loop; end \$\$"
	# the source's position now acknowledged: every row is in the index
	curl -sf -o /dev/null --max-time 600 "http://127.0.0.1:$APORT/synced?timeout=600000" ||
		{ echo "$0: not synced" >&2; exit 1; }
	t1=$(date +%s.%N)
	for kv in "${!c0[@]}"; do
		read -r a o < <(cpu_ns "${kv#*=}")
		total=$((total + a - ${c0[$kv]}))
		others=$((others + o - ${o0[$kv]}))
		split="$split ${kv%=*}=$((a - ${c0[$kv]}))"
	done
	j1=0; [ -n "$JPID" ] && read -r j1 _ < <(cpu_ns "$JPID")
	l1=$(load1)
	curl -s -XPOST "$OS_URL/${S}_bt/_refresh" >/dev/null
	n=$(curl -s "$OS_URL/${S}_bt/_count" | jq .count)
	[ "$n" = "$((ROWS / 100 * 100))" ] || { echo "$0: $n rows indexed" >&2; exit 1; }
	kill -TERM $SUP; wait $SUP
	echo "$(python3 -c "print(int($ROWS / ($t1 - $t0)))") $total $others $((j1 - j0)) $l0 $l1$split"
}

: > "$T/off" ; : > "$T/on"
# one run not counted: the first of a series ran at under half the later
# ones' rate (14,316 rows/s off, then 19,037 on, then 31,000-36,000 for
# both, on a quiet machine), the node's JIT and caches still cold
v=$(run off) || exit 1
echo "# warm-up, not counted: $v" >&2
for ((r = 0; r < RUNS; r++)); do
	if ((r % 2 == 0)); then order="off on"; else order="on off"; fi
	for m in $order; do
		v=$(run $m) || exit 1
		echo "$v" >> "$T/$m"
		echo "# run $((r + 1)) $m: $v (rows/s; CPU ns: pipeline, its exporter threads, Jaeger; load)" >&2
	done
done
drop_slot $S; os_drop ${S}_bt
python3 - "$T/off" "$T/on" "$ROWS" <<'EOF'
import statistics as st, sys
def rd(f):
    return [l.split() for l in open(f) if l.strip()]
off, on, rows = rd(sys.argv[1]), rd(sys.argv[2]), int(sys.argv[3])
per = 100000.0 / rows / 1e9          # ns -> CPU seconds per 100k rows
med = lambda runs, i: st.median(float(r[i]) for r in runs)
w0, w1 = med(off, 0), med(on, 0)
c0, c1 = med(off, 1) * per, med(on, 1) * per
x1 = med(on, 2) * per
j1 = med(on, 3) * per
loads = [float(r[i]) for r in off + on for i in (4, 5)]
for name, runs in (("off", off), ("on", on)):
    split = {}
    for r in runs:
        for kv in r[6:]:
            k, v = kv.split("=")
            split.setdefault(k, []).append(float(v) * per)
    print("# %s: CPU s per 100k rows, median: %s" % (name, ", ".join(
        "%s %.3f" % (k, st.median(v)) for k, v in sorted(split.items()))), file=sys.stderr)
print("traces: %d rows in txns of 100, median of %d: off %d rows/s, on %d rows/s (%+.1f %%); "
      "pipeline CPU per 100k rows off %.3f s, on %.3f s (%+.1f %%, exporter threads %.3f s); "
      "Jaeger %.3f s; load %.1f-%.1f"
      % (rows, len(off), w0, w1, (w1 - w0) * 100.0 / w0, c0, c1, (c1 - c0) * 100.0 / c0,
         x1, j1, min(loads), max(loads)))
EOF
