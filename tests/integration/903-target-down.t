#!/usr/bin/env bash
# The target goes away for DOWN_S seconds (default 60) in mid-stream while
# rows keep being written: nothing is lost, memory stays flat and the
# writer idle while it is down, the writer says so in its log, and the
# pipeline resumes by itself when it returns, without a restart.
# WRITE_CONCURRENCY sets engine.write_concurrency (default 1).
. "$(dirname "$0")/../lib.sh"

C=${WRITE_CONCURRENCY:-1}
D=${DOWN_S:-60}
S=p2o_down; [ "$C" = 1 ] || S=p2o_down_c$C
drop_slot $S; os_drop ${S}_down
psql_q -c "drop table if exists down; create table down (id int primary key, v int, pad text)"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S down
sed -i "s/^engine:\$/engine:\n  write_concurrency: $C/" "$T/cfg.yaml"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up"

psql_q -c "insert into down select g, 0, repeat('x', 200) from generate_series(1, 1000) g"
check "first rows land" -- wait_equal down ${S}_down 30 "json_build_object('id',id,'v',v,'pad',pad)"

# CPU seconds the writer spent, from /proc
cpu_s() { awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat" 2>/dev/null || echo 0; }
wpid=$(pgrep -f "/writer -c $T/cfg.yaml" | head -n 1)
ok $([ -n "$wpid" ] && [ -r "/proc/$wpid/stat" ]; echo $?) "the writer's process found (${wpid:-none})"
"$TOP/tests/servers/opensearch.sh" stop "$P2O_SERVERS_DIR/os" >/dev/null
diag "target stopped"
cpu0=$(cpu_s "$wpid")
rss_total() { local s=0 p; for p in $(pgrep -f "$T/cfg.yaml"); do s=$((s + $(rss_kb $p))); done; echo $s; }
samples=()
for ((i = 0; i < D; i++)); do
	psql_q -c "insert into down select g, $i, repeat('y', 200) from generate_series(1000 + $i * 1000 + 1, 1000 + ($i + 1) * 1000) g"
	psql_q -c "update down set v = v + 1 where id % 10 = $((i % 10))"
	sleep 1
	samples+=($(rss_total))
done
cpu1=$(cpu_s "$wpid")
diag "resident kB of all stages while down: ${samples[*]}"
# retrying with backoff costs next to nothing; a loop that spins costs a core
ok $(python3 -c "import sys; sys.exit(0 if $cpu1 - $cpu0 < $D / 10 else 1)"; echo $?) \
	"the writer ($C open at once) waits, it does not spin: $(python3 -c "print(round($cpu1 - $cpu0, 2))") CPU s in $D s down"
first=${samples[5]}; last=${samples[$((D - 1))]}
ok $([ "$last" -le $((first + 8192)) ]; echo $?) "resident memory flat while the target is down ($first kB -> $last kB)"
grep -q "writer: warn: target '.*' unavailable" "$T/sup.log"
ok $? "the writer's log says the target is unavailable: $(grep -m1 'unavailable' "$T/sup.log" | cut -c1-160)"
# a node that does not come back is the machine's, not the pipeline's:
# said as such, rather than as rows that never land
check "the target is back" -- "$TOP/tests/servers/opensearch.sh" start "$P2O_SERVERS_DIR/os"
check "everything written while the target was down lands" -- \
	wait_equal down ${S}_down 180 "json_build_object('id',id,'v',v,'pad',pad)"
sleep 1.5	# stats reach the supervisor at most once a second
errs=$(metrics_text | awk '/^pg2osync_sink_errors_total/ {print $2}')
ok $([ "${errs%.*}" -ge 1 ] 2>/dev/null; echo $?) "sink errors counted while down ($errs)"
rc=$(metrics_text | awk '/^pg2osync_reconnects_total/ {print $2}')
ok $([ "${rc%.*}" = 0 ]; echo $?) "the outage was waited out, not restarted through ($rc restarts)"
grep -q 'target available again after' "$T/sup.log"
ok $? "and the log says when it was back: $(grep -m1 'available again' "$T/sup.log" | cut -c1-120)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
