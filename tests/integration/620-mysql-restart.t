#!/usr/bin/env bash
# The MariaDB server restarts under a streaming capture-mysql: the capture
# exits 75 (temporary: the supervisor restarts it), and resuming from the
# last commit text it wrote loses nothing written around the restart.
# Run under tests/servers/run-with.sh --mariadb.
. "$(dirname "$0")/../mysql-lib.sh"
DB_DIR=$P2O_SERVERS_DIR/mariadb
if [ ! -d "$DB_DIR" ]; then echo "1..0 # skip needs the run-with.sh MariaDB"; exit 0; fi

my_sql "DROP TABLE IF EXISTS t64; CREATE TABLE t64 (id int PRIMARY KEY, v varchar(10))"
my_config "$T/cfg.yaml" t64 t64
cap_start "$T/cap.log" "$T/f1" -c "$T/cfg.yaml"
ok $? "capture-mysql streams"
my_sql "INSERT INTO t64 VALUES (1, 'before')"
wait_frames 20 "$T/f1" '.k=="commit"' 1
ok $? "a row before the restart arrives"
text=$(frames "$T/f1" | jq -rs '[.[] | select(.k=="commit")] | last | .text')
token=$(frames "$T/f1" | jq -rs '[.[] | select(.k=="commit")] | last | .pos')

"$TOP/tests/servers/mariadb.sh" stop "$DB_DIR" >/dev/null 2>&1
wait_for 30 bash -c "! kill -0 $CAP"
wait $CAP; st=$?
ok $([ $st = 75 ]; echo $?) "the server's shutdown ends the capture with exit 75 (got $st)"
grep -E "dump connection lost|stopped sending" "$T/cap.log" | sed 's/^/# /'
"$TOP/tests/servers/mariadb.sh" start "$DB_DIR" >/dev/null 2>&1
wait_for 60 my_sql "SELECT 1"
ok $? "the server is back"

my_sql "INSERT INTO t64 VALUES (2, 'after')"
cap_start "$T/cap2.log" "$T/f2" -c "$T/cfg.yaml" --start-pos "$text" --start-token "$token"
ok $? "the capture resumes from $text"
wait_frames 20 "$T/f2" '.k=="row" and .new.id==2' 1
ok $? "the row written while it was down arrives"
ok $(frames "$T/f2" | jq -se '[.[] | select(.k=="row" and .new.id==1)] | length == 0' >/dev/null; echo $?) \
	"the row before the checkpoint does not"
cap_stop
ok $? "SIGTERM: exit 0"
done_testing
