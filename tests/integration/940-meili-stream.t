#!/usr/bin/env bash
# Meilisearch, against the contract server (tests/helper/meili-contract.py,
# the documented API, not a real server): the initial load and streaming
# CRUD from PostgreSQL
# ends with the server's documents equal to the table; a position is not
# acknowledged while the task that wrote it is enqueued, nor while it is
# processing, and is once the task succeeded; truncate clears the index.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meili
drop_slot $S
psql_q -c "drop table if exists mstream; create table mstream (id int primary key, a text, n int)"
# rows there before the start come through the initial load
psql_q -c "insert into mstream select g, 'loaded ' || g, g from generate_series(1001, 1020) g"
meili_start 30; ok $? "contract server up"
METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mstream
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"; ok $? "pipeline up"

psql_q -c "insert into mstream select g, 'row ' || g, g * 10 from generate_series(1, 50) g"
psql_q -c "update mstream set a = 'changed', n = n + 1 where id % 3 = 0"
psql_q -c "delete from mstream where id % 5 = 0"
psql_q -c "insert into mstream values (100, null, null)"
check "loaded rows, streamed inserts, updates and deletes equal the table" -- meili_wait_equal mstream ${S}_mstream 30
meili_get "/indexes/${S}_mstream" | jq -e '.primaryKey == "pg2osync_id"' >/dev/null
ok $? "the index's primary key is our document id"
# the load's creation of the index may race the writer's first write,
# which creates it too: one of them finds it there (index_already_exists)
doc_tasks_failed() {
	meili_get "/tasks?statuses=failed" | jq -e '[.results[] | select(.type != "indexCreation")] | length == 0'
}
check "no document task failed" -- doc_tasks_failed
wait_for 10 test -n "$(ckpt_lsn "$T/cfg.yaml")"
ok $? "a checkpoint is stored in the state directory ($(ls "$T/state" | tr '\n' ' '))"

# A held write's position: its commit record starts after the WAL insert
# position read inside its transaction, so a checkpoint past that point
# covers it (the checkpoint may move before it, on other WAL)
lsn_now() { lsn_num "$(ckpt_lsn "$T/cfg.yaml")"; }
tasks_at_least() { [ "$(meili_tasks "$1")" -ge "$2" ]; }
ckpt_past() { [ "$(lsn_now)" -gt "$1" ]; }
for at in enqueued processing; do
	meili_post "/_contract/hold?at=$at" >/dev/null
	pre=$(psql_q -c "begin; insert into mstream values (200, '$at', 1);
		select pg_current_wal_insert_lsn(); commit;")
	pre=$(lsn_num "$pre")
	wait_for 20 tasks_at_least $at 1
	ok $? "the write's task is held $at"
	sleep 2
	ck=$(lsn_now)
	ok $([ "$ck" -le "$pre" ]; echo $?) "the position is not acknowledged while its task is $at (checkpoint $ck, the commit after $pre)"
	meili_get "/indexes/${S}_mstream/documents/200" | jq -e '.code == "document_not_found"' >/dev/null
	ok $? "and the document is not there yet"
	meili_post /_contract/release >/dev/null
	wait_for 20 ckpt_past "$pre"
	ok $? "the position is acknowledged once the task succeeded (checkpoint $(lsn_now))"
	check "the row is there" -- meili_wait_equal mstream ${S}_mstream 10
	psql_q -c "delete from mstream where id = 200"
	check "its delete too" -- meili_wait_equal mstream ${S}_mstream 10
done

psql_q -c "truncate mstream"
psql_q -c "insert into mstream values (1, 'after truncate', 1)"
check "truncate clears the index (a delete-all task), and rows after it land" -- \
	meili_wait_equal mstream ${S}_mstream 30

kill -TERM $SUP; wait $SUP
ok $? "the pipeline stops cleanly"
drop_slot $S
done_testing
