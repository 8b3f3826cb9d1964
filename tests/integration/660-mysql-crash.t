#!/usr/bin/env bash
# Crash safety on MariaDB: a client writes continuously while every
# process is killed with SIGKILL, then each stage alone (the capture, the
# shaper, the writer, ckpt). Afterwards the index must equal the table by
# content: nothing lost, nothing resurrected, no stale version winning.
# P2O_CRASH_ROUNDS sets the rounds of killing everything (default 8).
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

ROUNDS=${P2O_CRASH_ROUNDS:-8}
IX=t91_t91
my_fresh_stream t91
os_drop $IX
my_sql "DROP TABLE IF EXISTS t91; CREATE TABLE t91 (id int PRIMARY KEY, v int NOT NULL, note varchar(40));
	INSERT INTO t91 SELECT seq, 1, MD5(seq) FROM seq_1_to_2000"
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 my_config "$T/cfg.yaml" t91 t91
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"

start_sup() {
	sv_start "$T/sup.log"
	wait_for 60 healthy
}
start_sup
ok $? "pipeline up"
my_writer t91 3000
n0=$(my_sql "SELECT SUM(v) FROM t91"); sleep 1
ok $([ "$(my_sql "SELECT SUM(v) FROM t91")" -gt "$n0" ]; echo $?) "the client is writing"
up=0
for ((r = 1; r <= ROUNDS; r++)); do
	sleep $((RANDOM % 3 + 1)).$((RANDOM % 10))
	pkill -KILL -f -- "-c $T/cfg.yaml"
	wait $SUP 2>/dev/null
	start_sup && up=$((up + 1)) || diag "restart $r did not come up"
done
ok $([ $up = $ROUNDS ]; echo $?) "after each of $ROUNDS kill -9 of every process the pipeline comes back"

for stage in capture-mysql shaper writer ckpt; do
	for ((r = 1; r <= 2; r++)); do
		sleep 1.$((RANDOM % 10))
		pid=$(pgrep -f "/$stage -c $T/cfg.yaml" | head -n 1)
		[ -n "$pid" ] && kill -KILL "$pid"
		sleep 1.5
		wait_for 60 healthy || diag "$stage kill $r: not healthy again"
	done
done
kill -0 $SUP 2>/dev/null; ok $? "the supervisor survives stages killed one at a time"
m=$(metric pg2osync_reconnects_total)
ok $([ "${m%.*}" -ge 8 ] 2>/dev/null; echo $?) "every stage death was a pipeline restart (reconnects $m)"

my_writer_stop
diag "the table has $(my_sql "SELECT COUNT(*) FROM t91") rows, $(my_sql "SELECT SUM(v) FROM t91") writes to them"
check "the index equals the table by content after all the kills" -- my_equal t91 $IX 120 "$SEL"
kill -TERM $SUP; wait $SUP
ok $? "drained, exit 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 40 | sed 's/^/#   /'; }
done_testing
