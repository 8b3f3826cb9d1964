#!/usr/bin/env bash
# KILL of the binlog dump connection on MariaDB (the server side of the
# capture's replica connection), during the initial load and while a
# client writes, and KILL of the loader's connection in mid-load: each
# time the stage ends with exit 75 (a lost connection is temporary), the
# log says so, the pipeline reconnects by itself and resumes, and the
# index equals the table.
# Fails when: a killed connection stops the pipeline for good, or a change
# written around a kill is lost.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

IX=t34_t34
my_fresh_stream t34
os_drop $IX
my_sql "DROP TABLE IF EXISTS t34; CREATE TABLE t34 (id int PRIMARY KEY, v int NOT NULL, note varchar(40));
	INSERT INTO t34 SELECT seq, 1, MD5(seq) FROM seq_1_to_20000"
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 my_config "$T/cfg.yaml" t34 t34
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"
dump_id() { my_root "SELECT id FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%' AND user = '$MYSQL_USER'" | head -n 1; }
restarts() { grep -c 'restarting the pipeline' "$T/sup.log"; }
kill_dump() {	# kill_dump WHAT: KILL the dump connection, then see it come back
	local id r0
	wait_for 60 bash -c "[ -n \"\$(mariadb --no-defaults -hlocalhost --protocol=socket -uroot --socket='$MYSQL_SOCKET' -N -B -e \"SELECT id FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%' AND user = '$MYSQL_USER'\")\" ]"
	id=$(dump_id); r0=$(restarts)
	my_root "KILL $id"
	ok $? "$1: the binlog dump connection ($id) killed"
	wait_for 30 bash -c "[ \$(grep -c 'restarting the pipeline' '$T/sup.log') -gt $r0 ]"
	ok $? "$1: the log says why it restarts: $(grep 'restarting the pipeline' "$T/sup.log" | tail -n 1 | cut -c1-150)"
}
sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "pipeline up"
kill_dump "during the load"
# the loader's connection, if the load is still reading
lid=$(my_root "SELECT id FROM information_schema.processlist WHERE user = '$MYSQL_USER' AND info LIKE 'SELECT%t34%'" | head -n 1)
if [ -n "$lid" ]; then my_root "KILL $lid"; diag "the loader's connection ($lid) killed"; fi
wait_for 180 grep -q "finished: every table is loaded" "$T/sup.log"; ok $? "the load finishes after the kills"
my_writer t34 25000
for r in 1 2; do
	sleep 1.$((RANDOM % 10))
	kill_dump "while a client writes (round $r)"
done
sleep 1
my_writer_stop
check "every change around the kills lands" -- my_equal t34 $IX 120 "$SEL"
grep -q "capture-mysql exited with 75" "$T/sup.log"
ok $? "the capture ended with exit 75 (temporary): $(grep -m1 'capture-mysql: error' "$T/sup.log" | cut -c1-150)"
rc=$(metric pg2osync_reconnects_total)
ok $([ "${rc%.*}" -ge 3 ] 2>/dev/null; echo $?) "reconnects counted ($rc)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
