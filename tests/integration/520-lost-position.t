#!/usr/bin/env bash
# Recovery when the position is gone (source.on_lost_position). A slot the
# server invalidated (max_slot_wal_keep_size) while the pipeline was down,
# with inserts, updates and deletes made meanwhile: on restart the
# supervisor says what was lost in one line, starts a new stream, loads
# every table again beside it and sweeps the documents of the deleted rows,
# so the index equals the table by content. The same for a slot dropped
# while down (the checkpoint is behind the new slot). With halt: exit 67.
. "$(dirname "$0")/../lib.sh"

S=p2o_lost
drop_slot $S; os_drop ${S}_lp
as_super() { psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d postgres "$@"; }
restore() { as_super -c "alter system reset max_slot_wal_keep_size" -c "select pg_reload_conf()" > /dev/null 2>&1; }
trap 'restore; _cleanup' EXIT
psql_q <<'SQL'
drop table if exists lp, lp_fill;
create table lp (id int primary key, v int not null, note text);
insert into lp select g, 0, 'n' || g from generate_series(1, 300) g;
create table lp_fill (id int, pad text);
SQL
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S lp

start_sup() {
	pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
	SUP=$!; cleanup_add $SUP
	wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
}
stop_sup() { kill -TERM "$SUP" 2>/dev/null; wait "$SUP" 2>/dev/null; }
# the walsender of a stopped capture can outlive it a moment
slot_idle() { ! slot_active $S; }
drop_our_slot() { wait_for 30 slot_idle; psql_q -c "select pg_drop_replication_slot('$S')" > /dev/null; }
metric() { metrics_text | awk -v n="$1" '$1 == n {print $2}'; }

start_sup; ok $? "pipeline up"
wait_equal lp ${S}_lp 60 > /dev/null; ok $? "loaded: the index equals the table"
psql_q -c "update lp set v = 1 where id <= 10"
wait_equal lp ${S}_lp 30 > /dev/null; ok $? "streaming"
stop_sup
ck0=$(ckpt_lsn "$T/cfg.yaml")
ok $([ -n "$ck0" ]; echo $?) "a checkpoint is stored ($ck0)"

# while down: changes, then the server drops the WAL the slot needs
psql_q <<'SQL'
insert into lp select g, 2, 'new' || g from generate_series(301, 350) g;
update lp set v = 3, note = 'upd' where id between 20 and 49;
delete from lp where id between 100 and 139;
SQL
as_super -c "alter system set max_slot_wal_keep_size = '16MB'" -c "select pg_reload_conf()" > /dev/null
psql_q -c "insert into lp_fill select g, repeat(md5(g::text), 30) from generate_series(1, 20000) g"
for i in 1 2 3; do as_super -c "select pg_switch_wal()" -c "checkpoint" > /dev/null; done
is_lost() { [ "$(psql_q -c "select wal_status from pg_replication_slots where slot_name = '$S'")" = lost ]; }
wait_for 30 is_lost
ok $? "the server invalidated slot '$S' (wal_status lost)"
restore

start_sup; ok $? "pipeline up again"
grep -q "replication slot '$S' has lost WAL it needs" "$T/sup.log" &&
	[ "$(grep -c "the stream's position is gone (capture-pg exited with 67" "$T/sup.log")" = 1 ]
ok $? "what was lost is said, and the reload in one line"
# beside the reload, the new stream carries changes
psql_q -c "delete from lp where id between 200 and 204; insert into lp values (1000, 9, 'during')"
wait_equal lp ${S}_lp 120 > /dev/null
ok $? "the index equals the table by content: the rows deleted while down are gone"
wait_for 60 grep -q "sweep: the documents of rows deleted while the position was gone are removed" "$T/sup.log"
ok $? "the sweep ran and was recorded"
pending=$(curl -sS "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fsweep" | jq -r '._source.pending')
ok $([ "$pending" = false ]; echo $?) "the marker of the sweep owed is cleared (pending: $pending)"
n=$(curl -sS "$OS_URL/${S}_lp/_search?q=id:120" | jq '.hits.total.value')
ok $([ "$n" = 0 ]; echo $?) "a row deleted while down has no document ($n)"
[ "$(metric pg2osync_full_reloads_total)" = 1 ]
ok $? "pg2osync_full_reloads_total 1 ($(metric pg2osync_full_reloads_total))"
ck1=$(ckpt_lsn "$T/cfg.yaml")
ok $([ "$(lsn_num "$ck1")" -gt "$(lsn_num "$ck0")" ]; echo $?) "the new stream's checkpoint $ck1 replaced $ck0"

# a restart now resumes: no second reload
stop_sup; start_sup; ok $? "restarted"
psql_q -c "update lp set v = 5 where id = 1"
wait_equal lp ${S}_lp 30 > /dev/null; ok $? "resumed from the new stream"
[ "$(grep -c "the stream.s position is gone (capture-pg exited with 67" "$T/sup.log")" = 1 ]
ok $? "no second reload"
stop_sup

# a slot dropped while down: the new slot is ahead of the checkpoint; and
# every process killed -9 as soon as the reload began, before its load and
# sweep could end: the restart reloads and sweeps all the same
drop_our_slot
psql_q -c "delete from lp where id between 60 and 69; update lp set v = 7 where id between 70 and 79"
reloads() { grep -c "the stream's position is gone (capture-pg exited with 67" "$T/sup.log"; }
sweeps() { grep -c "sweep: the documents of rows deleted" "$T/sup.log"; }
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
for ((i = 0; i < 300; i++)); do [ "$(reloads)" -ge 2 ] && break; sleep 0.1; done
pkill -KILL -f "$T/cfg.yaml"; wait $SUP 2>/dev/null
grep -q "checkpoint .* is behind slot '$S'" "$T/sup.log"
ok $? "the checkpoint behind the new slot is named"
psql_q -c "delete from lp where id between 80 and 84"
start_sup; ok $? "up after a kill -9 in the reload"
wait_equal lp ${S}_lp 120 > /dev/null
ok $? "reloaded: the index equals the table by content"
swept2() { [ "$(sweeps)" -ge 2 ]; }
wait_for 60 swept2
ok $? "swept again ($(sweeps) sweeps, $(reloads) reloads)"
stop_sup

# halt: stop with 67 instead
sed -i 's/^  reconnect_max:.*/&\n  on_lost_position: halt/' "$T/cfg.yaml"
drop_our_slot
timeout 60 pg2osync-supervise -c "$T/cfg.yaml" > "$T/halt.log" 2>&1
st=$?
ok $([ $st = 67 ]; echo $?) "on_lost_position: halt stops with 67 (exit $st)"
grep -q "stopping: capture-pg exited with 67" "$T/halt.log"
ok $? "... naming the capture's exit"

[ "$_tap_fail" -eq 0 ] || { diag "supervisor log:"; sed 's/^/# /' "$T/sup.log" | tail -80; }
drop_slot $S; os_drop ${S}_lp
done_testing
