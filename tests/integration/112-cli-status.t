#!/usr/bin/env bash
# pg2osync status on PostgreSQL: --caught-up returns 0 after a burst of
# writes with the pipeline running and non-zero with it stopped; with the
# pipeline stopped after 50 MB of WAL, --max-retained-mb 10 exits 1 and
# --max-retained-mb 1000 exits 0; an orphan slot made by hand is listed with
# its DROP; a slot invalidated by max_slot_wal_keep_size is reported lost;
# --json says the same; status changes nothing.
# Run under tests/servers/run-with.sh --pg --os.
. "$(dirname "$0")/../lib.sh"

SLOT=t13
drop_slot $SLOT
psql_q -c "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name in ('t13_orphan') and not active" > /dev/null
psql_q -c "drop table if exists t13, t13_fill; create table t13 (id int primary key, v text);
	create table t13_fill (id int, pad text); insert into t13 select g, 'v' from generate_series(1, 100) g" || exit 1
os_drop t13_t13
mkconfig "$T/cfg.yaml" $SLOT t13 t13

sup_start() {
	pg2osync run -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
	SUP=$!
	cleanup_add $SUP
}
sup_stop() { kill -TERM "$SUP" 2>/dev/null; wait "$SUP" 2>/dev/null; }
# the server's settings are the superuser's, through the socket
as_super() { psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d postgres "$@"; }
restore() { as_super -c "alter system reset max_slot_wal_keep_size" -c "select pg_reload_conf()" > /dev/null 2>&1; }
trap 'restore; _cleanup' EXIT

sup_start
wait_equal public.t13 t13_t13 60 > /dev/null
ok $? "the pipeline loads the table"
psql_q -c "insert into t13 select g, 'burst' from generate_series(101, 5100) g;
	update t13 set v = 'again' where id <= 2000"
start=$SECONDS
pg2osync status -c "$T/cfg.yaml" --caught-up --timeout 30 > "$T/out" 2>&1
st=$?
ok $([ $st = 0 ]; echo $?) "--caught-up --timeout 30 after a burst of writes: 0 (exit $st, $((SECONDS - start)) s)"
sed 's/^/#   /' "$T/out"
wait_equal public.t13 t13_t13 30 > /dev/null
ok $? "... and the index holds the burst"

# an orphan slot, made by hand
psql_q -c "select pg_create_logical_replication_slot('t13_orphan', 'pgoutput')" > /dev/null
sup_stop
ok $(! slot_active $SLOT; echo $?) "the pipeline is stopped"
psql_q -c "insert into t13 values (9999, 'after the stop')"
pg2osync status -c "$T/cfg.yaml" --caught-up --timeout 3 > "$T/out" 2>&1
st=$?
ok $([ $st = 1 ] && grep -q '^not caught up after 3 s' "$T/out"; echo $?) "--caught-up --timeout 3 with the pipeline stopped: 1 (exit $st)"

