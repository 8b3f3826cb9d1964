#!/usr/bin/env bash
# WAL pressure: between waves the loader reads its slot's wal_status and
# pauses while it is not 'reserved' (a test server with a 32 MB
# max_wal_size and a slot nobody consumes, pushed past it with WAL
# switches), goes on once the slot is advanced, and stops (69) when the
# slot has lost WAL. Under the stand-in supervisor, so the stats show the
# pause.
. "$(dirname "$0")/../lib.sh"

S=ld_wal
SUP=(python3 "$TOP/tests/helper/loader-supervisor.py")
SUPER=(psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d "$PGDATABASE")
reset_wal() {
	"${SUPER[@]}" -c "alter system reset max_wal_size" \
		-c "alter system reset max_slot_wal_keep_size" \
		-c "select pg_reload_conf()" >/dev/null 2>&1
	psql_q -c "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name in ('ld_wal', 'ld_lost')" >/dev/null 2>&1
}
trap 'reset_wal; _cleanup' EXIT
status() { psql_q -c "select wal_status from pg_replication_slots where slot_name = '$1'"; }
is_status() { [ "$(status "$1")" = "$2" ]; }
# push the WAL position on by whole segments
switch_wal() {	# switch_wal N
	local i
	for ((i = 0; i < $1; i++)); do
		"${SUPER[@]}" -c "insert into ld_walfill values ($i)" -c "select pg_switch_wal()" >/dev/null
	done
	"${SUPER[@]}" -c "checkpoint" >/dev/null
}

reset_wal
psql_q <<'SQL'
drop table if exists ld_wal, ld_walfill;
create table ld_wal (id int primary key, v text);
insert into ld_wal select g, 'v' from generate_series(1, 9000) g;
analyze ld_wal;
create table ld_walfill (i int);
SQL
mkconfig "$T/cfg.yaml" $S $S ld_wal
"${SUPER[@]}" -c "alter system set max_wal_size = '32MB'" -c "select pg_reload_conf()" >/dev/null
psql_q -c "select pg_create_logical_replication_slot('$S', 'pgoutput')" >/dev/null
switch_wal 6
wait_for 20 is_status $S extended
ok $? "a slot held past max_wal_size: wal_status '$(status $S)'"

"${SUP[@]}" --table public.ld_wal --frames "$T/a.frames" --stats "$T/a.stats" \
	-- loader -c "$T/cfg.yaml" --range-rows 3000 2> "$T/a.err" &
sup=$!
wait_for 30 grep -q "the load pauses" "$T/a.err"
ok $? "the loader pauses: $(grep -m1 pauses "$T/a.err")"
wait_for 10 grep -q '"load_wal_paused":1' "$T/a.stats"
ok $? "its stats say so (load_wal_paused 1)"
sleep 2
n=$(grep -c '"k":"row"' "$T/a.frames")
ok $([ "$n" = 0 ]; echo $?) "and it reads nothing while paused ($n rows)"
ok $([ "$(grep -c pauses "$T/a.err")" = 1 ]; echo $?) "one log line for the pause, not one per look"

# the stream catching up: the slot moves to the present
for i in $(seq 10); do
	"${SUPER[@]}" -c "checkpoint" >/dev/null
	psql_q -c "select pg_replication_slot_advance('$S', pg_current_wal_lsn())" >/dev/null
	is_status $S reserved && break
	sleep 0.5
done
ok $(is_status $S reserved; echo $?) "the slot advanced: wal_status '$(status $S)'"
wait $sup
ok $? "the loader goes on and finishes"
grep -q "is 'reserved' again after" "$T/a.err"
ok $? "and says it: $(grep -m1 'again after' "$T/a.err")"
ok $([ "$(grep -c '"k":"row"' "$T/a.frames")" = 9000 ]; echo $?) "every row read"
ok $(tail -n 1 "$T/a.stats" | jq -e '.counters.load_wal_paused == 0' >/dev/null; echo $?) "load_wal_paused back to 0"

# a slot that has lost WAL: the stream cannot continue, nor the load
"${SUPER[@]}" -c "alter system set max_slot_wal_keep_size = '32MB'" -c "select pg_reload_conf()" >/dev/null
psql_q -c "select pg_create_logical_replication_slot('ld_lost', 'pgoutput')" >/dev/null
sed 's/slot_name: ld_wal/slot_name: ld_lost/' "$T/cfg.yaml" > "$T/lost.yaml"
for i in $(seq 5); do switch_wal 3; is_status ld_lost lost && break; done
ok $(is_status ld_lost lost; echo $?) "a slot past max_slot_wal_keep_size: wal_status '$(status ld_lost)'"
loader -c "$T/lost.yaml" > "$T/b.frames" 2> "$T/b.err"
st=$?
ok $([ $st = 69 ] && grep -q "replication slot 'ld_lost' has lost WAL it needs" "$T/b.err"; echo $?) \
	"the loader stops: exit 69 (got $st: $(tail -n 1 "$T/b.err"))"
ok $([ "$(grep -c '"k":"row"' "$T/b.frames")" = 0 ]; echo $?) "before reading a row"

[ $_tap_fail -gt 0 ] && for f in a b; do diag "$f.err:"; tail -n 8 "$T/$f.err" | sed 's/^/#   /'; done
done_testing
