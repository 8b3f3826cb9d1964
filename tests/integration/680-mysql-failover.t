#!/usr/bin/env bash
# A failover of a MySQL or MariaDB source, on servers of the same kind and
# version as the run-with.sh one (lane b: MariaDB 10.11; the compatibility
# lane: MariaDB 11.8, MySQL 9.7): a primary and a GTID replica of its own
# (log_slave_updates), the primary's binlog rotated three files ahead of
# the replica's, the pipeline streaming from the primary while a client
# writes; the primary killed with -9 under those writes, the replica
# promoted, the pipeline and the client pointed at it. The capture resumes
# by GTID from the checkpoint, sees the promoted server's coordinates
# behind it and opens a new generation of versions; no table is loaded
# again; rows last written under the old primary's numbering are then
# updated and deleted, and the index equals the promoted server's table.
# Fails when: the resume is not by GTID, no new generation is opened (the
# updates after the failover would lose to the old versions), a table is
# loaded again, or the index differs from the table.
# The writing client is paused for the moment of the kill, while a second
# one holds a transaction open (never committed, so never seen): an
# asynchronous replica may lack the primary's last commits, which no
# reader of the binlog can take back (docs/mysql.md says what happens
# then); what is tested is the resume, not the replication.
# Run under tests/servers/run-with.sh --mariadb[=VERSION] (or --mysql) --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ] || [ -z "${P2O_SERVERS_DIR:-}" ]; then echo "1..0 # skip needs run-with.sh --mariadb (or --mysql) --os"; exit 0; fi

FLAVOR=${MYSQL_SERVER:-mariadb}
SRV=$TOP/tests/servers/$FLAVOR.sh
# the servers' directories where their service user reaches them (T is
# private), stopped and removed at the end (run-with.sh stops them if
# this test is killed)
SD=$(mktemp -d "$P2O_SERVERS_DIR/t68.XXXXXX")
chmod 755 "$SD"
P=$SD/primary R=$SD/replica
stop_servers() { "$SRV" stop "$P" >/dev/null 2>&1; "$SRV" stop "$R" >/dev/null 2>&1 && rm -rf "$SD"; }
trap 'kill_pipeline 2>/dev/null; stop_servers; _cleanup' EXIT
P2O_MYSQL_SERVER_ID=1 "$SRV" start "$P" > "$T/primary.log" 2>&1 &&
	P2O_MYSQL_SERVER_ID=2 "$SRV" start "$R" > "$T/replica.log" 2>&1
st=$?
ENGINE=$([ "$FLAVOR" = mysql ] && echo MySQL || echo MariaDB)
V=$([ $st = 0 ] && . "$P/env" && my_sql "SELECT VERSION()")
# the server it ran on, for the compatibility table (tests/compat/table.sh)
diag "compat: $ENGINE ${V%% *}"	# "11.8.3-MariaDB-… from Debian-log": the words after the version would name a target (table.sh)
ok $st "a primary and a replica ($ENGINE $V)"
[ $st = 0 ] || { sed 's/^/#   /' "$T/primary.log" "$T/replica.log" | tail -n 30; done_testing; exit 1; }
# use SERVER-DIR: the helpers of mysql-lib.sh talk to that server
use() {
	. "$1/env"
	export P2O_MYSQL_URL="mysql://$MYSQL_USER:$MYSQL_PWD@$MYSQL_HOST:$MYSQL_TCP_PORT/$MYSQL_DB"
}
pport=$(cat "$P/port")
# both servers were set up alike (tests/servers): the replica starts from
# the primary's GTID position, as one made from a copy of it would
ppos=$(use "$P"; my_root "SELECT @@GLOBAL.$([ "$FLAVOR" = mysql ] && echo gtid_executed || echo gtid_binlog_pos)")
use "$R"
if [ "$FLAVOR" = mysql ]; then
	my_root "RESET BINARY LOGS AND GTIDS; SET GLOBAL gtid_purged = '$ppos';
		CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = $pport,
		SOURCE_USER = '$MYSQL_USER', SOURCE_PASSWORD = '$MYSQL_PWD', SOURCE_AUTO_POSITION = 1,
		GET_SOURCE_PUBLIC_KEY = 1; START REPLICA"
else
	my_root "SET GLOBAL gtid_slave_pos = '$ppos'; CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $pport,
		MASTER_USER = '$MYSQL_USER', MASTER_PASSWORD = '$MYSQL_PWD', MASTER_USE_GTID = slave_pos;
		START SLAVE"
fi
# the replica has applied every transaction it received
applied() {
	if [ "$FLAVOR" = mysql ]; then
		[ "$(my_root "SELECT GTID_SUBSET(RECEIVED_TRANSACTION_SET, @@GLOBAL.gtid_executed)
			FROM performance_schema.replication_connection_status")" = 1 ]
	else
		# what the receiver got, as SHOW SLAVE STATUS says it (11.8 has
		# no gtid_io_pos variable)
		local io
		io=$(mariadb --no-defaults -hlocalhost --protocol=socket -uroot --socket="$MYSQL_SOCKET" \
			-e "SHOW SLAVE STATUS\G" | awk '$1 == "Gtid_IO_Pos:" { print $2 }')
		[ -n "$io" ] && [ "$io" = "$(my_root "SELECT @@GLOBAL.gtid_slave_pos")" ]
	fi
}
# ... and every one the primary of $pport committed (both up)
caught_up() {
	local want
	want=$(use "$P"; my_root "SELECT @@GLOBAL.$([ "$FLAVOR" = mysql ] && echo gtid_executed || echo gtid_binlog_pos)")
	if [ "$FLAVOR" = mysql ]; then
		[ "$(my_root "SELECT GTID_SUBSET('$want', @@GLOBAL.gtid_executed)")" = 1 ]
	else
		[ "$(my_root "SELECT MASTER_GTID_WAIT('$want', 0)")" = 0 ]
	fi
}

