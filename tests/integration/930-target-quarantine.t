#!/usr/bin/env bash
# engine.on_permanent_rejection: quarantine. A document a strict mapping
# refuses is recorded in .pg2osync_rejects and the rows after it land;
# `pg2osync rejects` lists it; `--replay` leaves it while it is still
# refused, clears one a newer version superseded, and once the mapping
# takes the field writes it and clears its record (exit 0). A kill -9 while
# the record cannot be written (the store blocked) loses no record and
# acknowledges nothing past it. With max_rejects: 2, five refused rows
# halt the pipeline naming the limit.
. "$(dirname "$0")/../lib.sh"

S=p2o_quar
STREAM=postgres:$S
drop_slot $S; os_drop ${S}_strict; os_drop ${S}_strict2
psql_q -c "drop table if exists strict, strict2;
	create table strict (id int primary key, a text, b text);
	create table strict2 (id int primary key, b text)"
for ix in ${S}_strict ${S}_strict2; do
	curl -sS -XPUT "$OS_URL/$ix" -H 'content-type: application/json' \
		-d '{"mappings":{"dynamic":"strict","properties":{"id":{"type":"integer"},"a":{"type":"keyword"},"b":{"type":"integer"}}}}' >/dev/null
done
# this stream's records only: another test's stay
records() {	# how many records of this stream
	curl -sS -XPOST "$OS_URL/.pg2osync_rejects/_refresh" >/dev/null 2>&1
	curl -sS -XPOST "$OS_URL/.pg2osync_rejects/_count" -H 'content-type: application/json' \
		-d "{\"query\":{\"term\":{\"stream\":\"$STREAM\"}}}" | jq -r '.count // 0'
}
curl -sS -XPOST "$OS_URL/.pg2osync_rejects/_delete_by_query?refresh=true" -H 'content-type: application/json' \
	-d "{\"query\":{\"term\":{\"stream\":\"$STREAM\"}}}" >/dev/null 2>&1
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S strict strict2
sed -i '/^engine:/a\  on_permanent_rejection: quarantine' "$T/cfg.yaml"
start() {
	pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
	SUP=$!; cleanup_add $SUP
	wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"
}
found() { os_get "/${S}_$1/_doc/$2" | jq -r .found; }
# for wait_for, which runs its command again each time
has_doc() { [ "$(found "$1" "$2")" = true ]; }
has_records() { [ "$(records)" = "$1" ]; }
b_is() { [ "$(os_get "/${S}_strict/_doc/$1" | jq -r ._source.b)" = "$2" ]; }
start; ok $? "pipeline up"

psql_q -c "insert into strict values (1, 'x', '7')"
check "an accepted row lands" -- wait_equal strict ${S}_strict 30
wait_for 10 test -n "$(ckpt_lsn "$T/cfg.yaml")"
ck1=$(ckpt_lsn "$T/cfg.yaml")
psql_q -c "insert into strict values (2, 'y', 'not a number')"
psql_q -c "insert into strict (id, a) values (3, 'z')"
wait_for 30 has_doc strict 3
ok $? "the row after the refused one lands"
ok $([ "$(found strict 2)" = false ]; echo $?) "the refused row is not in the index"
ok $([ "$(records)" = 1 ]; echo $?) "its record is in .pg2osync_rejects"
wait_for 10 bash -c "[ \"\$(ckpt -c $T/cfg.yaml get 2>/dev/null | jq -r .text)\" != '$ck1' ]"
ck2=$(ckpt_lsn "$T/cfg.yaml")
ok $([ "$(lsn_num "$ck2")" -gt "$(lsn_num "$ck1")" ]; echo $?) "the checkpoint moves past it ($ck1 -> $ck2)"
rec=$(curl -sS -XPOST "$OS_URL/.pg2osync_rejects/_search" -H 'content-type: application/json' \
	-d "{\"query\":{\"term\":{\"stream\":\"$STREAM\"}}}" | jq -c '.hits.hits[0]._source')
