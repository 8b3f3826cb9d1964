#!/usr/bin/env bash
# The cost of traces: a pipeline's streaming throughput with traces off and
# with every batch traced (traces.sample_ratio 1, spans to a real Jaeger),
# on the servers tests/servers/run-with.sh --pg --os --jaeger started:
#   tests/servers/run-with.sh --pg --os --jaeger -- tests/bench/traces.sh [ROWS] [RUNS]
# ROWS rows (default 100,000) in transactions of 100 committed back to back
# by one client, timed from the first commit until /synced says the source's
# position then is acknowledged (every row durable in the index, the
# checkpoint stored);
# RUNS runs of each (default 3), off and on alternately, each keeping its
# best (the machine is shared: a ratio of two single runs minutes apart
# carries the host's drift). Prints one line:
#   traces: 100000 rows in txns of 100: off 31250 rows/s, on 30864 rows/s (-1.2 %)
set -u
. "$(dirname "$0")/../lib.sh"
ROWS=${1:-100000}
RUNS=${2:-3}
case $ROWS$RUNS in '' | *[!0-9]*) echo "usage: $0 [ROWS] [RUNS]" >&2; exit 64 ;; esac
[ -n "${JAEGER_OTLP_URL:-}" ] || { echo "$0: no Jaeger (run-with.sh --jaeger)" >&2; exit 64; }
S=p2o_bench_traces
METRICS_PORT=$(free_port)
APORT=$(free_port)

run() {	# run off|on -> rows/s on stdout
	local mode=$1 t0 t1 n
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
	t0=$(date +%s.%N)
	psql_q -c "do \$\$ begin for i in 0..$((ROWS / 100 - 1)) loop
		insert into bt select g, 'row ' || g, g from generate_series(i * 100 + 1, i * 100 + 100) g;
		commit; end loop; end \$\$"
	# the source's position now acknowledged: every row is in the index
	curl -sf -o /dev/null --max-time 600 "http://127.0.0.1:$APORT/synced?timeout=600000" ||
		{ echo "$0: not synced" >&2; exit 1; }
	t1=$(date +%s.%N)
	curl -s -XPOST "$OS_URL/${S}_bt/_refresh" >/dev/null
	n=$(curl -s "$OS_URL/${S}_bt/_count" | jq .count)
	[ "$n" = "$((ROWS / 100 * 100))" ] || { echo "$0: $n rows indexed" >&2; exit 1; }
	kill -TERM $SUP; wait $SUP
	python3 -c "print(int($ROWS / ($t1 - $t0)))"
}

best_off=0 best_on=0
for ((r = 0; r < RUNS; r++)); do
	v=$(run off); [ "$v" -gt $best_off ] && best_off=$v
	v=$(run on); [ "$v" -gt $best_on ] && best_on=$v
	echo "# run $((r + 1)): off best $best_off, on best $best_on" >&2
done
drop_slot $S; os_drop ${S}_bt
python3 -c "print('traces: %d rows in txns of 100: off %d rows/s, on %d rows/s (%+.1f %%)' % ($ROWS, $best_off, $best_on, ($best_on - $best_off) * 100.0 / $best_off))"
