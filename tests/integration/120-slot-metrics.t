#!/usr/bin/env bash
# Slot safety while the pipeline runs: /metrics carries, for every logical
# slot on the server, pg2osync_slot_retained_bytes, _slot_safe_wal_size_bytes,
# _slot_wal_status{slot,status} and _slot_active, refreshed every few
# seconds; a dropped slot's series go; at its start the capture warns about
# an idle slot, naming what it already retains.
# Run under tests/servers/run-with.sh --pg --os.
. "$(dirname "$0")/../lib.sh"

SLOT=t16
drop_slot $SLOT
psql_q -c "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = 't16_idle' and not active" > /dev/null
psql_q -c "drop table if exists t16, t16_fill; create table t16 (id int primary key, v text);
	create table t16_fill (id int, pad text); insert into t16 values (1, 'a')" || exit 1
os_drop t16_t16
drop_loads $SLOT t16
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $SLOT t16 t16
as_super() { psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d postgres "$@"; }
restore() { as_super -c "alter system reset max_slot_wal_keep_size" -c "select pg_reload_conf()" > /dev/null 2>&1; }
trap 'restore; _cleanup' EXIT
# a bound on what a slot may keep, so that safe_wal_size has a value
as_super -c "alter system set max_slot_wal_keep_size = '1GB'" -c "select pg_reload_conf()" > /dev/null

# an idle slot that already holds about 20 MB when the pipeline starts
psql_q -c "select pg_create_logical_replication_slot('t16_idle', 'pgoutput')" > /dev/null
psql_q -c "insert into t16_fill select g, repeat(md5(g::text), 30) from generate_series(1, 20000) g"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!
cleanup_add $SUP
healthy() { curl -sf "http://127.0.0.1:$METRICS_PORT/healthz" > /dev/null; }
wait_for 60 healthy
ok $? "the pipeline is up"
series() { metrics_text | awk -v s="$1" '$1 == s { print $2 }'; }
listed() { [ -n "$(series "pg2osync_slot_retained_bytes{slot=\"t16_idle\"}")" ]; }
wait_for 20 listed
ok $? "pg2osync_slot_retained_bytes has the idle slot"
idle=$(series "pg2osync_slot_retained_bytes{slot=\"t16_idle\"}")
diag "idle slot retains $idle bytes"
ok $([ "${idle:-0}" -ge 15000000 ]; echo $?) "... about the 20 MB written before the start ($idle)"
grep -E "capture-pg: warn: slot 't16_idle' is not active and already retains [0-9.]+ MB of WAL" "$T/sup.log" > "$T/warn"
ok $? "the capture warned at its start, naming what the idle slot retains"
sed 's/^/#   /' "$T/warn"
ok $(! grep -q "slot '$SLOT' is not active" "$T/sup.log"; echo $?) "... and not about its own slot"
ok $([ "$(series "pg2osync_slot_active{slot=\"$SLOT\"}")" = 1 ] && [ "$(series "pg2osync_slot_active{slot=\"t16_idle\"}")" = 0 ]; echo $?) "pg2osync_slot_active: 1 for ours, 0 for the idle one"
ok $([ "$(series "pg2osync_slot_wal_status{slot=\"t16_idle\",status=\"reserved\"}")" = 1 ] &&
	[ "$(series "pg2osync_slot_wal_status{slot=\"t16_idle\",status=\"lost\"}")" = 0 ]; echo $?) "pg2osync_slot_wal_status: every status, 1 for the slot's own"
safe=$(series "pg2osync_slot_safe_wal_size_bytes{slot=\"t16_idle\"}")
ok $([ -n "$safe" ] && [ "$safe" -gt 0 ] && [ "$safe" -le 1100000000 ]; echo $?) "pg2osync_slot_safe_wal_size_bytes under max_slot_wal_keep_size ($safe)"

# refreshed: the idle slot's number grows while the pipeline runs
psql_q -c "insert into t16_fill select g, repeat(md5(g::text), 30) from generate_series(1, 20000) g"
grown() { [ "$(series "pg2osync_slot_retained_bytes{slot=\"t16_idle\"}")" -ge $((idle + 15000000)) ]; }
start=$SECONDS
wait_for 20 grown
ok $? "the slot metrics are refreshed within seconds ($((SECONDS - start)) s)"

# a dropped slot disappears
psql_q -c "select pg_drop_replication_slot('t16_idle')" > /dev/null
gone() { ! curl -s "http://127.0.0.1:$METRICS_PORT/metrics" | grep -q 'slot="t16_idle"'; }
wait_for 20 gone
ok $? "a dropped slot's series are gone"
kill -TERM $SUP; wait $SUP
ok $? "the pipeline drains and exits 0"
restore
drop_slot $SLOT
done_testing