use "$P"
echo "$MYSQL_TCP_PORT" > "$T/writer.port"
IX=t68_t68
MY_SERVER_ID=4242424680
my_fresh_stream t68
os_drop $IX
my_sql "CREATE TABLE t68 (id int PRIMARY KEY, v int NOT NULL, note varchar(40));
	CREATE TABLE digits (d int PRIMARY KEY);
	INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
	INSERT INTO t68 SELECT a.d * 100 + b.d * 10 + c.d + 1, 1, 'loaded' FROM digits a, digits b, digits c"
# the primary's binlog is three files ahead of the replica's: its
# coordinates are higher than any the promoted replica will write
for _ in 1 2 3; do my_root "FLUSH BINARY LOGS"; done
pfile=$(my_root "SHOW BINARY LOGS" | tail -n 1 | cut -f1)
ok $([ "$pfile" = binlog.000004 ]; echo $?) "the primary writes $pfile"
(use "$R"; wait_for 60 caught_up && [ "$(my_sql "SELECT COUNT(*) FROM t68")" = 1000 ])
ok $? "the replica follows the primary by GTID: its table has the 1,000 rows"

SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 my_config "$T/cfg.yaml" t68 t68
sv_start "$T/sup.log"
wait_for 60 grep -q "'loader' finished: every table is loaded" "$T/sup.log"
ok $? "the pipeline loads from the primary"
my_writer t68 1500
ck_text() { ckpt -c "$T/cfg.yaml" get 2>/dev/null | jq -r '.text // empty'; }
ck_on_primary() { ck_text | grep -q '^binlog\.000004:[0-9]*;gtid=.'; }
sleep 3
wait_for 60 ck_on_primary
ok $? "the checkpoint is the primary's coordinate with its GTID set: $(ck_text)"

# a transaction open at the kill, never committed; the sleep that holds
# it open is ended with the test (left behind, it would hold prove's
# output open for its ten minutes)
(echo "BEGIN; INSERT INTO t68 (id, v, note) VALUES (9999, 1, 'never committed');"
	echo $BASHPID > "$T/holder.pid"; exec sleep 600 2>/dev/null) |
	mariadb --no-defaults -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" "$MYSQL_DB" > /dev/null 2>&1 &
cleanup_add $!
wait_for 10 test -s "$T/holder.pid"
cleanup_add "$(cat "$T/holder.pid")"
# the writing client paused, the replica caught up with the primary
pkill -STOP -f "bash $T/writer.sh"
use "$R"; wait_for 60 caught_up; ok $? "the replica holds every transaction the primary committed"
use "$P"
"$SRV" kill "$P"
ok $? "the primary is killed (-9) with the client's session open and a transaction in flight"

use "$R"
wait_for 60 applied
if [ "$FLAVOR" = mysql ]; then
	my_root "STOP REPLICA; RESET REPLICA ALL"
else
	my_root "STOP SLAVE; RESET SLAVE ALL"
fi
ok $? "the replica is promoted"
# the client writes on, to the promoted server
echo "$MYSQL_TCP_PORT" > "$T/writer.port"
pkill -CONT -f "bash $T/writer.sh"
rfile=$(my_root "SHOW BINARY LOGS" | tail -n 1 | cut -f1)
diag "the promoted replica writes $rfile, the primary wrote $pfile"

# the pipeline pointed at the promoted server (url_env: a restart)
kill -TERM $SUP; wait $SUP
: > "$T/sup2.log"
sv_start "$T/sup2.log"
wait_for 60 healthy
ok $? "the pipeline is up on the promoted replica"
grep -qE "binlog dump after the GTID (set|position) of binlog.000004" "$T/sup2.log"
ok $? "it resumes by GTID: $(grep -m1 -o 'resuming after [^ ]*' "$T/sup2.log" | cut -c1-120)"
wait_for 30 grep -q "versioning documents from a new generation at" "$T/sup2.log"
ok $? "a new generation of versions: $(grep -m1 -o 'versioning documents from a new generation at [^ ]*' "$T/sup2.log")"
ok $(! grep -q "needs its initial load" "$T/sup2.log"; echo $?) "no table is loaded again"
sleep 3
my_writer_stop
# rows the old primary wrote last, under its numbering, written again
my_sql "UPDATE t68 SET v = v + 1000, note = 'after failover' WHERE id <= 300;
	DELETE FROM t68 WHERE id BETWEEN 301 AND 350;
	INSERT INTO t68 (id, v, note) VALUES (5001, 1, 'new on the promoted server')"
check "the index equals the promoted server's table" -- my_equal t68 $IX 120 "$SEL"
ok $([ "$(os_get "/$IX/_doc/9999" | jq -r .found)" = false ]; echo $?) "the transaction in flight at the kill is nowhere"
ok $([ "$(os_get "/$IX/_doc/1" | jq -r ._source.note)" = "after failover" ]; echo $?) \
	"a row last written under the old numbering takes the update"
ok $([ "$(os_get "/$IX/_doc/301" | jq -r .found)" = false ]; echo $?) "... and a delete"
kill -TERM $SUP; wait $SUP
ok $? "drained, exit 0"
[ $_tap_fail -gt 0 ] && for l in sup sup2; do diag "$l log:"; grep -v TOAST "$T/$l.log" | tail -n 25 | sed 's/^/#   /'; done
done_testing
