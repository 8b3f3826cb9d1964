#!/usr/bin/env bash
# Meilisearch: a position is not acknowledged while the task that wrote it
# is enqueued, nor while it is processing, and is once the task succeeded.
# Against the contract server (tests/helper/meili-contract.py, written
# from Meilisearch's documentation), not a real one: a real server cannot
# hold a task enqueued or processing on demand for as long as the test
# looks, and the contract server can (POST /_contract/hold).
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meilihold
drop_slot $S
psql_q -c "drop table if exists mhold; create table mhold (id int primary key, a text, n int)"
psql_q -c "insert into mhold select g, 'loaded ' || g, g from generate_series(1, 20) g"
meili_contract_start 30; ok $? "$MEILI_KIND up: it holds a task on demand"
METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mhold
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"; ok $? "pipeline up"
check "the load lands" -- meili_wait_equal mhold ${S}_mhold 30

# A held write's position: its commit record starts after the WAL insert
# position read inside its transaction, so a checkpoint past that point
# covers it (the checkpoint may move before it, on other WAL)
# (ckpt's complaints kept, for the report of a failure)
lsn_now() { lsn_num "$(ckpt -c "$T/cfg.yaml" get 2>>"$T/ckpt.err" | jq -r '.text // empty')"; }
tasks_at_least() { [ "$(meili_tasks "$1")" -ge "$2" ]; }
ckpt_past() { [ "$(lsn_now)" -gt "$1" ]; }
for at in enqueued processing; do
	meili_post "/_contract/hold?at=$at" >/dev/null
	pre=$(psql_q -c "begin; insert into mhold values (200, '$at', 1);
		select pg_current_wal_insert_lsn(); commit;")
	pre=$(lsn_num "$pre")
	wait_for 20 tasks_at_least $at 1
	ok $? "the write's task is held $at"
	sleep 2
	ck=$(lsn_now)
	ok $([ "$ck" -le "$pre" ]; echo $?) "the position is not acknowledged while its task is $at (checkpoint $ck, the commit after $pre)"
	meili_get "/indexes/${S}_mhold/documents/200" | jq -e '.code == "document_not_found"' >/dev/null
	ok $? "and the document is not there yet"
	meili_post /_contract/release >/dev/null
	wait_for 20 ckpt_past "$pre"
	ok $? "the position is acknowledged once the task succeeded (checkpoint $(lsn_now))"
	check "the row is there" -- meili_wait_equal mhold ${S}_mhold 10
	psql_q -c "delete from mhold where id = 200"
	check "its delete too" -- meili_wait_equal mhold ${S}_mhold 10
done

kill -TERM $SUP; wait $SUP
ok $? "the pipeline stops cleanly"
[ $_tap_fail -gt 0 ] && { diag "ckpt get said:"; sed 's/^/#   /' "$T/ckpt.err" | tail -5; }
drop_slot $S
done_testing
