#!/usr/bin/env bash
# A document the target refuses halts progress: nothing past it is
# acknowledged or checkpointed, it is retried, and once the mapping is fixed
# it goes through without a restart.
. "$(dirname "$0")/../lib.sh"

S=p2o_refused
drop_slot $S; os_drop ${S}_strict
psql_q -c "drop table if exists strict; create table strict (id int primary key, a text, b text)"
curl -sS -XPUT "$OS_URL/${S}_strict" -H 'content-type: application/json' \
	-d '{"mappings":{"dynamic":"strict","properties":{"id":{"type":"integer"},"a":{"type":"keyword"},"b":{"type":"integer"}}}}' >/dev/null
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S strict
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up"

psql_q -c "insert into strict values (1, 'x', '7')"
check "an accepted row lands" -- wait_equal strict ${S}_strict 30
wait_for 10 test -n "$(ckpt_lsn "$T/cfg.yaml")"
ck1=$(ckpt_lsn "$T/cfg.yaml")
# the WAL position inside the refused row's transaction, after its insert:
# the transaction commits past it, so a checkpoint at or below it is short
# of the refused document. (The checkpoint may still move up to it: ck1 may
# be read before the first row's position is stored, and a commit of
# autovacuum's may come between, as after a test that dropped many tables.)
in2=$(printf '%s\n' "begin;" "insert into strict values (2, 'y', 'not a number');" \
	"select pg_current_wal_insert_lsn();" "commit;" | psql_q)
psql_q -c "insert into strict (id, a) values (3, 'z')"
wait_for 30 grep -q "document .* refused" "$T/sup.log"; ok $? "the refusal is logged: $(grep -m1 "document .* refused" "$T/sup.log" | cut -c1-160)"
sleep 3
ck2=$(ckpt_lsn "$T/cfg.yaml")
ok $([ -n "$ck2" ] && [ "$(lsn_num "$ck2")" -le "$(lsn_num "$in2")" ]; echo $?) \
	"the checkpoint does not move past the refused document ($ck1 -> $ck2, the refused row's transaction past $in2)"
sl=$(slot_confirmed $S)
ok $([ "$(lsn_num "$sl")" -le "$(lsn_num "$ck2")" ]; echo $?) "nor does the slot ($sl)"
ok $([ "$(os_get /${S}_strict/_doc/3 | jq -r .found)" = false ]; echo $?) "the row after it is held back too: no partial progress past it"
kill -0 $SUP; ok $? "the pipeline waits rather than exits"

curl -sS -XPUT "$OS_URL/${S}_strict/_mapping" -H 'content-type: application/json' \
	-d '{"properties":{"b":{"type":"integer","ignore_malformed":true}}}' >/dev/null
check "after the mapping fix everything lands without a restart" -- wait_equal strict ${S}_strict 60
rc=$(metrics_text | awk '/^pg2osync_reconnects_total/ {print $2}')
ok $([ "${rc%.*}" = 0 ]; echo $?) "no restart was needed (reconnects $rc)"
wait_for 10 bash -c "[ \"\$(ckpt -c $T/cfg.yaml get 2>/dev/null | jq -r .text)\" != '$ck2' ]"
ok $? "the checkpoint moves again"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
