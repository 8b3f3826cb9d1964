#!/usr/bin/env bash
# PostgreSQL restarted under the supervised pipeline while a client writes:
# once with a fast shutdown, once with a crash (immediate: recovery on the
# next start). Each time the capture ends with exit 75 (temporary), the
# supervisor keeps restarting the pipeline until the server is back, the
# capture resumes from the slot and the checkpoint, and nothing written
# before, around or after the restart is lost.
# Fails when: the capture's exit is taken as permanent, the supervisor
# gives up, or a change committed before the server went down is lost.
. "$(dirname "$0")/../lib.sh"
PG_DIR=${P2O_SERVERS_DIR:-}/pg
[ -d "$PG_DIR" ] || { echo "1..0 # skip needs the run-with.sh PostgreSQL"; exit 0; }

S=p2o_pgrestart
drop_slot $S; os_drop ${S}_pgr
psql_q -c "drop table if exists pgr; create table pgr (id int primary key, v int not null, note text);
	insert into pgr select g, 0, 'first' from generate_series(1, 2000) g"
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 mkconfig "$T/cfg.yaml" $S $S pgr
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up"
SEL="json_build_object('id',id,'v',v,'note',note)"
check "the load lands" -- wait_equal pgr ${S}_pgr 60 "$SEL"

cat > "$T/load.sql" <<'SQL'
\set id random(1, 3000)
insert into pgr values (:id, 1, md5(random()::text)) on conflict (id) do update set v = pgr.v + 1, note = md5(random()::text);
\set d random(1, 3000)
delete from pgr where id = :d and v % 4 = 0;
SQL
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -n 1)
write_for() {	# write_for SECONDS: a client at 200 transactions a second
	"$PGBENCH" -n -c 1 -R 200 -T "$1" -f "$T/load.sql" >> "$T/load.log" 2>&1
}
n75=0
for how in stop kill; do
	write_for 3
	r0=$(grep -c 'restarting the pipeline' "$T/sup.log")
	"$TOP/tests/servers/pg.sh" $how "$PG_DIR" >/dev/null 2>&1
	ok $? "the server is down ($how)"
	wait_for 30 bash -c "[ \$(grep -c 'restarting the pipeline' '$T/sup.log') -gt $r0 ]"
	ok $? "$how: the log says why the pipeline restarts: $(grep 'restarting the pipeline' "$T/sup.log" | tail -n 1 | cut -c1-150)"
	sleep 3
	kill -0 $SUP 2>/dev/null; ok $? "$how: the supervisor waits for the server"
	"$TOP/tests/servers/pg.sh" start "$PG_DIR" >/dev/null 2>&1
	wait_for 60 psql_q -c "select 1"; ok $? "$how: the server is back"
	write_for 3
	wait_for 120 slot_active $S; ok $? "$how: the capture streams again"
	check "$how: every change before, around and after the restart lands" -- wait_equal pgr ${S}_pgr 120 "$SEL"
done
n75=$(grep -c "capture-pg exited with 75" "$T/sup.log")
ok $([ "$n75" -ge 2 ]; echo $?) "the capture ended with exit 75 (temporary) each time ($n75)"
rc=$(metrics_text | awk '/^pg2osync_reconnects_total/ {print $2}')
ok $([ "${rc%.*}" -ge 2 ] 2>/dev/null; echo $?) "restarts counted ($rc)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
