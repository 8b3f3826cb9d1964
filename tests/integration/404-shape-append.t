#!/usr/bin/env bash
# Tables without a key, declared append_only: each row is filed under the
# sha256 of its canonical JSON, the same row loaded or streamed is one
# document. A table with no replica identity goes in a second
# publication that publishes only inserts and truncates, so the
# application's own UPDATE on it still works (and is not seen). A keyless
# table with REPLICA IDENTITY FULL is published whole: the application's
# UPDATE works there too, arrives, and halts the pipeline naming the
# table, since nothing says which document it addresses.
. "$(dirname "$0")/../lib.sh"

S=p2o_shape_ap
drop_slot $S; drop_loads $S shp_audit shp_log
os_drop shp_audit; os_drop shp_log
psql_q <<'SQL'
drop table if exists shp_audit, shp_log;
create table shp_audit (at timestamptz, who text, what jsonb);
create table shp_log (at timestamptz, line text);
alter table shp_log replica identity full;
insert into shp_audit values ('2026-01-01 10:00:00+00', 'ann', '{"b": 1, "a": ["x", "y"]}');
SQL
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  audit:
    table: shp_audit
    append_only: true
  log:
    table: shp_log
    append_only: true
YAML
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "supervisor reports healthy with two keyless tables"
pubs=$(psql_q -c "select string_agg(pubname || ':' || tablename, ' ' order by pubname)
	from pg_publication_tables where pubname like '${S}%'")
ok $([ "$pubs" = "${S}:shp_log ${S}_append:shp_audit" ]; echo $?) \
	"the table without a replica identity is in ${S}_append: $pubs"
acts=$(psql_q -c "select pubinsert, pubupdate, pubdelete, pubtruncate from pg_publication where pubname = '${S}_append'")
ok $([ "$acts" = "t|f|f|t" ]; echo $?) "which publishes inserts and truncates only ($acts)"

wait_for 30 eval '[ "$(os_count shp_audit)" = 1 ]'
ok $? "the row that was there is loaded"
loaded=$(curl -sS "$OS_URL/shp_audit/_search" | jq -r '.hits.hits[0]._id')
# the id is the sha256 of the row's canonical JSON: members sorted by
# name, no whitespace, values as the capture writes them
want=$(printf '%s' '{"at":"2026-01-01T10:00:00Z","what":{"a":["x","y"],"b":1},"who":"ann"}' | sha256sum | cut -c1-64)
ok $([ "$loaded" = "$want" ]; echo $?) "filed under the sha256 of its canonical JSON ($loaded)"

# the same row once more, streamed: the same document
v1=$(curl -sS "$OS_URL/shp_audit/_doc/$want" | jq ._version)
psql_q -c "insert into shp_audit values ('2026-01-01 10:00:00+00', 'ann', '{\"a\": [\"x\", \"y\"], \"b\": 1}'), ('2026-01-01 11:00:00+00', 'bob', null)"
wait_for 30 eval '[ "$(os_count shp_audit)" = 2 ]'
ok $? "a streamed copy of the loaded row is the same document: 2 documents for 3 rows"
v2=$(curl -sS "$OS_URL/shp_audit/_doc/$want" | jq ._version)
ok $([ "$v2" -gt "$v1" ]; echo $?) "the streamed row rewrote the loaded row's document (version $v1, then $v2)"

psql_q -c "update shp_audit set who = 'eve' where who = 'bob'"
ok $? "the application's UPDATE of a table without a replica identity still works"
psql_q -c "insert into shp_audit values ('2026-01-02 00:00:00+00', 'zed', null)"
wait_for 30 eval '[ "$(os_count shp_audit)" = 3 ]'
ok $? "and the pipeline goes on (the update is not published)"

psql_q -c "insert into shp_log values ('2026-01-01 12:00:00+00', 'started')"
wait_for 30 eval '[ "$(os_count shp_log)" = 1 ]'
ok $? "a keyless table with REPLICA IDENTITY FULL: inserts land"
psql_q -c "update shp_log set line = 'edited'"
ok $? "the application's UPDATE of it works"
halted() { grep -q "table 'public.shp_log' is append_only, and an UPDATE arrived" "$T/sup.log"; }
wait_for 30 halted
ok $? "and halts the pipeline, naming the table: $(grep -m1 -o "table 'public.shp_log' is append_only[^:]*" "$T/sup.log")"
wait $SUP; st=$?
ok $([ $st = 65 ]; echo $?) "the supervisor stops with 65 (got $st)"

[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
drop_slot $S
done_testing
