#!/usr/bin/env bash
# Qdrant, on the contract server (tests/helper/qdrant-contract.py, Qdrant's
# REST API v1.12.x; no Qdrant server can be had here): a client writes
# continuously while every process of the pipeline is killed with -9,
# rounds of it; the slot's confirmed position never passes the checkpoint
# in the pg2osync_state collection, and in the end the points equal the
# table by content. Qdrant keeps no versions: the replay after a kill
# sends again, in the stream's order, upserts of the rows' latest states
# and deletes, which leave each point as its row is.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/qdrant-lib.sh"

S=p2o_qcrash
ROUNDS=${P2O_CRASH_ROUNDS:-5}
drop_slot $S
psql_q -c "drop table if exists qcrash; create table qcrash (id int primary key, v int not null, note text);
	alter table qcrash replica identity full"
qdrant_start; ok $? "$QDRANT_KIND up"
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 mkqdrant "$T/cfg.yaml" $S $S qcrash
crash_load_sql "$T/load.sql" qcrash 1000
sup_start; ok $? "pipeline up"
wait_for 30 slot_active $S
CREATED=$(slot_confirmed $S)
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -n 1)
"$PGBENCH" -n -c 2 -R 200 -T 3600 -f "$T/load.sql" > "$T/load.log" 2>&1 &
LOAD=$!; cleanup_add $LOAD
viol=0
for ((r = 1; r <= ROUNDS; r++)); do
	sleep $((RANDOM % 3 + 1)).$((RANDOM % 10))
	kill_pipeline
	slot_not_past_ckpt $S "$T/cfg.yaml" "$CREATED" || viol=$((viol + 1))
	sup_start || diag "restart $r did not come up"
done
ok $viol "after $ROUNDS kill -9 of every process the slot never passed the checkpoint"
kill $LOAD; wait $LOAD 2>/dev/null
diag "table has $(psql_q -c 'select count(*) from qcrash') rows; the server took $(qdrant_stat writes) write requests"
check "the points equal the table by content after the kills" -- qdrant_wait_equal qcrash ${S}_qcrash 120
kill_pipeline
check "slot not past the checkpoint at the end" -- slot_not_past_ckpt $S "$T/cfg.yaml" "$CREATED"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
