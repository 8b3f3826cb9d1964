#!/usr/bin/env bash
# Nested documents, killed: a load of 160,000 parents with their children
# is killed -9 (every process) once two ranges are recorded; children
# change while it is down; after the restart a stream of child-change
# transactions (inserts, updates, moves to another parent, deletes) is
# killed -9 again in the middle. Afterwards every parent document equals
# its SQL query by content: a child change whose parent was not yet
# rewritten when the pipeline died is replayed, never lost.
. "$(dirname "$0")/../lib.sh"

S=p2o_ncrash
drop_slot $S; drop_loads $S nc_parents
os_drop nc_parents
psql_q <<'SQL'
drop table if exists nc_parents, nc_items;
create table nc_parents (id int primary key, name text);
create table nc_items (id int primary key, parent_id int, v int, note text);
create index on nc_items (parent_id);
alter table nc_items replica identity full;
insert into nc_parents select g, 'p' || g from generate_series(1, 160000) g;
insert into nc_items select g, 1 + g % 160000, g, 'n' || g from generate_series(1, 320000) g;
analyze nc_parents;
SQL
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  parents:
    table: nc_parents
    children:
      - {table: nc_items, field: items, foreign_key: parent_id, columns: [id, v]}
YAML
SEL="json_build_object('id', t.id, 'name', t.name, 'items', coalesce((select
	json_agg(json_build_object('id', i.id, 'v', i.v) order by i.id) from nc_items i
	where i.parent_id = t.id), '[]'::json))"
start_sv() {
	pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
	SUP=$!; cleanup_add $SUP
}
metric() { metrics_text | awk -v s="$1" '$1 == s { print $2 }'; }
kill_all() {	# every process at once, as a power cut would
	pkill -KILL -f "pg2osync-supervise -c $T/cfg.yaml"
	pkill -KILL -f -- "-c $T/cfg.yaml"
	sleep 1
	! pgrep -f -- "-c $T/cfg.yaml" >/dev/null
}

start_sv
ranges_done() { [ "$(metric 'pg2osync_load_ranges_done{table="public.nc_parents"}')" -ge 2 ] 2>/dev/null; }
wait_for 300 ranges_done
ok $? "the load recorded two ranges ($(metric 'pg2osync_load_ranges_done{table="public.nc_parents"}') of $(metric 'pg2osync_load_ranges{table="public.nc_parents"}'))"
kill_all
ok $? "kill -9 of every process during the load"
psql_q -c "insert into nc_items values (900001, 3, 1, 'down'); update nc_items set parent_id = 150000 where id = 5;
	delete from nc_items where id = 8; update nc_items set v = -1 where id = 159999"
start_sv
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 600 load_done
ok $? "the load finished after the restart"

# a stream of child changes, killed in the middle
cat > "$T/child.sql" <<'SQL'
\set a random(1, 160000)
\set b random(1, 160000)
\set i random(1, 320000)
begin;
insert into nc_items values (:i + 1000000 * (:b % 7 + 1), :a, :b, 'x') on conflict (id) do update set v = nc_items.v + 1;
update nc_items set parent_id = :b where id = :i;
delete from nc_items where id = :i + 1 and v % 5 = 0;
commit;
SQL
pgbench -n -c 1 -T 12 -f "$T/child.sql" > "$T/bench1.log" 2>&1 &
BENCH=$!
sleep 5
kill_all
ok $? "kill -9 of every process during a stream of child changes"
start_sv
wait $BENCH; n=$(grep -o "actually processed: [0-9]*" "$T/bench1.log" | grep -o "[0-9]*$")
ok $([ "${n:-0}" -gt 100 ]; echo $?) "the child changes ran on throughout: ${n:-0} transactions"
check "every parent equals its SQL query after both crashes" -- wait_equal nc_parents nc_parents 180 "$SEL"
kill -TERM $SUP; wait $SUP
ok $? "drained"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
drop_slot $S
done_testing
