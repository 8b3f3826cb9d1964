#!/usr/bin/env bash
# The initial load and the stream shape a row the same way: the filter is
# pushed down into the load (rows it would drop are not even read), ids
# render from the same template, transforms and renames give the same
# document, and the same row loaded and then streamed is one document
# rewritten with the same body. Two tables sharing an index: a truncate of
# one is skipped, logged and counted, and the other's documents stay.
. "$(dirname "$0")/../lib.sh"

S=p2o_shape_ld
drop_slot $S; drop_loads $S shp_mix shp_staff shp_clients shp_coll
os_drop shp_mix; os_drop shp_people_all; os_drop shp_coll
psql_q <<'SQL'
drop table if exists shp_mix, shp_staff, shp_clients, shp_coll;
create table shp_mix (id int primary key, tenant varchar(16), status varchar(8),
	email text, price numeric(10,2), tags text[]);
alter table shp_mix replica identity full;
insert into shp_mix values (1, 'acme', 'on', 'ann@example.org', 12.50, '{a,b}'),
	(2, 'acme', 'off', 'bob@example.org', 3, '{c}');
create table shp_staff (id int primary key, name text);
create table shp_clients (id int primary key, name text);
insert into shp_staff values (1, 'Sam');
insert into shp_clients values (1, 'Cleo');
-- a collation that orders 'B' after 'b', where bytes put it before
create table shp_coll (id int primary key, name text collate "en-US-x-icu");
alter table shp_coll replica identity full;
insert into shp_coll values (1, 'B'), (2, 'a'), (3, 'c');
SQL
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  mix:
    table: shp_mix
    id: "{tenant}-{id}"
    where: "status = 'on'"
    transform:
      email: hash
      price: number
      tags: {redact: "-"}
    fields:
      email: email_sha
    constants:
      origin: "{table}"
  coll:
    table: shp_coll
    where: "name < 'b'"
  staff:
    table: shp_staff
    index: shp_people_all
    id: "staff-{id}"
  clients:
    table: shp_clients
    index: shp_people_all
    id: "client-{id}"
YAML
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "supervisor reports healthy"

metric() {	# metric 'NAME{LABELS}' -> value
	metrics_text | grep -F "$1 " | awk '{print $2}'
}
found() { curl -sS "$OS_URL/$1/_doc/$2" | jq -e .found >/dev/null; }

wait_for 60 found shp_mix acme-1
ok $? "the loaded row is filed under its template id: acme-1"
loaded=$(curl -sS "$OS_URL/shp_mix/_doc/acme-1")
ok $([ "$(os_count shp_mix)" = 1 ]; echo $?) "the row outside the filter is not indexed"
loadrows() { [ "$(metric 'pg2osync_load_rows_total{table="public.shp_mix"}')" = 1 ]; }
wait_for 10 loadrows
ok $? "nor read: the load read $(metric 'pg2osync_load_rows_total{table="public.shp_mix"}') row (the filter is pushed down)"

wait_for 30 eval '[ "$(os_count shp_coll)" = 2 ]'
ok $? "the load's filter compares strings by bytes, as the stream does: 'B' and 'a' < 'b' ($(os_count shp_coll) loaded)"

# the same row, streamed: an update that changes nothing
psql_q -c "update shp_mix set price = price where id = 1"
rewritten() {
	[ "$(curl -sS "$OS_URL/shp_mix/_doc/acme-1" | jq ._version)" -gt "$(echo "$loaded" | jq ._version)" ]
}
wait_for 30 rewritten
ok $? "the streamed row rewrites the loaded document ($(echo "$loaded" | jq ._version) -> $(curl -sS "$OS_URL/shp_mix/_doc/acme-1" | jq ._version))"
streamed=$(curl -sS "$OS_URL/shp_mix/_doc/acme-1")
ok $([ "$(echo "$loaded" | jq -cS ._source)" = "$(echo "$streamed" | jq -cS ._source)" ]; echo $?) \
	"with the same body: $(echo "$streamed" | jq -cS ._source | cut -c1-140)"
want=$(psql_q -c "select encode(sha256('ann@example.org'::bytea), 'hex')")
ok $(echo "$streamed" | jq -e --arg w "$want" '._source.email_sha == $w and ._source.price == 12.5 and
	._source.tags == "-" and ._source.origin == "shp_mix"' >/dev/null; echo $?) "transformed the same way on both paths"

psql_q -c "update shp_mix set status = 'on' where id = 2"
wait_for 30 found shp_mix acme-2
ok $? "the row the load left out is written when it enters the filter"

wait_for 30 eval '[ "$(os_count shp_people_all)" = 2 ]'
ok $? "two tables in one index, each under its own ids"
psql_q -c "truncate shp_staff; insert into shp_clients values (2, 'Cid')"
wait_for 30 found shp_people_all client-2
skipped() { [ "$(metric 'pg2osync_truncates_skipped_total{table="public.shp_staff"}')" = 1 ]; }
wait_for 10 skipped
ok $? "a truncate of one of them is skipped and counted"
ok $([ "$(os_count shp_people_all)" = 3 ]; echo $?) "and clears nothing: the other table's documents stay"
grep -q "table 'public.shp_staff' was truncated, but index 'shp_people_all' holds other tables' documents too" "$T/sup.log"
ok $? "and is said"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
drop_slot $S
done_testing
