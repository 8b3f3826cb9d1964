#!/usr/bin/env bash
# The MariaDB server restarts under the supervised pipeline while a client
# writes, first with a clean stop, then with a crash (SIGKILL: recovery on
# the next start): the capture ends with exit 75, the supervisor restarts
# the pipeline until the server is back, it resumes from the checkpoint
# and catches up; the index equals the table.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
DB_DIR=${P2O_SERVERS_DIR:-}/mariadb
if [ -z "${OS_URL:-}" ] || [ ! -d "$DB_DIR" ]; then echo "1..0 # skip needs the run-with.sh MariaDB and --os"; exit 0; fi

IX=t94_t94
my_fresh_stream t94
os_drop $IX
my_sql "DROP TABLE IF EXISTS t94; CREATE TABLE t94 (id int PRIMARY KEY, v int NOT NULL, note varchar(40));
	INSERT INTO t94 SELECT seq, 1, MD5(seq) FROM seq_1_to_500"
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 my_config "$T/cfg.yaml" t94 t94
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"
sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "pipeline up"
check "the load lands" -- my_equal t94 $IX 60 "$SEL"
my_writer t94 1000
sleep 2
my_writer_stop
"$TOP/tests/servers/mariadb.sh" stop "$DB_DIR" >/dev/null 2>&1
ok $? "the server is stopped"
wait_for 30 grep -q "'capture' exited with status 75\|capture.*75" "$T/sup.log"
ok $? "the capture ends with exit 75 (temporary)"
sleep 3
kill -0 $SUP 2>/dev/null
ok $? "the supervisor waits for the server, restarting the pipeline"
"$TOP/tests/servers/mariadb.sh" start "$DB_DIR" >/dev/null 2>&1
wait_for 60 my_sql "SELECT 1"
ok $? "the server is back"
my_writer t94 1000
sleep 3
my_writer_stop
wait_for 120 healthy
ok $? "the pipeline is up again"
check "every change before, around and after the restart lands" -- my_equal t94 $IX 120 "$SEL"
# a crash while the client writes: what the server committed before it
# went down is in its binlog after recovery, and must arrive
my_writer t94 1000
sleep 2
"$TOP/tests/servers/mariadb.sh" kill "$DB_DIR" >/dev/null 2>&1
ok $? "the server is killed (SIGKILL) under a writing client"
my_writer_stop
sleep 2
kill -0 $SUP 2>/dev/null
ok $? "the supervisor waits for the crashed server"
"$TOP/tests/servers/mariadb.sh" start "$DB_DIR" >/dev/null 2>&1
wait_for 60 my_sql "SELECT 1"
ok $? "the server is back after crash recovery"
my_writer t94 1000
sleep 3
my_writer_stop
wait_for 120 healthy
check "every change committed before the crash and after it lands" -- my_equal t94 $IX 120 "$SEL"
rc=$(metric pg2osync_reconnects_total)
ok $([ "${rc%.*}" -ge 2 ] 2>/dev/null; echo $?) "it restarted ($rc restarts)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
