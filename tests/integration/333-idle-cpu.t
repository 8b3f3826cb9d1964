#!/usr/bin/env bash
# Nothing spends CPU while it waits: a supervised pipeline with nothing to
# do, on PostgreSQL and on MariaDB, after its load and a few changes;
# every process's own CPU time over IDLE_S seconds (default 10) stays
# under 1 % of a core. Its own time (utime + stime from /proc), so a busy
# machine does not inflate it; a loop that polls or spins would use
# seconds. The keepalives and status messages a stream owes its server
# are a few system calls each.
. "$(dirname "$0")/../lib.sh"
IDLE_S=${IDLE_S:-10}
TICK=$(getconf CLK_TCK)
# ticks PID: utime + stime so far
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo -1; }
# idle_check NAME CONFIG: each process of the pipeline of CONFIG
idle_check() {
	local name=$1 cfg=$2 p pids=() before=() i spent comm
	for p in $(pgrep -f -- "-c $cfg"); do pids+=($p); before+=($(ticks $p)); done
	ok $([ ${#pids[@]} -ge 5 ]; echo $?) "$name: ${#pids[@]} processes found"
	sleep "$IDLE_S"
	for i in "${!pids[@]}"; do
		p=${pids[$i]}
		comm=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | awk '{print $1}' | xargs -r basename)
		spent=$(( $(ticks $p) - ${before[$i]} ))
		ok $([ "${before[$i]}" -ge 0 ] && [ $spent -ge 0 ] && [ $((spent * 100)) -le $((IDLE_S * TICK)) ]; echo $?) \
			"$name: $comm idle: $spent ticks (of $TICK/s) in $IDLE_S s"
	done
}

S=p2o_idle
drop_slot $S; os_drop ${S}_idle
psql_q -c "drop table if exists idle; create table idle (id int primary key, v int)"
psql_q -c "insert into idle select g, 0 from generate_series(1, 1000) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S idle
sup_start; ok $? "PostgreSQL pipeline up"
psql_q -c "update idle set v = 1 where id <= 10"
check "the load and the changes land" -- wait_equal idle ${S}_idle 60 "json_build_object('id',id,'v',v)"
sleep 2	# the last checkpoint written
idle_check PostgreSQL "$T/cfg.yaml"
kill -TERM $SUP; wait $SUP

if [ -n "${MYSQL_HOST:-}" ] && [ -n "${MYSQL_PWD:-}" ] && command -v mariadb >/dev/null; then
	# its helpers, without lib.sh starting the plan again
	n=$_tap_n f=$_tap_fail
	. "$TOP/tests/mysql-lib.sh"
	_tap_n=$n _tap_fail=$f
	MY_SERVER_ID=4242424233
	os_drop t33_idle
	my_fresh_stream idle
	my_sql "DROP TABLE IF EXISTS idle; CREATE TABLE idle (id int PRIMARY KEY, v int);
		INSERT INTO idle SELECT seq, 0 FROM seq_1_to_1000"
	METRICS_PORT=$(free_port)
	my_config "$T/my.yaml" t33 idle
	pg2osync-supervise -c "$T/my.yaml" >> "$T/mysup.log" 2>&1 &
	MSUP=$!; cleanup_add $MSUP
	wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "MariaDB pipeline up"
	my_sql "UPDATE idle SET v = 1 WHERE id <= 10"
	check "the load and the changes land" -- my_equal idle t33_idle 60 "JSON_OBJECT('id', id, 'v', v)"
	sleep 2
	idle_check MariaDB "$T/my.yaml"
	kill -TERM $MSUP; wait $MSUP
else
	skip "MariaDB: needs run-with.sh --mariadb"
fi
drop_slot $S
done_testing
