#!/usr/bin/env bash
# A failover of a PostgreSQL source through a failover slot (17 and
# later; the compatibility lane runs it on 17 and 18): the slot made with
# source.slot_failover, a physical standby running sync_replication_slots
# keeping a copy, the primary's synchronized_standby_slots naming the
# standby's slot; the primary killed (immediate) under a client's writes,
# the standby promoted, the pipeline and the client pointed at it. The
# promoted server kept the setting its base backup copied, which names a
# slot it lacks: validate and status say so and the capture's log says why
# nothing arrives; once the setting is reset the pipeline resumes from the
# synchronized slot with no reload, the index equal to the promoted
# server's table, and later writes followed.
# Fails when: the slot is not made with failover (no copy is synchronized;
# the promoted server has none, and the tables would be loaded again), the
# trap goes unsaid, a table is loaded again, or the index differs.
# Run under tests/servers/run-with.sh --pg=17 (or 18) --os; it kills the
# run's PostgreSQL and starts it again at its end.
. "$(dirname "$0")/../lib.sh"
if [ -z "${OS_URL:-}" ] || [ -z "${P2O_SERVERS_DIR:-}" ]; then echo "1..0 # skip needs run-with.sh --pg=17 --os"; exit 0; fi
V=$(psql_q -c "show server_version_num")
if [ "$V" -lt 170000 ]; then echo "1..0 # skip failover slots need PostgreSQL 17 (this is $V)"; exit 0; fi

SRV=$TOP/tests/servers/pg.sh
PRI=$P2O_SERVERS_DIR/pg
PPORT=$PGPORT
# superuser on a server's socket (pg.sh links it into the server's DIR)
super() { local d=$1; shift; psql -X -q -At -v ON_ERROR_STOP=1 -h "$d" -p "$(cat "$d/port")" -U postgres -d "$PGDATABASE" "$@"; }
SD=$(mktemp -d "$P2O_SERVERS_DIR/t23.XXXXXX")
chmod 755 "$SD"
SB=$SD/standby
S=p2o_t230
IX=${S}_t230
# the run's primary back as it was, the standby stopped (run-with.sh stops
# it too if this test is killed)
restore() {
	"$SRV" stop "$SB" >/dev/null 2>&1
	"$SRV" status "$PRI" || "$SRV" start "$PRI" >/dev/null 2>&1
	super "$PRI" -c "alter system reset synchronized_standby_slots" -c "select pg_reload_conf()" >/dev/null 2>&1
	super "$PRI" -c "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name in ('$S', 'p2o_sb')" >/dev/null 2>&1
	rm -rf "$SD"
}
trap 'kill_pipeline 2>/dev/null; restore; _cleanup' EXIT
diag "compat: PostgreSQL $(psql_q -c "show server_version" | cut -d' ' -f1)"

drop_slot $S
drop_loads $S t230
os_drop $IX
psql_q <<SQL
drop table if exists t230;
create table t230 (id int primary key, title text, score float8);
insert into t230 select g, 'row ' || g, g / 7.0 from generate_series(1, 2000) g;
SQL
# the primary's failover slots wait for the standby's slot, which pg.sh
# standby makes; the base backup copies the setting
super "$PRI" -c "alter system set synchronized_standby_slots = 'p2o_sb'" -c "select pg_reload_conf()" >/dev/null
"$SRV" standby "$SB" "$PRI" p2o_sb > "$T/standby.log" 2>&1
ok $? "a physical standby with sync_replication_slots, streaming from slot p2o_sb"
SPORT=$(cat "$SB/port")

METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S t230
sed -i "s/^  slot_name: $S\$/&\n  slot_failover: true/" "$T/cfg.yaml"
pg2osync validate -c "$T/cfg.yaml" > "$T/validate.out" 2>&1
ok $(grep -q "synchronized_standby_slots = 'p2o_sb'" "$T/validate.out"; echo $?) \
	"validate names the standby slot the failover slot's changes wait for"
