#!/usr/bin/env bash
# A target that refuses for a while, then a slow one, under a client that
# keeps writing: through tests/helper/faultproxy.py every _bulk is answered
# 429 for a stretch, then 503, then (as a node past its disk's flood-stage
# watermark does) 200 with every item refused 429 by a cluster block, then
# every request is held 1.5 s. Each stretch: the writer says the target
# is unavailable and why, counts sink errors, waits it out without a
# pipeline restart, says when the target is back; a slow target only
# slows the pipeline. At the end the index equals the table, and the
# pipeline drains with exit 0.
# Fails when: a refused request is taken as written (rows missing), a
# refusal restarts the pipeline or ends it, or no log line names it.
. "$(dirname "$0")/../lib.sh"

S=p2o_throttle
drop_slot $S; os_drop ${S}_thr
psql_q -c "drop table if exists thr; create table thr (id int primary key, v int not null, note text)"
PPORT=$(free_port)
python3 "$TOP/tests/helper/faultproxy.py" $PPORT "$OS_URL" "" 2> "$T/proxy.log" &
cleanup_add $!
wait_for 10 curl -sf "http://127.0.0.1:$PPORT/"
METRICS_PORT=$(free_port)
BATCH_SIZE=100 mkconfig "$T/cfg.yaml" $S $S thr
sed -i "s#url: $OS_URL#url: http://127.0.0.1:$PPORT#" "$T/cfg.yaml"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up through the proxy"
SEL="json_build_object('id',id,'v',v,'note',note)"

cat > "$T/load.sql" <<'SQL'
\set id random(1, 2000)
insert into thr values (:id, 1, md5(random()::text)) on conflict (id) do update set v = thr.v + 1, note = md5(random()::text);
\set d random(1, 2000)
delete from thr where id = :d and v % 4 = 0;
SQL
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -n 1)
"$PGBENCH" -n -c 1 -R 100 -T 3600 -f "$T/load.sql" > "$T/load.log" 2>&1 &
LOAD=$!; cleanup_add $LOAD
metric() { metrics_text | awk -v s="$1" '$1 == s { print $2 }'; }
mode() { curl -sf "http://127.0.0.1:$PPORT/_faultproxy?mode=$1&delay_ms=${2:-0}" >/dev/null; }
hits() { curl -sf "http://127.0.0.1:$PPORT/_faultproxy" | jq -r .hits; }
sleep 2
check "rows land before any fault" -- wait_for 30 bash -c "[ \$(curl -s -XPOST $OS_URL/${S}_thr/_refresh >/dev/null; curl -s $OS_URL/${S}_thr/_count | jq -r '.count // 0') -gt 0 ]"

for m in 429 503 disk; do
	e0=$(metric pg2osync_sink_errors_total); e0=${e0%.*}
	w0=$(grep -c 'unavailable' "$T/sup.log")
	b0=$(grep -c 'available again' "$T/sup.log")
	mode $m
	sleep 8
	h=$(hits)
	mode none
	ok $([ "${h:-0}" -ge 2 ]; echo $?) "$m: the proxy refused $h bulk requests"
	wait_for 30 bash -c "[ \$(grep -c 'available again' '$T/sup.log') -gt $b0 ]"
	ok $? "$m: the writer says the target is available again: $(grep 'available again' "$T/sup.log" | tail -n 1 | cut -c1-120)"
	ok $([ "$(grep -c 'unavailable' "$T/sup.log")" -gt "$w0" ]; echo $?) \
		"$m: a log line names the refusal: $(grep 'unavailable' "$T/sup.log" | tail -n 1 | cut -c1-160)"
	sleep 1.5	# stats reach the supervisor at most once a second
	e1=$(metric pg2osync_sink_errors_total); e1=${e1%.*}
	ok $([ "${e1:-0}" -ge $((${e0:-0} + 2)) ]; echo $?) "$m: sink errors counted (${e0:-0} -> ${e1:-0})"
done

# a slow target: every request held 1.5 s; the pipeline keeps going
c0=$(os_count ${S}_thr)
mode none 1500
sleep 8
c1=$(os_count ${S}_thr)
mode none 0
ok $([ "$c1" != "$c0" ]; echo $?) "a slow target still takes writes ($c0 -> $c1 documents)"

kill $LOAD; wait $LOAD 2>/dev/null
check "the index equals the table after the refusals and the slow stretch" -- wait_equal thr ${S}_thr 120 "$SEL"
rc=$(metric pg2osync_reconnects_total)
ok $([ "${rc%.*}" = 0 ]; echo $?) "every refusal was waited out inside the writer, no pipeline restart ($rc)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { sed 's/^/#   /' "$T/proxy.log" | tail -n 20; grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
