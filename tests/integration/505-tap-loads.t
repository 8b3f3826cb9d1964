#!/usr/bin/env bash
# --tap loads=FILE copies the initial load's rows to a file while the
# pipeline runs. When the load is done the loader ends, and with it its
# tap: that is the end of the copy, not a failure. Before the fix the
# supervisor took the tap's clean end for a stage that stopped and
# restarted the whole pipeline after every completed load.
. "$(dirname "$0")/../lib.sh"

S=p2o_taploads
drop_slot $S; drop_loads $S tapl; os_drop ${S}_tapl
psql_q -c "drop table if exists tapl; create table tapl (id int primary key, v int);
	insert into tapl select g, g from generate_series(1, 2000) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S tapl
pg2osync-supervise -c "$T/cfg.yaml" --tap loads="$T/loads.frames" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "finished: every table is loaded" "$T/sup.log"; ok $? "the load finishes"
check "the index equals the table" -- wait_equal tapl ${S}_tapl 60
psql_q -c "update tapl set v = -v where id <= 10"
check "the stream goes on after the load" -- wait_equal tapl ${S}_tapl 30
n=$(sed -E 's/^[0-9]+ //' "$T/loads.frames" | jq -c 'select(.k == "row")' | wc -l)
ok $([ "$n" -ge 2000 ]; echo $?) "the tap holds the copied rows ($n)"
ok $(grep -q "restarting the pipeline" "$T/sup.log"; [ $? = 1 ]; echo $?) \
	"the end of the load's tap does not restart the pipeline: $(grep -m1 'restarting' "$T/sup.log" | cut -c1-120)"
rc=$(metrics_text | awk '/^pg2osync_reconnects_total/ {print $2}')
ok $([ "${rc%.*}" = 0 ]; echo $?) "no restart counted ($rc)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 20 | sed 's/^/#   /'; }
drop_slot $S
done_testing
