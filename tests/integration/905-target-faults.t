#!/usr/bin/env bash
# Faults a healthy node will not produce on demand, injected by a proxy in
# front of the real node: 429 and 503 answers, a dropped connection, one
# item refused with 429 inside a successful bulk. The writer retries each
# with backoff, counts it, and the index still equals the table.
# WRITE_CONCURRENCY sets engine.write_concurrency (default 1).
. "$(dirname "$0")/../lib.sh"

C=${WRITE_CONCURRENCY:-1}
S=p2o_faults; [ "$C" = 1 ] || S=p2o_faults_c$C
drop_slot $S; os_drop ${S}_faults
psql_q -c "drop table if exists faults; create table faults (id int primary key, v int)"
PPORT=$(free_port)
python3 "$TOP/tests/helper/faultproxy.py" $PPORT "$OS_URL" "2:429,3:429,4:503,5:reset,6:item429,8:item429" 2> "$T/proxy.log" &
cleanup_add $!
wait_for 10 curl -sf "http://127.0.0.1:$PPORT/"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S faults
sed -i "s/^engine:\$/engine:\n  write_concurrency: $C/" "$T/cfg.yaml"
sed -i "s#url: $OS_URL#url: http://127.0.0.1:$PPORT#" "$T/cfg.yaml"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up through the proxy"
# the updates never touch a transaction's first row, the one item429 hits:
# an item written again later in its own request is not resent, and then
# no failure would be counted for it
for i in 1 2 3 4 5 6; do
	psql_q -c "insert into faults select g, $i from generate_series($i * 100 - 99, $i * 100) g; update faults set v = v + 1 where id % 10 = 5"
	sleep 0.3
done
check "every change lands despite the injected faults" -- wait_equal faults ${S}_faults 90
n=$(grep -c 'faultproxy: bulk' "$T/proxy.log")
ok $([ "$n" -ge 6 ]; echo $?) "the proxy injected its faults ($n)"
sleep 1.5	# stats reach the supervisor at most once a second
errs=$(metrics_text | awk '/^pg2osync_sink_errors_total/ {print $2}')
ok $([ "${errs%.*}" -ge 5 ] 2>/dev/null; echo $?) "each failed request counted as a sink error ($errs)"
rc=$(metrics_text | awk '/^pg2osync_reconnects_total/ {print $2}')
ok $([ "${rc%.*}" = 0 ]; echo $?) "retried inside the writer, no pipeline restart ($rc)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { cat "$T/proxy.log" | sed 's/^/#   /'; grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
