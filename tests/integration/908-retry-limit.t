#!/usr/bin/env bash
# engine.retry_max on real servers: with retry_max 3 and a fault proxy in
# front of OpenSearch answering 503 to every bulk request, the writer gives
# up on the request after its third attempt (three 503s reach the proxy,
# not a fourth), exits 75 with a log line naming engine.retry_max, and
# nothing past the last batch the target accepted is acknowledged: the
# stored checkpoint and the slot's confirmed position stay before the
# first row the target never took. Once the proxy forwards again the
# restarted pipeline writes every row.
# Fails when: a fourth attempt is made, the log does not name the limit,
# the checkpoint or the slot moves past an unwritten row, or a row is lost.
. "$(dirname "$0")/../lib.sh"

S=p2o_retrylim
drop_slot $S; os_drop ${S}_rl
psql_q -c "drop table if exists rl; create table rl (id int primary key, v text)"
mkconfig "$T/cfg.yaml" $S $S rl
faultproxy_start "$T/cfg.yaml"
sed -i "s/  reconnect_max: .*/&\n  reconnect_backoff_ms: 8000/" "$T/cfg.yaml"
cat >> "$T/cfg.yaml" <<EOF
  retry_max: 3
  retry_backoff_ms: 200
EOF
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "'loader' finished" "$T/sup.log"
ok $? "the pipeline is up and the (empty) table loaded"
SEL="json_build_object('id',id,'v',v)"
psql_q -c "insert into rl select g, 'before ' || g from generate_series(1, 5) g"
check "rows before the fault are written" -- wait_equal rl ${S}_rl 30 "$SEL"
# the checkpoint catches up with the written rows
sleep 2
before=$(psql_q -c "select pg_current_wal_lsn()")

curl -sf "http://127.0.0.1:$PPORT/_faultproxy?mode=503" >/dev/null
psql_q -c "insert into rl select g, 'after ' || g from generate_series(6, 10) g"
wait_for 30 grep -q "engine.retry_max" "$T/sup.log"
ok $? "the writer gives up, naming the limit: $(grep -m1 'engine.retry_max' "$T/sup.log")"
ok $(grep -q "giving up on .* after 3 attempts (the limit engine.retry_max is 3)" "$T/sup.log"; echo $?) \
	"after 3 attempts"
wait_for 10 grep -q "writer exited with 75" "$T/sup.log"
ok $? "the writer exits 75"
# the pipeline's restart waits reconnect_backoff_ms: only the first
# writer's attempts reach the proxy meanwhile
sleep 2
hits=$(curl -s "http://127.0.0.1:$PPORT/_faultproxy" | jq .hits)
ok $([ "$hits" = 3 ]; echo $?) "three bulk requests reached the target, not a fourth ($hits)"
cp_lsn=$(ckpt_lsn "$T/cfg.yaml")
slot_lsn=$(slot_confirmed $S)
diag "before the fault: $before; checkpoint: $cp_lsn; slot confirmed: $slot_lsn"
ok $([ -n "$cp_lsn" ] && [ "$(lsn_num "$cp_lsn")" -le "$(lsn_num "$before")" ]; echo $?) \
	"the stored checkpoint is not past the rows the target refused"
ok $([ "$(lsn_num "$slot_lsn")" -le "$(lsn_num "$before")" ]; echo $?) \
	"nor is the slot's confirmed position"
ok $(grep -q "restarting the pipeline in 8.0 s" "$T/sup.log"; echo $?) \
	"the pipeline restarts after source.reconnect_backoff_ms"

curl -sf "http://127.0.0.1:$PPORT/_faultproxy?mode=none" >/dev/null
check "after the restart every row is written" -- wait_equal rl ${S}_rl 60 "$SEL"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 40
drop_slot $S
done_testing
