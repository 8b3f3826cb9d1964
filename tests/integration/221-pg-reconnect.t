#!/usr/bin/env bash
# pg_terminate_backend on the walsender, during the initial load and then
# while a client writes: each time the capture ends with exit 75 (a lost
# connection is temporary), the log says so, the pipeline reconnects by
# itself, and nothing is lost.
. "$(dirname "$0")/../lib.sh"

S=p2o_term
drop_slot $S; drop_loads $S term; os_drop ${S}_term
psql_q -c "drop table if exists term; create table term (id int primary key, v int);
	insert into term select g, 0 from generate_series(1, 50000) g"
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 BATCH_SIZE=200 mkconfig "$T/cfg.yaml" $S $S term
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up"
term_walsender() {
	psql_q -c "select count(pg_terminate_backend(active_pid)) from pg_replication_slots where slot_name = '$S' and active_pid is not null"
}
restarts() { grep -c 'restarting the pipeline' "$T/sup.log"; }

# during the load: the copy goes on from where it was recorded
wait_for 30 slot_active $S
r0=$(restarts)
n=$(term_walsender)
ok $([ "$n" = 1 ]; echo $?) "walsender terminated during the initial load"
wait_for 30 bash -c "[ \$(grep -c 'restarting the pipeline' '$T/sup.log') -gt $r0 ]"
ok $? "the log says why it restarts: $(grep 'restarting the pipeline' "$T/sup.log" | tail -n 1 | cut -c1-160)"
wait_for 120 grep -q "finished: every table is loaded" "$T/sup.log"; ok $? "the load finishes after the reconnect"
check "loaded rows land" -- wait_equal term ${S}_term 60

cat > "$T/load.sql" <<'SQL'
\set id random(1, 60000)
insert into term values (:id, 1) on conflict (id) do update set v = term.v + 1;
\set d random(1, 60000)
delete from term where id = :d and v % 3 = 0;
SQL
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -n 1)
"$PGBENCH" -n -c 1 -R 200 -T 3600 -f "$T/load.sql" > "$T/load.log" 2>&1 &
LOAD=$!; cleanup_add $LOAD
for r in 1 2 3; do
	sleep 1.$((RANDOM % 10))
	wait_for 30 slot_active $S
	n=$(term_walsender)
	ok $([ "$n" = 1 ]; echo $?) "walsender terminated while a client writes (round $r)"
done
kill $LOAD; wait $LOAD 2>/dev/null
check "every row written around the terminations lands" -- wait_equal term ${S}_term 120
grep -q "capture-pg exited with 75" "$T/sup.log"
ok $? "the capture ended with exit 75 (temporary): $(grep -m1 'capture-pg.*walsender\|capture-pg: error' "$T/sup.log" | cut -c1-160)"
wait_for 30 slot_active $S
ok $? "slot active again"
rc=$(metrics_text | awk '/^pg2osync_reconnects_total/ {print $2}')
ok $([ "${rc%.*}" -ge 4 ] 2>/dev/null; echo $?) "reconnects counted ($rc)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