sup_start
wait_for 60 grep -q "'loader' finished: every table is loaded" "$T/sup.log"
ok $? "the pipeline loads from the primary"
ok $(grep -q "created replication slot '$S' at .* with failover = true" "$T/sup.log"; echo $?) \
	"the capture made the slot with failover = true"
[ "$(psql_q -c "select failover from pg_replication_slots where slot_name = '$S'")" = t ]
ok $? "the primary's slot is marked failover"
pg2osync status -c "$T/cfg.yaml" > "$T/status.out" 2>&1
ok $(grep -q "failover: a standby running sync_replication_slots keeps a copy" "$T/status.out" &&
	grep -q "^standby .*synchronized_standby_slots = 'p2o_sb'" "$T/status.out"; echo $?) \
	"status shows the slot's failover flag and synchronized_standby_slots"
synced() { [ "$(super "$SB" -c "select synced and not temporary from pg_replication_slots where slot_name = '$S'")" = t ]; }
wait_for 90 synced
ok $? "the standby keeps a synchronized copy of the slot"

echo "$PPORT" > "$T/writer.port"
pg_writer t230 3000
sleep 4
n0=$(pg_writer_count)
"$SRV" kill "$PRI"
ok $? "the primary is killed (immediate) under writes ($n0 statements sent)"
"$SRV" promote "$SB"
ok $? "the standby is promoted"
echo "$SPORT" > "$T/writer.port"
# psql and the comparisons read the promoted server from here on
export PGPORT=$SPORT

# the pipeline pointed at the promoted server
kill -TERM $SUP; wait $SUP
export P2O_TEST_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$SPORT/$PGDATABASE"
pg2osync validate -c "$T/cfg.yaml" > "$T/validate2.out" 2>&1; st=$?
ok $([ $st != 0 ] && grep -q "synchronized_standby_slots names 'p2o_sb', which is no physical slot of this server" "$T/validate2.out"; echo $?) \
	"validate on the promoted server names the copied standby slot it lacks (exit $st)"
pg2osync status -c "$T/cfg.yaml" > "$T/status2.out" 2>&1; st=$?
ok $([ $st = 1 ] && grep -q "^standby .*STALLED: synchronized_standby_slots names 'p2o_sb'" "$T/status2.out"; echo $?) \
	"status says the failover slot is stalled (exit $st)"
: > "$T/sup2.log"
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup2.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "capture-pg: .*synchronized_standby_slots names 'p2o_sb'" "$T/sup2.log"
ok $? "the capture's log says why nothing arrives"
super "$SB" -c "alter system reset synchronized_standby_slots" -c "select pg_reload_conf()" >/dev/null
wait_for 120 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "the setting reset, the pipeline is up on the promoted server"
ok $(grep -q "replication slot '$S' at .*synchronized from the primary before this server was promoted" "$T/sup2.log"; echo $?) \
	"it resumes from the synchronized slot"
ok $(! grep -qE "created replication slot|needs its initial load|table 'public.t230': (about|range)" "$T/sup2.log"; echo $?) \
	"no slot is made and no table loaded again"
sleep 3
n=$(pg_writer_count)
pg_writer_stop
ok $([ "$n" -gt "$n0" ]; echo $?) "the client wrote on to the promoted server ($n statements in all)"
check "the index equals the promoted server's table" -- wait_equal t230 $IX 120
psql_q -c "update t230 set title = 'after failover' where id <= 100; delete from t230 where id between 101 and 150;
	insert into t230 values (9001, 'new on the promoted server', 1)"
check "later writes on the new primary are followed" -- wait_equal t230 $IX 60
kill -TERM $SUP; wait $SUP
ok $? "drained, exit 0"
[ $_tap_fail -gt 0 ] && for l in sup sup2; do diag "$l log:"; grep -v TOAST "$T/$l.log" | tail -n 25 | sed 's/^/#   /'; done
done_testing
