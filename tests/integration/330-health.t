#!/usr/bin/env bash
# Health that tells the truth, on real servers. /healthz is liveness: 200
# whenever the supervisor runs, sampled every 0.2 s through everything
# below, a restart's backoff included. /ready is readiness: 200 while the
# pipeline streams and makes progress; 503 with the reason when the target
# fails every bulk request while rows keep coming (a stall: within
# ready_stall_s + 5 s), when a document the target refuses
# (index.blocks.write) holds the writer (halted), and during a restart's
# backoff (source.reconnect_backoff_ms); 200 again once the backlog is
# written; and a quiet source, with nothing waiting, stays ready past
# ready_stall_s. pg2osync_source_state carries every state, the current
# one at 1; every series carries the source label.
# Fails when: /healthz ever says 503 or does not answer, /ready says 200
# while nothing moves or 503 on a quiet source, a state is missing from
# the gauge, or a row is lost on the way.
. "$(dirname "$0")/../lib.sh"

S=p2o_health
STALL=8
drop_slot $S; os_drop ${S}_hl
psql_q -c "drop table if exists hl; create table hl (id int primary key, v text)"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S hl
faultproxy_start "$T/cfg.yaml"
cat >> "$T/cfg.yaml" <<EOF
  ready_stall_s: $STALL
EOF
sed -i "s/  reconnect_max: .*/&\n  reconnect_backoff_ms: 4000\n  name: health-test/" "$T/cfg.yaml"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
M="http://127.0.0.1:$METRICS_PORT"
code() { curl -s -o "$T/body" -w '%{http_code}' --max-time 5 "$M$1"; }
wait_for 60 curl -sf "$M/ready"
ok $? "the pipeline is up: /ready 200"
# the (empty) table's initial load is done
wait_for 60 grep -q "'loader' finished" "$T/sup.log"
ok $([ "$(code /ready)" = 200 ] && grep -q '^ready: streaming$' "$T/body"; echo $?) \
	"/ready says streaming ($(cat "$T/body"))"

# liveness sampled all along: any answer but 200 is a failure
( while :; do c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$M/healthz"); echo "$(date +%s.%N) $c"; sleep 0.2; done ) > "$T/healthz.log" 2>&1 &
cleanup_add $!

states=$(curl -s "$M/metrics" | grep -c '^pg2osync_source_state{source="health-test",state="[a-z]*"} [01]$')
ok $([ "$states" = 6 ]; echo $?) "pg2osync_source_state has all six states ($states)"
ok $(curl -s "$M/metrics" | grep -q '^pg2osync_source_state{source="health-test",state="streaming"} 1$'; echo $?) \
	"streaming is the one at 1"
unlabelled=$(curl -s "$M/metrics" | grep -v '^#' | grep -vc '{source="health-test"')
ok $([ "$unlabelled" = 0 ]; echo $?) "every series carries source=\"health-test\" ($unlabelled without)"

# rows keep coming, one every 0.2 s
( i=1000; while :; do psql_q -c "insert into hl values ($i, 'r$i')" >/dev/null 2>&1; i=$((i + 1)); sleep 0.2; done ) &
WRITER=$!; cleanup_add $WRITER
SEL="json_build_object('id',id,'v',v)"
# compared with the inserts held: a table that grows every 0.2 s while
# the index is read after it never compares equal on a loaded machine
# (the index holds the rows inserted since the table was read)
kill -STOP $WRITER
check "rows stream" -- wait_equal hl ${S}_hl 30 "$SEL"
kill -CONT $WRITER

# 1. the target fails every bulk request: no progress while rows wait
curl -sf "http://127.0.0.1:$PPORT/_faultproxy?mode=503" >/dev/null
t0=$(date +%s.%N)
wait_for $((STALL + 5)) bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $M/ready)\" = 503 ]"
ok $? "/ready turns 503 within ready_stall_s + 5 s of the target failing every bulk request"
t1=$(date +%s.%N)
code /ready >/dev/null
diag "after $(echo "$t1 - $t0" | bc) s: $(cat "$T/body")"
ok $(grep -q '^not ready: stalled: changes wait' "$T/body"; echo $?) "and says it is stalled"
ok $(echo "$t1 - $t0 >= $STALL - 1" | bc | grep -q 1; echo $?) "not before ready_stall_s ($STALL s)"
ok $(curl -s "$M/metrics" | grep -q '^pg2osync_stalled{source="health-test"} 1$'; echo $?) "pg2osync_stalled is 1"
curl -sf "http://127.0.0.1:$PPORT/_faultproxy?mode=none" >/dev/null
wait_for 60 curl -sf "$M/ready"
ok $? "200 again once the target answers and the backlog is written"

