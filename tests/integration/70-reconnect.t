#!/usr/bin/env bash
# pg_terminate_backend on the walsender: the pipeline reconnects by itself
# and nothing is lost.
. "$(dirname "$0")/../lib.sh"

S=p2o_term
drop_slot $S; os_drop ${S}_term
psql_q -c "drop table if exists term; create table term (id int primary key, v int)"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S term
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"; ok $? "pipeline up"
psql_q -c "insert into term select g, 1 from generate_series(1, 100) g"
check "rows land" -- wait_equal term ${S}_term 30

for r in 1 2 3; do
	n=$(psql_q -c "select count(pg_terminate_backend(active_pid)) from pg_replication_slots where slot_name = '$S' and active_pid is not null")
	ok $([ "$n" = 1 ]; echo $?) "walsender terminated (round $r)"
	psql_q -c "insert into term select g, $r from generate_series($r * 100 + 1, $r * 100 + 100) g; update term set v = v + 10 where id <= 50"
	check "rows written after the termination land (round $r)" -- wait_equal term ${S}_term 60
done
wait_for 30 slot_active $S
ok $? "slot active again"
rc=$(curl -s "http://127.0.0.1:$METRICS_PORT/metrics" | awk '/^pg2osync_reconnects_total/ {print $2}')
ok $([ "${rc%.*}" -ge 3 ] 2>/dev/null; echo $?) "reconnects counted ($rc)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
