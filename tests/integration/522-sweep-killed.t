#!/usr/bin/env bash
# A kill -9 during the sweep, on PostgreSQL. The slot dropped while the
# pipeline was down, with rows deleted and updated meanwhile: the restart
# reloads every table and then sweeps (pg2osync verify --repair). Every
# process of the pipeline - the sweep's included - is killed -9 as soon as
# the sweep starts. The marker of the sweep owed stays, so the next start,
# with nothing left to load, sweeps again; the index then equals the table
# by content and no deleted row has its document back.
. "$(dirname "$0")/../lib.sh"

S=p2o_swk
IX=${S}_lp
N=${N:-150000}
drop_slot $S; os_drop $IX
curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fsweep?refresh=true" >/dev/null 2>&1
psql_q -c "drop table if exists lp; create table lp (id int primary key, v int not null, note text);
	insert into lp select g, 0, 'n' || g from generate_series(1, $N) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S lp
stop_sup() { kill -TERM "$SUP" 2>/dev/null; wait "$SUP" 2>/dev/null; }
slot_idle() { ! slot_active $S; }
marker() { curl -sS "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fsweep" | jq -r '._source.pending'; }
STARTED="sweep: every table is loaded again"
DONE="sweep: the documents of rows deleted"

sup_start; ok $? "pipeline up"
wait_equal lp $IX 180 > /dev/null; ok $? "loaded: the index equals the table"
stop_sup

# while down: orphans spread over the whole key range, and the slot gone
psql_q -c "delete from lp where id % 50 = 0; update lp set v = 1 where id % 77 = 0"
wait_for 30 slot_idle; psql_q -c "select pg_drop_replication_slot('$S')" > /dev/null
ok $? "rows deleted and the slot dropped while down"

pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
kill_at_line "$T/sup.log" "$STARTED" 1 180; rc=$?
ok $([ $rc = 0 ] && [ "$(log_count "$T/sup.log" "$DONE")" = 0 ]; echo $?) \
	"every process killed -9 while the sweep ran (started, not done)"
m=$(marker)
ok $([ "$m" = true ]; echo $?) "the marker of the sweep owed stays (pending: $m)"
n=$(curl -sS "$OS_URL/$IX/_count?q=id:50" | jq .count)
diag "after the kill, id 50 has $n documents"

sup_start; ok $? "up again"
sweep_again 120 "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fsweep" "with nothing to load"
check "the index equals the table by content" -- wait_equal lp $IX 60
n=$(curl -sS "$OS_URL/$IX/_refresh" >/dev/null; curl -sS "$OS_URL/$IX/_count?q=id:50" | jq .count)
ok $([ "$n" = 0 ]; echo $?) "a row deleted while down has no document ($n): nothing resurrected"
stop_sup
[ "$_tap_fail" -eq 0 ] || { diag "supervisor log:"; grep -v ' info: .*resumes\| debug: ' "$T/sup.log" | tail -60 | sed 's/^/# /'; }
drop_slot $S; os_drop $IX
done_testing
