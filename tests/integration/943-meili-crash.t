#!/usr/bin/env bash
# Meilisearch, against a real server: a client writes continuously while
# every process of the pipeline is killed with -9, rounds of it; the slot's
# confirmed position never passes the checkpoint in the state file, and in
# the end the server's documents equal the table by content. Tasks
# enqueued before a kill stay in the server's queue and run before those
# the restarted writer sends again.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meilicrash
ROUNDS=${P2O_CRASH_ROUNDS:-6}
drop_slot $S
psql_q -c "drop table if exists mcrash; create table mcrash (id int primary key, v int not null, note text)"
meili_start; ok $? "$MEILI_KIND up"
meili_drop ${S}_mcrash
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 mkmeili "$T/cfg.yaml" $S $S mcrash
crash_load_sql "$T/load.sql" mcrash 1000
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
diag "table has $(psql_q -c 'select count(*) from mcrash') rows, the server ran $(meili_tasks succeeded ${S}_mcrash) tasks"
check "the documents equal the table by content after the kills" -- meili_wait_equal mcrash ${S}_mcrash 120
kill_pipeline
check "slot not past the checkpoint at the end" -- slot_not_past_ckpt $S "$T/cfg.yaml" "$CREATED"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
