#!/usr/bin/env bash
# Crash safety: a client writes continuously while we kill -9 the supervisor
# and every stage, then each stage alone. Afterwards the index must equal the
# table by content, and the slot's confirmed position must never have passed
# the persisted checkpoint.
. "$(dirname "$0")/../lib.sh"

S=p2o_crash
ROUNDS=${P2O_CRASH_ROUNDS:-10}
drop_slot $S; os_drop ${S}_crash
psql_q <<'SQL'
drop table if exists crash;
create table crash (id int primary key, v int not null, note text);
SQL
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 mkconfig "$T/cfg.yaml" $S $S crash

crash_load_sql "$T/load.sql" crash 3000

sup_start; ok $? "pipeline up under load"
wait_for 30 slot_active $S
CREATED=$(slot_confirmed $S)
# no initial load yet: the client starts once the slot exists
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -n 1)
"$PGBENCH" -n -c 2 -R 400 -T 3600 -f "$T/load.sql" > "$T/load.log" 2>&1 &
LOAD=$!; cleanup_add $LOAD
n0=$(psql_q -c "select count(*) from crash"); sleep 1
ok $([ "$(psql_q -c "select count(*) from crash")" -gt "$n0" ]; echo $?) "the client is writing"
viol=0
for ((r = 1; r <= ROUNDS; r++)); do
	sleep $((RANDOM % 3 + 1)).$((RANDOM % 10))
	pkill -KILL -f "$T/cfg.yaml"
	wait $SUP 2>/dev/null
	slot_not_past_ckpt $S "$T/cfg.yaml" "$CREATED" || viol=$((viol + 1))
	sup_start || { diag "restart $r did not come up"; }
done
ok $viol "after $ROUNDS kill -9 of every process the slot never passed the checkpoint"

before=$(grep -c 'restarting' "$T/sup.log")
for stage in capture-pg shaper writer ckpt; do
	for ((r = 1; r <= 2; r++)); do
		sleep 1.$((RANDOM % 10))
		pid=$(pgrep -f "/$stage -c $T/cfg.yaml" | head -n 1)
		[ -n "$pid" ] && kill -KILL "$pid"
		wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
		sleep 1.5
		wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready" || diag "$stage kill $r: not healthy again"
	done
done
kill -0 $SUP 2>/dev/null; ok $? "supervisor survives stages killed one at a time"
m=$(metrics_text | awk '/^pg2osync_reconnects_total/ {print $2}')
ok $([ "${m%.*}" -ge 8 ] 2>/dev/null; echo $?) "every stage death was a pipeline restart (reconnects $m)"

kill $LOAD; wait $LOAD 2>/dev/null
n=$(psql_q -c "select count(*) from crash")
diag "table has $n rows after the load"
check "index equals the table by content after all the kills" -- \
	wait_equal crash ${S}_crash 120 "json_build_object('id',id,'v',v,'note',note)"

pkill -KILL -f "$T/cfg.yaml"; wait $SUP 2>/dev/null
check "slot not past the checkpoint at the end" -- slot_not_past_ckpt $S "$T/cfg.yaml" "$CREATED"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 40 | sed 's/^/#   /'; }
drop_slot $S
done_testing
