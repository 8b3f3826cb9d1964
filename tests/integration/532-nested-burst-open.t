#!/usr/bin/env bash
# A burst of nested-parent commits closes between transactions only. The
# capture holds a child change's commit (T1) to read its parent once for
# the burst; when the socket runs dry in the middle of the next
# transaction (T2, large), reading the parents then would read T2's before
# its commit is visible to a snapshot, at T1's version, and use up the
# keys T2's own commit needs: T2 would then be acknowledged without its
# parents. Every parent T2 names must be read at a version past T1.
. "$(dirname "$0")/../lib.sh"

S=p2o_nburst
drop_slot $S
psql_q <<'SQL'
drop table if exists nb_parents, nb_items, nb_touched;
create table nb_parents (id int primary key, name text);
create table nb_items (id int primary key, parent_id int, v int, note text);
create index on nb_items (parent_id);
alter table nb_items replica identity full;
insert into nb_parents select g, 'p' || g from generate_series(1, 20000) g;
insert into nb_items select g, 1 + g % 20000, g, repeat('n', 300) from generate_series(1, 40000) g;
-- the parents T2 will name: each moved child's parent before and after
-- (each parent named by T2 once, by neighbouring rows, so none is named
-- again after the socket first runs dry)
create table nb_touched as select distinct p from (
	select parent_id p from nb_items where id > 20000
	union select 1 + parent_id % 20000 from nb_items where id > 20000) x;
SQL
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  parents:
    table: nb_parents
    index: nb_parents
    children:
      - {table: nb_items, field: items, foreign_key: parent_id, columns: [id, v]}
YAML
capture-pg -c "$T/cfg.yaml" > "$T/c.frames" 2> "$T/cap.err" &
CAP=$!; cleanup_add $CAP
wait_for 30 slot_active $S
ok $? "the capture streams"
# T1 and T2 wait in the socket together, so one read starts with both
kill -STOP $CAP
psql_q -c "update nb_items set v = v + 1 where id = 1"
L1=$(psql_q -c "select pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
psql_q -c "update nb_items set parent_id = 1 + parent_id % 20000, note = repeat('m', 300) where id > 20000"
END=$(psql_q -c "select pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
# the walsender decodes T2 and fills the socket behind T1 meanwhile
sleep 3
kill -CONT $CAP
# T2 writes megabytes of WAL: a commit frame within 1 MiB of the WAL's end
# after it is T2's (or the burst's closing T2), never T1's
t2_closed() {
	grep -o '"k":"commit","pos":[0-9]*' "$T/c.frames" | cut -d: -f3 |
		awk -v e="$END" '$1 >= e - 1048576 {f = 1} END {exit !f}'
}
wait_for 120 t2_closed
ok $? "the capture closed T2 (commit frames at $(sed -E 's/^[0-9]+ //' "$T/c.frames" | jq -r 'select(.k == "commit") | .pos' | tr '\n' ' ')after T1 at $L1, the WAL at $END)"
# the highest version each parent was read at
sed -E 's/^[0-9]+ //' "$T/c.frames" | jq -r 'select(.k == "row" and .rel == "public.nb_parents") | "\(.new.id) \(.v)"' |
	sort -k1,1n -k2,2n | awk '{m[$1] = $2} END {for (p in m) print p, m[p]}' > "$T/read.txt"
psql_q -c "select p from nb_touched order by p" > "$T/touched.txt"
stale=$(awk -v l1="$L1" 'NR == FNR {m[$1] = $2; next} !($1 in m) || m[$1] <= l1 {n++; if (n <= 3) printf "%s(%s) ", $1, ($1 in m) ? m[$1] : "never"} END {print n + 0}' "$T/read.txt" "$T/touched.txt")
ok $([ "${stale##* }" = 0 ]; echo $?) "every parent T2 names is read at a version past T1 ($(wc -l < "$T/touched.txt") parents; not: ${stale})"
kill -TERM $CAP; wait $CAP 2>/dev/null
drop_slot $S
psql_q -c "drop table nb_parents, nb_items, nb_touched"
done_testing