# 2. the index blocks writes: a block is lifted, not fixed by the writer,
# so it is retried (temporary, never refused) and the pipeline is stalled
curl -sf -XPUT "$OS_URL/${S}_hl/_settings" -H 'content-type: application/json' \
	-d '{"index.blocks.write": true}' >/dev/null
t0=$(date +%s.%N)
wait_for $((STALL + 5)) bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $M/ready)\" = 503 ]"
ok $? "/ready turns 503 within ready_stall_s + 5 s of index.blocks.write while rows keep coming"
code /ready >/dev/null
diag "after $(echo "$(date +%s.%N) - $t0" | bc) s: $(cat "$T/body")"
ok $(grep -q '^not ready: stalled: ' "$T/body"; echo $?) "and says it is stalled"
ok $(metrics_text | grep -q '^pg2osync_stalled 1$'; echo $?) "pg2osync_stalled is 1"
ok $(metrics_text | grep -q '^pg2osync_source_state{state="halted"} 0$'; echo $?) \
	"not halted: nothing was refused"
curl -sf -XPUT "$OS_URL/${S}_hl/_settings" -H 'content-type: application/json' \
	-d '{"index.blocks.write": null}' >/dev/null
wait_for 60 curl -sf "$M/ready"
ok $? "the block lifted: 200 again"
kill $WRITER 2>/dev/null; wait $WRITER 2>/dev/null
check "the backlog is written: the index equals the table" -- wait_equal hl ${S}_hl 60 "$SEL"

# 3. a quiet source waits for nothing: ready past ready_stall_s
sleep $((STALL + 3))
ok $([ "$(code /ready)" = 200 ]; echo $?) "quiet for $((STALL + 3)) s: still ready ($(cat "$T/body"))"

# 4. a restart's backoff: /ready 503, /healthz 200
pkill -KILL -f "writer -c $T/cfg.yaml"
wait_for 10 grep -q "restarting the pipeline in 4.0 s" "$T/sup.log"
ok $? "the writer killed: a restart after reconnect_backoff_ms (4.0 s)"
ok $([ "$(code /ready)" = 503 ] && grep -q '^not ready: backoff: ' "$T/body"; echo $?) \
	"/ready in the backoff: 503 ($(cat "$T/body"))"
ok $([ "$(code /healthz)" = 200 ] && grep -q '^alive: backoff$' "$T/body"; echo $?) \
	"/healthz in the backoff: 200 ($(cat "$T/body"))"
wait_for 60 curl -sf "$M/ready"
ok $? "up again after the backoff: 200"

bad=$(awk '$2 != 200' "$T/healthz.log" | wc -l)
ok $([ "$bad" = 0 ] && [ "$(wc -l < "$T/healthz.log")" -gt 50 ]; echo $?) \
	"/healthz answered 200 to every one of $(wc -l < "$T/healthz.log") samples ($bad not)"
psql_q -c "insert into hl values (1, 'last')"
check "a row after it all lands" -- wait_equal hl ${S}_hl 30 "$SEL"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 40
drop_slot $S
done_testing
