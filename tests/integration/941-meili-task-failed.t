#!/usr/bin/env bash
# Meilisearch, against a real server: a task that fails (an id the server
# refuses: invalid_document_id) halts the pipeline naming the document,
# with the task's error code and message; nothing past it is acknowledged
# or written, and the pipeline keeps running (halting is not exiting).
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meilifail
drop_slot $S
psql_q -c "drop table if exists mfail; create table mfail (id text primary key, a text)"
meili_start; ok $? "$MEILI_KIND up"
meili_drop ${S}_mfail
METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mfail
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"; ok $? "pipeline up"

psql_q -c "insert into mfail values ('good-1', 'a')"
check "an accepted row lands" -- meili_wait_equal mfail ${S}_mfail 60
# Meilisearch takes ids of a-z A-Z 0-9 - _ only: its task fails
pre=$(psql_q -c "begin; insert into mfail values ('bad id', 'b');
	select pg_current_wal_insert_lsn(); commit;")
pre=$(lsn_num "$pre")
failed_task() { [ "$(meili_tasks failed ${S}_mfail)" -ge 1 ]; }
wait_for 60 failed_task; ok $? "the server failed the task: $(meili_get "/tasks?statuses=failed&indexUids=${S}_mfail&limit=1" | jq -r '.results[0].error.code')"
logged() { grep -q "document .*bad id.* refused: invalid_document_id" "$T/sup.log"; }
wait_for 30 logged
ok $? "the halt names the document and the task's error: $(grep -m1 'refused' "$T/sup.log" | cut -c1-300)"
grep -q "halting" "$T/sup.log"; ok $? "and says it halts"
psql_q -c "insert into mfail values ('good-2', 'c')"
sleep 3
ck=$(lsn_num "$(ckpt_lsn "$T/cfg.yaml")")
ok $([ "$ck" -le "$pre" ]; echo $?) "nothing at or past the failed document is acknowledged ($ck, its commit after $pre)"
meili_get "/indexes/${S}_mfail/documents/good-2" | jq -e '.code == "document_not_found"' >/dev/null
ok $? "and the row after it is not written"
kill -0 $SUP 2>/dev/null; ok $? "the pipeline is still running, retrying"
# a drain waits for the halted write (up to the supervisor's 60 s): not
# what this test is about, so the cleanup kills the pipeline
drop_slot $S
done_testing
