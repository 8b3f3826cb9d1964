#!/usr/bin/env bash
# A 1,000,000-row load while a client updates and deletes random rows the
# whole time: content equality at the end, and the WAL the slot retains
# stays bounded while the load runs beside the stream (reported).
. "$(dirname "$0")/../lib.sh"

S=p2o_lbusy
drop_slot $S
os_drop ${S}_lb
curl -sS -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fload%2Fpublic.lb" >/dev/null 2>&1
psql_q <<'SQL'
drop table if exists lb;
create table lb (id int primary key, v int, title text);
insert into lb select g, 0, 'row ' || g from generate_series(1, 1000000) g;
SQL
cat > "$T/churn.sql" <<'SQL'
\set a random(1, 1000000)
\set b random(1, 1000000)
update lb set v = v + 1, title = 'changed' where id = :a;
delete from lb where id = :b;
SQL
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S lb
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/sup.log"
ok $? "pipeline up, loading 1,000,000 rows"
pgbench -n -c 2 -R 200 -T 3600 -f "$T/churn.sql" > "$T/pgbench.log" 2>&1 &
PGB=$!; cleanup_add $PGB
max=0
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
for i in $(seq 1 1200); do
	r=$(psql_q -c "select pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint from pg_replication_slots where slot_name = '$S'")
	[ -n "$r" ] && [ "$r" -gt "$max" ] && max=$r
	load_done && break
	sleep 0.5
done
load_done
ok $? "the load finished under a steady stream of changes ($(( i / 2 )) s)"
kill $PGB; wait $PGB 2>/dev/null
diag "retained WAL peaked at $(( max / 1048576 )) MiB during the load"
ok $([ "$max" -lt $((256 * 1048576)) ]; echo $?) "the slot's retained WAL stayed bounded (< 256 MiB: $(( max / 1048576 )) MiB)"
check "the index equals the table, every document" -- wait_equal lb ${S}_lb 120 "json_build_object('id',id,'v',v,'title',title)"
kill -TERM $SUP; wait $SUP
drop_slot $S
done_testing
