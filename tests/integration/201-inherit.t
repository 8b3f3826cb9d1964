#!/usr/bin/env bash
# A table partitioned the old way, by inheritance: children created with
# INHERITS, rows routed to them by rules, no primary key on a child. A
# publication of the parent carries its children, and the application's
# UPDATE and DELETE of a child without a replica identity then fail. So
# pg2osync refuses to start, naming every child and the ALTER TABLE that
# fixes it, before it creates any publication: the application's writes
# keep working. Once the children have a replica identity the start goes
# on, the load reads the children's rows through the parent and the
# stream files their changes under it: the index is the parent's rows,
# whichever table holds them. A TRUNCATE of the parent clears it; a
# TRUNCATE of one child, whose rows the index cannot tell apart, stops the
# stream rather than leave it stale.
. "$(dirname "$0")/../lib.sh"

S=p2o_inh
drop_slot $S; drop_loads $S inh_pay; os_drop ${S}_inh_pay
psql_q <<'SQL'
drop table if exists inh_pay cascade;
create table inh_pay (id int primary key, amount numeric(8,2), day date,
	note text);
create table inh_pay_2024_01 (check (day < '2024-02-01')) inherits (inh_pay);
create table inh_pay_2024_02 (check (day >= '2024-02-01')) inherits (inh_pay);
create rule inh_pay_r1 as on insert to inh_pay where (new.day < '2024-02-01')
	do instead insert into inh_pay_2024_01 values (new.*);
create rule inh_pay_r2 as on insert to inh_pay where (new.day >= '2024-02-01')
	do instead insert into inh_pay_2024_02 values (new.*);
insert into inh_pay select g, g * 1.25, date '2024-01-20' + g, 'row ' || g
	from generate_series(1, 20) g;
SQL
n1=$(psql_q -c "select count(*) from only inh_pay_2024_01")
n2=$(psql_q -c "select count(*) from only inh_pay_2024_02")
n0=$(psql_q -c "select count(*) from only inh_pay")
ok $([ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && [ "$n0" = 0 ]; echo $?) \
	"the rules route the rows to the children ($n1, $n2; $n0 in the parent itself)"

RECONNECT_MAX=0 METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S inh_pay
timeout 120 pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup1.log" 2>&1
st=$?
ok $([ $st -ne 0 ] && [ $st -ne 124 ]; echo $?) "the start is refused (exit $st)"
for c in inh_pay_2024_01 inh_pay_2024_02; do
	grep -q "table 'public.$c' (inherits from 'public.inh_pay') has no replica identity.*ALTER TABLE public.$c REPLICA IDENTITY FULL" "$T/sup1.log"
	ok $? "the refusal names $c and the ALTER TABLE that fixes it"
done
ok $(grep -q "2 tables under 'public.inh_pay'" "$T/sup1.log"; echo $?) \
	"and says how many: $(grep -m1 -o "2 tables under 'public.inh_pay'[^;]*" "$T/sup1.log")"
ok $([ "$(psql_q -c "select count(*) from pg_publication where pubname like '$S%'")" = 0 ]; echo $?) \
	"no publication was created"
check "the application's UPDATE of the parent still works" -- \
	psql_q -c "update inh_pay set note = 'paid' where id <= 3"
check "and its DELETE" -- psql_q -c "delete from inh_pay where id = 20"

# the fix the refusal named
psql_q -c "alter table inh_pay_2024_01 replica identity full" \
	-c "alter table inh_pay_2024_02 replica identity full"
RECONNECT_MAX=20
mkconfig "$T/cfg.yaml" $S $S inh_pay
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup2.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "with a replica identity on each child the pipeline starts"
pubs=$(psql_q -c "select string_agg(tablename, ',' order by tablename) from pg_publication_tables where pubname = '$S'")
ok $([ "$pubs" = "inh_pay,inh_pay_2024_01,inh_pay_2024_02" ]; echo $?) "the publication carries the parent and both children ($pubs)"
sel="json_build_object('id', id, 'amount', amount::text, 'day', day, 'note', note)"
check "the load reads the children's rows through the parent" -- wait_equal inh_pay ${S}_inh_pay 60 "$sel"

check "the application's UPDATE and DELETE of the parent work while it streams" -- \
	psql_q -c "update inh_pay set amount = amount + 100, note = 'moved' where id between 5 and 15" \
	-c "delete from inh_pay where id in (2, 14)" \
	-c "insert into inh_pay values (30, 9.99, '2024-01-05', 'new jan'), (31, 1.01, '2024-03-01', 'new mar')"
check "the index follows the children's changes under the parent's ids" -- wait_equal inh_pay ${S}_inh_pay 60 "$sel"
ok $([ "$(os_get /${S}_inh_pay/_doc/31 | jq -r '._source.note')" = "new mar" ]; echo $?) \
	"a row inserted through the parent into a child is the parent's document 31"

psql_q -c "truncate inh_pay" -c "insert into inh_pay values (40, 4.00, '2024-01-09', 'after'), (41, 4.10, '2024-02-09', 'after')"
check "a TRUNCATE of the parent, which truncates the whole tree, clears the index" -- wait_equal inh_pay ${S}_inh_pay 60 "$sel"

psql_q -c "truncate inh_pay_2024_01"
wait_for 60 grep -q "a TRUNCATE of 'public.inh_pay_2024_01' without the rest of its inheritance tree" "$T/sup2.log"
ok $? "a TRUNCATE of one child stops the stream, naming it, rather than leave the index stale"
kill -TERM $SUP 2>/dev/null; wait $SUP 2>/dev/null

# the same check for the partitions of a table named with a primary_key:
# REPLICA IDENTITY FULL on the root does not reach its partitions
S2=${S}_part
drop_slot $S2
psql_q <<'SQL'
drop table if exists inh_part cascade;
create table inh_part (id int, v text) partition by range (id);
create table inh_part_a partition of inh_part for values from (0) to (100);
alter table inh_part replica identity full;
insert into inh_part values (1, 'a');
SQL
mkhead "$T/part.yaml" $S2
printf 'sync:\n  inh_part:\n    table: inh_part\n    primary_key: [id]\n' >> "$T/part.yaml"
sed -i 's/^  reconnect_max: .*/  reconnect_max: 0/' "$T/part.yaml"
timeout 120 pg2osync-supervise -c "$T/part.yaml" > "$T/sup3.log" 2>&1
st=$?
ok $([ $st -ne 0 ] && [ $st -ne 124 ] &&
	grep -q "table 'public.inh_part_a' (a partition of 'public.inh_part') has no replica identity.*ALTER TABLE public.inh_part_a REPLICA IDENTITY FULL" "$T/sup3.log"; echo $?) \
	"a partition without a replica identity refuses the start, naming it (exit $st)"
check "and the application's UPDATE of the partitioned table still works" -- \
	psql_q -c "update inh_part set v = 'b' where id = 1"
drop_slot $S2
psql_q -c "drop table inh_part cascade"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T"/sup*.log | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
psql_q -c "drop table inh_pay cascade"
done_testing
