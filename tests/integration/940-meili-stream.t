#!/usr/bin/env bash
# Meilisearch, against a real server (run-with.sh --meili, or one of the
# test's own): the initial load and streaming CRUD from PostgreSQL end
# with the server's documents equal to the table; the index's primary key
# is our document id; no document task failed; the checkpoint is stored in
# the state directory; truncate clears the index (a delete-all task) and
# rows after it land. (A position held back while its task is enqueued or
# processing needs a task held on demand: 945, on the contract server.)
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meili
drop_slot $S
psql_q -c "drop table if exists mstream; create table mstream (id int primary key, a text, n int)"
# rows there before the start come through the initial load
psql_q -c "insert into mstream select g, 'loaded ' || g, g from generate_series(1001, 1020) g"
meili_start; ok $? "$MEILI_KIND up"
meili_drop ${S}_mstream
METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mstream
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"; ok $? "pipeline up"

psql_q -c "insert into mstream select g, 'row ' || g, g * 10 from generate_series(1, 50) g"
psql_q -c "update mstream set a = 'changed', n = n + 1 where id % 3 = 0"
psql_q -c "delete from mstream where id % 5 = 0"
psql_q -c "insert into mstream values (100, null, null)"
check "loaded rows, streamed inserts, updates and deletes equal the table" -- meili_wait_equal mstream ${S}_mstream 60
meili_get "/indexes/${S}_mstream" | jq -e '.primaryKey == "pg2osync_id"' >/dev/null
ok $? "the index's primary key is our document id"
# (the load's creation of the index may race the writer's first write,
# which creates it too: one of them finds it there, index_already_exists)
check "no document task failed" -- test "$(meili_get "/tasks?statuses=failed&indexUids=${S}_mstream&types=documentAdditionOrUpdate,documentDeletion&limit=1" | jq .total)" = 0
wait_for 10 test -n "$(ckpt_lsn "$T/cfg.yaml")"
ok $? "a checkpoint is stored in the state directory ($(ls "$T/state" | tr '\n' ' '))"

psql_q -c "truncate mstream"
psql_q -c "insert into mstream values (1, 'after truncate', 1)"
check "truncate clears the index (a delete-all task), and rows after it land" -- \
	meili_wait_equal mstream ${S}_mstream 60

kill -TERM $SUP; wait $SUP
ok $? "the pipeline stops cleanly"
drop_slot $S
done_testing