# 50 MB of WAL while nothing reads the slot
psql_q -c "select pg_current_wal_lsn()" > "$T/lsn0"
psql_q -c "insert into t13_fill select g, repeat(md5(g::text), 30) from generate_series(1, 60000) g"
psql_q -c "select pg_wal_lsn_diff(pg_current_wal_lsn(), '$(cat "$T/lsn0")')" > "$T/wal"
diag "WAL written while stopped: $(( $(cut -d. -f1 < "$T/wal") / 1000000 )) MB"
ok $([ "$(cut -d. -f1 < "$T/wal")" -ge 50000000 ]; echo $?) "at least 50 MB of WAL written"
psql_q -c "select slot_name || ' ' || active from pg_replication_slots order by 1" > "$T/slots.before"
pg2osync status -c "$T/cfg.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 0 ]; echo $?) "status with the pipeline stopped: exit 0"
retained=$(pg2osync status -c "$T/cfg.yaml" --json | jq -r ".slots[] | select(.slot == \"$SLOT\") | .retained_bytes")
diag "status reports slot '$SLOT' retaining $retained bytes ($((retained / 1000000)) MB)"
ok $([ "$retained" -ge 50000000 ]; echo $?) "... the configured slot retains the 50 MB"
pg2osync status -c "$T/cfg.yaml" --max-retained-mb 10 > "$T/out" 2>&1
st=$?
ok $([ $st = 1 ] && grep -q "^over the limit: slot '$SLOT' retains" "$T/out"; echo $?) "--max-retained-mb 10: exit 1, naming the slot (exit $st)"
pg2osync status -c "$T/cfg.yaml" --max-retained-mb 1000 > /dev/null 2>&1
st=$?
ok $([ $st = 0 ]; echo $?) "--max-retained-mb 1000: exit 0 (exit $st)"
# a cron job that has the source's url and not the target's password
unset P2O_T13_UNSET
sed "s#^  url: $OS_URL#  url: $OS_URL\n  username: cron\n  password_env: P2O_T13_UNSET#" "$T/cfg.yaml" > "$T/nopw.yaml"
pg2osync status -c "$T/nopw.yaml" --max-retained-mb 10 > /dev/null 2> "$T/err"
st=$?
ok $([ $st = 1 ] && grep -q "P2O_T13_UNSET" "$T/err"; echo $?) "without the target's password: still exit 1 over the limit, the missing variable named (exit $st)"
grep -q "^  t13_orphan " "$T/out" && grep -q "If nothing will read it: SELECT pg_drop_replication_slot('t13_orphan');" "$T/out"
ok $? "the orphan slot is listed with its DROP"
grep -qE "^  $SLOT +\* logical +inactive" "$T/out"
ok $? "the configured slot is marked, inactive"
grep -qE '^checkpoint  0/[0-9A-F]+ \(stored .*\): [0-9.]+ MB behind' "$T/out"
ok $? "the checkpoint against the WAL position, in bytes"
pg2osync status -c "$T/cfg.yaml" --json > "$T/json"
jq -e ".slots[] | select(.slot == \"t13_orphan\") | .verdict == \"orphan\" and (.drop | test(\"pg_drop_replication_slot\"))" "$T/json" > /dev/null &&
	jq -e '.checkpoint.lag_bytes >= 50000000 and (.loads[0].state == "finished")' "$T/json" > /dev/null
ok $? "--json: the orphan with its drop, the lag, the finished load"
psql_q -c "select slot_name || ' ' || active from pg_replication_slots order by 1" > "$T/slots.after"
diff -q "$T/slots.before" "$T/slots.after" > /dev/null
ok $? "status changed no slot"

# invalidated by max_slot_wal_keep_size: lost
as_super -c "alter system set max_slot_wal_keep_size = '16MB'" -c "select pg_reload_conf()" > /dev/null
psql_q -c "insert into t13_fill select g, repeat(md5(g::text), 30) from generate_series(1, 20000) g"
for i in 1 2 3; do as_super -c "select pg_switch_wal()" -c "checkpoint" > /dev/null; done
is_lost() { [ "$(psql_q -c "select wal_status from pg_replication_slots where slot_name = '$SLOT'")" = lost ]; }
wait_for 30 is_lost
ok $? "the server invalidated slot '$SLOT' (wal_status lost)"
pg2osync status -c "$T/cfg.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 1 ]; echo $?) "status of a lost configured slot: exit 1 (exit $st)"
grep -A1 -E "^  $SLOT " "$T/out" | grep -q "lost: the server has removed WAL this slot needs (max_slot_wal_keep_size); it can never stream again"
ok $? "... called out as lost, with what it means"
pg2osync status -c "$T/cfg.yaml" --json | jq -e ".slots[] | select(.slot == \"$SLOT\") | .wal_status == \"lost\" and .verdict == \"lost\"" > /dev/null
ok $? "... and in --json"
restore

psql_q -c "select pg_drop_replication_slot('t13_orphan')" > /dev/null
drop_slot $SLOT
done_testing
