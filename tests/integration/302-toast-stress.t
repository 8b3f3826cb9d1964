#!/usr/bin/env bash
# Out-of-line (TOAST) completion under pressure, against a node started for
# this test alone (its first index is created by our first write): 300
# times, a row with a 12 kB out-of-line column is inserted and another
# column updated at once, so the update's unchanged-TOAST marker lands in
# the same batch as the insert, in the next one, or after it is on disk.
# Every document must keep the column. A row whose document is gone from
# the index (deleted there by hand, say) has no stored copy to complete
# from: its update is written without the column and counted per table in
# /metrics.
. "$(dirname "$0")/../lib.sh"

S=p2o_tstress
drop_slot $S
psql_q <<'SQL'
drop table if exists tstress, tpre;
create table tstress (id int primary key, title text, body text);
alter table tstress alter column body set storage external;
create table tpre (id int primary key, title text, body text);
alter table tpre alter column body set storage external;
insert into tpre select 1, 'before the pipeline', string_agg(md5(i::text), '') from generate_series(1, 400) i;
SQL

# the node runs as its own unprivileged user: it must reach its directory
chmod 755 "$T"
"$TOP/tests/servers/opensearch.sh" start "$T/os" > "$T/os.start" 2>&1
ok $? "a fresh OpenSearch node for this test" || sed 's/^/#   /' "$T/os.start" | tail -n 20
cleanup_os() { "$TOP/tests/servers/opensearch.sh" kill "$T/os" >/dev/null 2>&1; }
trap 'cleanup_os; _cleanup' EXIT
OS_MAIN=$OS_URL
. "$T/os/env"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S tstress tpre
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "the pipeline is up against the fresh node"
wait_for 60 grep -q "'loader' finished: every table is loaded" "$T/sup.log"
ok $? "the row that predates the pipeline was loaded"

for i in $(seq 1 300); do
	echo "insert into tstress select $i, 'new', string_agg(md5((i * $i)::text), '') from generate_series(1, 400) i;"
	echo "update tstress set title = 'updated $i' where id = $i;"
done | psql_q
SEL="json_build_object('id',id,'title',title,'body',body)"
check "300 rows, each updated right after its insert, all with their 12 kB column" -- \
	wait_equal tstress ${S}_tstress 90 "$SEL"
curl -s -XPOST "$OS_URL/${S}_tstress/_refresh" >/dev/null
lens=$(curl -s "$OS_URL/${S}_tstress/_search?size=300&_source=body" | jq -c '[.hits.hits[]._source.body | length] | unique')
ok $([ "$lens" = "[12800]" ]; echo $?) "every body is 12800 characters long ($(echo $lens | tr -d ' \n'))"

ok $([ "$(os_get /${S}_tpre/_doc/1 | jq -r '._source.body | length')" = 12800 ]; echo $?) "with its column"
curl -sS -XDELETE "$OS_URL/${S}_tpre/_doc/1?refresh=true" >/dev/null
psql_q -c "update tpre set title = 'after' where id = 1"
wait_for 30 bash -c "METRICS_PORT=$METRICS_PORT metrics_text | grep -q '^pg2osync_toast_missing_total{table=\"public.tpre\"} 1$'"
ok $? "an update of a row whose document is gone is counted as written without its column"
metrics_text | grep -q '^pg2osync_toast_missing_total{table="public.tstress"}'
ok $([ $? != 0 ]; echo $?) "and no row of the stressed table is"
grep -q "document '${S}_tpre/1' has unchanged TOAST fields" "$T/sup.log"
ok $? "the log names the document"
doc=$(curl -s "$OS_URL/${S}_tpre/_doc/1" | jq -c '._source')
ok $([ "$doc" = '{"id":1,"title":"after"}' ]; echo $?) "the document holds what the update carried ($doc)"
kill -TERM $SUP; wait $SUP
ok $? "drained"
drop_slot $S
OS_URL=$OS_MAIN
done_testing