ok $(echo "$rec" | jq -e '.op == "index" and .index == "'${S}_strict'" and .id == "2" and .table == "public.strict"
	and (.position | length > 0) and (.reason | test("mapper_parsing_exception|document_parsing_exception")) and .doc.b == "not a number"' >/dev/null; echo $?) \
	"the record holds the operation, index, id, table, position, reason and document"
wait_for 10 bash -c "curl -s http://127.0.0.1:$METRICS_PORT/metrics | grep -qE '^pg2osync_rejected_total\\{(.*,)?table=\"public.strict\"(,.*)?\\} 1$'"
ok $? "pg2osync_rejected_total{table=\"public.strict\"} 1"
grep -q "document '${S}_strict/2' quarantined" "$T/sup.log"; ok $? "the quarantine is logged"

pg2osync rejects -c "$T/cfg.yaml" > "$T/list" 2>&1; rc=$?
ok $([ $rc = 0 ] && grep -q "^${S}_strict/2 at [0-9A-F]*/[0-9A-F]*: \(mapper\|document\)_parsing_exception" "$T/list" &&
	grep -q "^1 refused document in index '.pg2osync_rejects'" "$T/list"; echo $?) "rejects lists it and the total"
sed 's/^/#   /' "$T/list"

pg2osync rejects -c "$T/cfg.yaml" --replay > "$T/replay" 2>&1; rc=$?
ok $([ $rc = 1 ] && grep -q "still refused: \(mapper\|document\)_parsing_exception" "$T/replay" &&
	grep -q "^replayed 0, still refused 1" "$T/replay"; echo $?) "--replay while the mapping still refuses it: kept, exit $rc"
ok $([ "$(records)" = 1 ]; echo $?) "... and its record stays"

# a refused row that a later update fixed: the replay finds a newer version
psql_q -c "insert into strict values (4, 'v', 'bad')"
wait_for 30 has_records 2; ok $? "a second refusal is recorded"
psql_q -c "update strict set b = '9' where id = 4"
wait_for 30 b_is 4 9; ok $? "its fixed version lands"

curl -sS -XPUT "$OS_URL/${S}_strict/_mapping" -H 'content-type: application/json' \
	-d '{"properties":{"b":{"type":"integer","ignore_malformed":true}}}' >/dev/null
pg2osync rejects -c "$T/cfg.yaml" --replay > "$T/replay" 2>&1; rc=$?
sed 's/^/#   /' "$T/replay"
ok $([ $rc = 0 ] && grep -q "^replayed 2, still refused 0" "$T/replay" &&
	grep -q "^${S}_strict/4 at .*: superseded" "$T/replay"; echo $?) "after the mapping fix --replay writes it, exit $rc"
ok $([ "$(found strict 2)" = true ]; echo $?) "the refused row is in the index now"
ok $([ "$(os_get /${S}_strict/_doc/4 | jq -r ._source.b)" = 9 ]; echo $?) "the superseded record did not put back the older row"
ok $([ "$(records)" = 0 ]; echo $?) "both records are cleared"
check "the index equals the table" -- wait_equal strict ${S}_strict 30

# kill -9 between the refusal and the acknowledgement: the record cannot be
# written (the store is blocked), so nothing is acknowledged past it
curl -sS -XPUT "$OS_URL/.pg2osync_rejects/_settings" -H 'content-type: application/json' \
	-d '{"index":{"blocks":{"write":true}}}' >/dev/null
psql_q -c "insert into strict2 values (1, 'bad')"
psql_q -c "insert into strict2 values (2, '5')"
wait_for 30 grep -q "recording refused documents in index '.pg2osync_rejects' failed" "$T/sup.log"
ok $? "a store that cannot take the record holds the flush back"
ck3=$(ckpt_lsn "$T/cfg.yaml")
sleep 2
ok $([ "$(ckpt_lsn "$T/cfg.yaml")" = "$ck3" ] && [ "$(found strict2 2)" = false ]; echo $?) \
	"nothing past the unrecorded refusal is acknowledged or written"
kids=$(pgrep -P $SUP | tr '\n' ' ')
kill -9 $SUP $kids; wait $SUP 2>/dev/null
curl -sS -XPUT "$OS_URL/.pg2osync_rejects/_settings" -H 'content-type: application/json' \
	-d '{"index":{"blocks":{"write":false}}}' >/dev/null
start; ok $? "pipeline up again after kill -9"
wait_for 30 has_doc strict2 2; ok $? "the row after the refusal lands after the restart"
ok $([ "$(records)" = 1 ]; echo $?) "the refusal is recorded once: no record lost"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"

# max_rejects: 2 with five refused rows: two recorded, then it halts
sed -i '/^engine:/a\  max_rejects: 2' "$T/cfg.yaml"
start; ok $? "pipeline up with max_rejects: 2 (1 record held)"
# the writer logs the count once it has read the store, which may be
# after the pipeline reports up
wait_for 10 grep -q "1 refused document in index '.pg2osync_rejects' (engine.max_rejects 2)" "$T/sup.log"
ok $? "the start counts the records the store holds"
ck4=$(ckpt_lsn "$T/cfg.yaml")
for i in 3 4 5 6 7; do psql_q -c "insert into strict2 values ($i, 'bad $i')"; done
psql_q -c "insert into strict2 values (8, '8')"
wait_for 30 grep -q "halting: engine.max_rejects (2) reached" "$T/sup.log"
ok $? "it halts naming the limit: $(grep -m1 'max_rejects (2) reached' "$T/sup.log" | cut -c1-140)"
sleep 2
ok $([ "$(records)" = 2 ]; echo $?) "the store holds two records ($(records))"
ok $([ "$(found strict2 8)" = false ]; echo $?) "nothing past the refusal over the limit is written"
ck5=$(ckpt_lsn "$T/cfg.yaml"); sleep 2
ok $([ "$(ckpt_lsn "$T/cfg.yaml")" = "$ck5" ]; echo $?) "the checkpoint stays behind it ($ck4 -> $ck5)"
kill -0 $SUP; ok $? "the pipeline waits rather than exits"
# halted, a drain would wait for the refused document: the test is over
kids=$(pgrep -P $SUP | tr '\n' ' ')
kill -9 $SUP $kids; wait $SUP 2>/dev/null

[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 40 | sed 's/^/#   /'; }
drop_slot $S
done_testing
