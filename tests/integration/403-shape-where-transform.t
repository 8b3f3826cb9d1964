#!/usr/bin/env bash
# What a document holds: a row filter the row leaves and enters again
# (deleted, then written again), transforms with renames and constants,
# a value a transform cannot convert indexed as it arrived and counted, and
# a 12 kB out-of-line column, renamed and hashed, that an update of
# another column leaves unchanged: completed from the stored document
# under its target name, as stored, and not hashed twice. A filter on a
# text column that may be stored out of line needs the before-image.
. "$(dirname "$0")/../lib.sh"

S=p2o_shape_wt
drop_slot $S; drop_loads $S shp_orders shp_people
os_drop shp_orders; os_drop shp_people
psql_q <<'SQL'
drop table if exists shp_orders, shp_people, shp_textfilter;
create table shp_orders (id int primary key, status varchar(16), total numeric(10,2));
create table shp_people (id int primary key, name text, email text, height text,
	born text, nick text, bio text);
alter table shp_people alter column bio set storage external;
create table shp_textfilter (id int primary key, status text);
SQL
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  orders:
    table: shp_orders
    where: "status IN ('paid', 'shipped') AND total >= 10"
  people:
    table: shp_people
    transform:
      email: hash
      bio: hash
      height: number
      nick: number
      born: {date: "DD/MM/YYYY"}
    fields:
      bio: bio_sha
      name: full_name
    constants:
      origin: "{schema}.{table}"
YAML
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "supervisor reports healthy"

found() { curl -sS "$OS_URL/$1/_doc/$2" | jq -e .found >/dev/null; }
gone() { ! found "$@"; }
# settled CHECK: wait for a row written after the change to show: the
# change before it has been applied by then
marker=100
settled() {
	marker=$((marker + 1))
	psql_q -c "insert into shp_orders values ($marker, 'paid', 99)"
	wait_for 30 found shp_orders $marker
}

psql_q -c "insert into shp_orders values (1, 'open', 50), (2, 'paid', 5)"
settled
ok $(gone shp_orders 1 && gone shp_orders 2; echo $?) "rows outside the filter are not indexed"
psql_q -c "update shp_orders set status = 'paid' where id = 1"
wait_for 30 found shp_orders 1
ok $? "a row that enters the filter is written"
psql_q -c "update shp_orders set total = 9.99 where id = 1"
wait_for 30 gone shp_orders 1
ok $? "a row that leaves it is deleted"
psql_q -c "update shp_orders set total = 10 where id = 1"
wait_for 30 found shp_orders 1
ok $? "and written again when it re-enters (10 >= 10, numerically)"
ok $(curl -sS "$OS_URL/shp_orders/_doc/1" | jq -e '._source.total == "10.00"' >/dev/null; echo $?) \
	"with its current values"

psql_q <<'SQL'
insert into shp_people values (1, 'Ann', 'ann@example.org', '1.72', '05/03/1990',
	'annie', (select string_agg(md5(i::text), '') from generate_series(1, 400) i));
SQL
wait_for 30 found shp_people 1
want_bio=$(psql_q -c "select encode(sha256(bio::bytea), 'hex') from shp_people where id = 1")
want_mail=$(psql_q -c "select encode(sha256(email::bytea), 'hex') from shp_people where id = 1")
doc=$(curl -sS "$OS_URL/shp_people/_doc/1" | jq -c ._source)
ok $(echo "$doc" | jq -e --arg b "$want_bio" --arg m "$want_mail" \
	'.bio_sha == $b and .email == $m and .full_name == "Ann" and .height == 1.72 and
	 .born == "1990-03-05" and .origin == "public.shp_people" and (has("bio") | not) and
	 (has("name") | not)' >/dev/null; echo $?) "transformed, renamed, constants: $(echo "$doc" | cut -c1-160)"
stored=$(psql_q -c "select pg_column_size(bio) > 2000 and pg_column_size(bio) = octet_length(bio) from shp_people where id = 1")
ok $([ "$stored" = t ]; echo $?) "the 12 kB bio is stored out of line, uncompressed"

psql_q -c "update shp_people set name = 'Ann B' where id = 1"
renamed() { curl -sS "$OS_URL/shp_people/_doc/1" | jq -e '._source.full_name == "Ann B"' >/dev/null; }
wait_for 30 renamed
ok $? "an update of another column lands"
doc=$(curl -sS "$OS_URL/shp_people/_doc/1" | jq -c ._source)
ok $(echo "$doc" | jq -e --arg b "$want_bio" '.bio_sha == $b' >/dev/null; echo $?) \
	"the unchanged out-of-line column is completed under its target name, not hashed twice"

# the mapping decides what a field may hold: a value no transform could
# convert is written as it arrived, and what the target refuses halts
ok $(curl -sS "$OS_URL/shp_people/_doc/1" | jq -e '._source.nick == "annie"' >/dev/null; echo $?) \
	"a value the transform cannot convert is indexed as it arrived"
counted() {
	metrics_text | grep -q \
	    '^pg2osync_transform_unconverted_total{table="public.shp_people",column="nick"} 2$'
}
wait_for 10 counted
ok $? "and counted per table and column (the insert and the update)"
ok $([ "$(grep -c "table 'public.shp_people' column 'nick': a value the transform could not convert" "$T/sup.log")" = 1 ]; echo $?) \
	"with one warning"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"

drop_slot ${S}_r
mkhead "$T/textfilter.yaml" ${S}_r
cat >> "$T/textfilter.yaml" <<'YAML'
sync:
  tf:
    table: shp_textfilter
    where: "status = 'paid'"
YAML
timeout 60 pg2osync-supervise -c "$T/textfilter.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 69 ]; echo $?) "a filter on a text column outside the replica identity: 69 (got $st)"
grep -q "'where' names column 'status'.*REPLICA IDENTITY FULL" "$T/out"
ok $? "says why: $(grep -m1 "'where' names" "$T/out" | cut -c1-200)"

[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
drop_slot $S; drop_slot ${S}_r
done_testing
