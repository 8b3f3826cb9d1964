#!/usr/bin/env bash
# The loader's version is the WAL position read before a range, so every
# transaction that committed below it must be in the range's copy. Two
# cases: a transaction held open across the range read (the loader waits
# for it), and one whose commit record is written but that is not visible
# yet because it waits for a synchronous standby (the copy must not miss
# it, or it would win over the streamed change with a higher version).
# Loader stand-alone, on real PostgreSQL.
. "$(dirname "$0")/../lib.sh"

S=ld_xip
SUPER=(psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d "$PGDATABASE")
reset_sync() {
	"${SUPER[@]}" -c "alter system reset synchronous_standby_names" \
		-c "select pg_reload_conf()" >/dev/null 2>&1
}
trap 'reset_sync; _cleanup' EXIT

drop_slot $S
psql_q <<'SQL'
drop table if exists ld_xip;
create table ld_xip (id int primary key, v text);
insert into ld_xip select g, 'orig' from generate_series(1, 2000) g;
SQL
mkconfig "$T/cfg.yaml" $S $S ld_xip

row_v() {	# row_v FRAMES ID -> the copy row's "v" member of column v
	sed -E 's/^[0-9]+ //' "$1" | jq -r --argjson id "$2" \
		'select(.k == "row" and .new.id == $id) | "\(.v) \(.new.v)"'
}
sql_is() { test "$(psql_q -c "$1")" = "$2"; }	# sql_is QUERY VALUE
nrows() { grep -c '"k":"row"' "$1" 2>/dev/null || true; }

# 1. a transaction open across the range read
mkfifo "$T/tx"
PGAPPNAME=ld_tx psql -X -q -At < "$T/tx" > "$T/tx.out" 2>&1 &
exec {tx}>"$T/tx"
echo "begin; update ld_xip set v = 'held' where id = 5;" >&$tx
wait_for 20 sql_is "select count(*) from pg_stat_activity where application_name = 'ld_tx' and state = 'idle in transaction'" 1
ok $? "a transaction holds an update open"

loader -c "$T/cfg.yaml" > "$T/a.frames" 2> "$T/a.err" &
lpid=$!
wait_for 30 grep -q "waits for 1 transaction" "$T/a.err"
ok $? "the loader waits for it: $(grep -m1 waits "$T/a.err")"
sleep 1
n=$(nrows "$T/a.frames")
ok $([ "${n:-0}" = 0 ]; echo $?) "and reads no row while it is open (read ${n:-0})"
echo "commit;" >&$tx
exec {tx}>&-
wait $lpid
ok $? "the loader finishes once it committed"
read -r v val < <(row_v "$T/a.frames" 5)
ok $([ "$val" = held ]; echo $?) "the copy holds the committed update (got '$val')"
n=$(nrows "$T/a.frames")
ok $([ "$n" = 2000 ]; echo $?) "every row copied once ($n)"

# 2. committed below the position, but not visible yet: a synchronous
# standby that never answers keeps the transaction in the running list
"${SUPER[@]}" -c "alter system set synchronous_standby_names = 'ld_nobody'" \
	-c "select pg_reload_conf()" >/dev/null
wait_for 10 sql_is "show synchronous_standby_names" ld_nobody
PGAPPNAME=ld_sync PGOPTIONS="-c synchronous_commit=on" psql -X -q -At \
	-c "update ld_xip set v = 'synced' where id = 7" > "$T/sync.out" 2>&1 &
spid=$!
wait_for 20 sql_is "select count(*) from pg_stat_activity where application_name = 'ld_sync' and wait_event = 'SyncRep'" 1
ok $? "an update committed locally waits for a standby"
below=$(psql_q -c "select pg_current_wal_lsn()")
seen=$(psql_q -c "select v from ld_xip where id = 7")
ok $([ "$seen" = orig ]; echo $?) "a new snapshot does not see it yet (sees '$seen'), though its commit record is below $below"

loader -c "$T/cfg.yaml" > "$T/b.frames" 2> "$T/b.err" &
lpid=$!
wait_for 30 grep -q "waits for 1 transaction" "$T/b.err"
ok $? "the loader waits for it: $(grep -m1 waits "$T/b.err")"
n=$(nrows "$T/b.frames")
ok $([ "${n:-0}" = 0 ]; echo $?) "and reads no row meanwhile (read ${n:-0})"
psql_q -c "select pg_cancel_backend(pid) from pg_stat_activity where application_name = 'ld_sync'" >/dev/null
wait $spid
reset_sync
wait $lpid
ok $? "the loader finishes once the transaction is visible"
read -r v val < <(row_v "$T/b.frames" 7)
ok $([ "$val" = synced ]; echo $?) "the copy holds the update (got '$val')"
ok $([ -n "$v" ] && [ "$v" -ge "$(lsn_num "$below")" ]; echo $?) \
	"and its version $v is above the update's commit ($(lsn_num "$below"))"

if [ $_tap_fail -gt 0 ]; then
	for f in a.err b.err tx.out sync.out; do diag "$f:"; tail -n 10 "$T/$f" | sed 's/^/#   /'; done
fi
done_testing
