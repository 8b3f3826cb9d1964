#!/usr/bin/env bash
# A row filter on boolean columns, PostgreSQL: `active = true AND tenant
# <> 'hidden'` and `deleted = false OR deleted IS NULL` select the same
# rows from the initial load (the filter pushed into the load's COPY as
# SQL the server runs) as from the stream (the shaper's own evaluation),
# and both are the rows PostgreSQL itself selects with that WHERE. Rows
# enter and leave the filter by updates. Keywords in any letter case.
. "$(dirname "$0")/../lib.sh"

S=p2o_wbool
drop_slot $S; drop_loads $S wb_active wb_deleted
os_drop wb_active; os_drop wb_deleted
psql_q <<'SQL'
drop table if exists wb_active, wb_deleted;
create table wb_active (id int primary key, active boolean, tenant text);
create table wb_deleted (id int primary key, deleted boolean, note text);
alter table wb_active replica identity full;
alter table wb_deleted replica identity full;
-- every combination, NULL included, before the start: the load's rows
insert into wb_active select g, case g % 3 when 0 then true when 1 then false end,
	case when g % 5 = 0 then 'hidden' else 'acme' end from generate_series(1, 300) g;
insert into wb_deleted select g, case g % 3 when 0 then true when 1 then false end,
	'n' || g from generate_series(1, 300) g;
SQL
A_WHERE="active = true AND tenant <> 'hidden'"
D_WHERE="deleted = FALSE or deleted IS null"
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<YAML
sync:
  active:
    table: wb_active
    where: "$A_WHERE"
  deleted:
    table: wb_deleted
    where: "$D_WHERE"
YAML
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/sup.log"
ok $? "the configuration with boolean filters loads and the pipeline is up"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 20

metric() {	# metric 'NAME{LABELS}' -> value
	metrics_text | grep -F "$1 " | awk '{print $2}'
}
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 120 load_done
ok $? "the load finished"
SELA="json_build_object('id',id,'active',active,'tenant',tenant)"
SELD="json_build_object('id',id,'deleted',deleted,'note',note)"
QA="(select * from wb_active where $A_WHERE)"
QD="(select * from wb_deleted where $D_WHERE)"
check "the load indexed exactly the rows PostgreSQL selects with '$A_WHERE'" -- \
	wait_equal "$QA" wb_active 30 "$SELA"
check "and with '$D_WHERE'" -- wait_equal "$QD" wb_deleted 30 "$SELD"
want=$(psql_q -c "select count(*) from wb_active where $A_WHERE")
ok $([ "$(metric 'pg2osync_load_rows_total{table="public.wb_active"}')" = "$want" ]; echo $?) \
	"the filter was pushed into the load: $(metric 'pg2osync_load_rows_total{table="public.wb_active"}') rows read, $want match"

# the stream: new rows of every kind, rows entering and leaving the filter
psql_q <<'SQL'
insert into wb_active select g, case g % 3 when 0 then true when 1 then false end,
	case when g % 5 = 0 then 'hidden' else 'acme' end from generate_series(1001, 1300) g;
insert into wb_deleted select g, case g % 3 when 0 then true when 1 then false end,
	'n' || g from generate_series(1001, 1300) g;
update wb_active set active = not active where id % 7 = 0;
update wb_active set active = null where id % 11 = 0;
update wb_active set tenant = 'hidden' where id % 13 = 0;
update wb_deleted set deleted = not deleted where id % 7 = 0;
update wb_deleted set deleted = null where id % 11 = 0;
update wb_deleted set deleted = true where id % 13 = 0;
SQL
check "streamed rows follow '$A_WHERE' as PostgreSQL evaluates it" -- \
	wait_equal "$QA" wb_active 30 "$SELA"
check "and '$D_WHERE'" -- wait_equal "$QD" wb_deleted 30 "$SELD"
n=$(os_count wb_active)
ok $([ "$n" -gt 0 ] && [ "$n" -lt "$(psql_q -c 'select count(*) from wb_active')" ]; echo $?) \
	"the filter selects some rows and not others ($n documents)"

kill -TERM $SUP; wait $SUP
ok $? "drained"
drop_slot $S
done_testing
