#!/usr/bin/env bash
# A document's identity from the configuration: an id template naming a
# column outside the key moves the document when that column changes; a
# templated index is created at its first document with the mapping file;
# a routing column change moves a document between routings without
# leaving a copy; an ingest pipeline runs on every index action; a table
# whose template needs a before-image it does not have is refused (69).
# Without ingest-common (the Elasticsearch test node) all but the
# pipeline runs.
. "$(dirname "$0")/../lib.sh"
PIPE=
has_module ingest-common && PIPE=shp-set
# pipelined DOC-JSON DESC: the pipeline's mark is on the document, where the
# node has the module
pipelined() {
	if [ -z "$PIPE" ]; then skip "$2 (no ingest-common on this node)"; return; fi
	ok $(echo "$1" | jq -e '._source.pipelined == "yes"' >/dev/null; echo $?) "$2"
}

S=p2o_shape_id
drop_slot $S; drop_loads $S shp_accounts shp_events
os_drop shp_accounts
curl -sS -XDELETE "$OS_URL/shp-events-*" >/dev/null 2>&1
psql_q <<'SQL'
drop table if exists shp_accounts, shp_events, shp_nofull;
create table shp_accounts (id int primary key, tenant text, name text);
alter table shp_accounts replica identity full;
create table shp_events (id int primary key, tenant text not null, region text, body text);
alter table shp_events replica identity full;
create table shp_nofull (id int primary key, tenant text);
SQL
[ -n "$PIPE" ] && curl -sS -XPUT "$OS_URL/_ingest/pipeline/shp-set" -H 'content-type: application/json' \
	-d '{"processors":[{"set":{"field":"pipelined","value":"yes"}}]}' >/dev/null
cat > "$T/events.json" <<'JSON'
{"properties": {"tenant": {"type": "keyword"}, "region": {"type": "keyword"}}}
JSON
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<YAML
sync:
  accounts:
    table: shp_accounts
    id: "t-{tenant}-{id}"
  events:
    table: shp_events
    index: "shp-events-{tenant}"
    routing: region
${PIPE:+    pipeline: $PIPE}
    mapping_file: events.json
YAML
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "supervisor reports healthy"

found() {	# found INDEX ID [ROUTING]
	curl -sS "$OS_URL/$1/_doc/$2${3:+?routing=$3}" | jq -e .found >/dev/null
}
gone() { ! found "$@"; }

psql_q -c "insert into shp_accounts values (1, 'acme', 'Ann')"
wait_for 30 found shp_accounts t-acme-1
ok $? "the id renders from the template: t-acme-1"
psql_q -c "update shp_accounts set tenant = 'zeta' where id = 1"
wait_for 30 found shp_accounts t-zeta-1
ok $? "a changed tenant writes t-zeta-1"
wait_for 30 gone shp_accounts t-acme-1
ok $? "and deletes t-acme-1"
ok $([ "$(os_count shp_accounts)" = 1 ]; echo $?) "one document for the row"

psql_q -c "insert into shp_events values (1, 'acme', 'eu', 'x')"
wait_for 30 found shp-events-acme 1 eu
ok $? "the templated index is created at its first document"
t=$(curl -sS "$OS_URL/shp-events-acme/_mapping" | jq -r '.["shp-events-acme"].mappings.properties.tenant.type')
ok $([ "$t" = keyword ]; echo $?) "with the mapping file's mapping (tenant: $t)"
doc=$(curl -sS "$OS_URL/shp-events-acme/_doc/1?routing=eu")
ok $([ "$(echo "$doc" | jq -r ._routing)" = eu ]; echo $?) "routed by its region: $(echo "$doc" | jq -c '{_routing}')"
pipelined "$doc" "the pipeline's set processor ran"

psql_q -c "update shp_events set region = 'us', body = 'y' where id = 1"
rerouted() { curl -sS "$OS_URL/shp-events-acme/_doc/1?routing=us" | jq -e '._source.body == "y"' >/dev/null; }
wait_for 30 rerouted
ok $? "a routing change writes under the new routing"
ok $([ "$(os_count 'shp-events-acme')" = 1 ]; echo $?) "and leaves one document, not a copy under the old"
doc=$(curl -sS "$OS_URL/shp-events-acme/_doc/1?routing=us")
ok $(echo "$doc" | jq -e '._routing == "us"' >/dev/null; echo $?) "its _routing is the new one"
pipelined "$doc" "the pipeline ran again"

psql_q -c "update shp_events set tenant = 'zeta' where id = 1"
wait_for 30 found shp-events-zeta 1 us
ok $? "a tenant change moves the document to a new index, created then"
wait_for 30 eval '[ "$(os_count shp-events-acme)" = 0 ]'
ok $? "and removes it from the old one"

psql_q -c "insert into shp_events values (2, 'acme', 'eu', 'z')"
wait_for 30 found shp-events-acme 2 eu
psql_q -c "truncate shp_events"
cleared() { [ "$(os_count 'shp-events-*')" = 0 ]; }
wait_for 30 cleared
ok $? "a truncate clears every index the template claims"

created() {
	n=$(metrics_text |
	    awk '/^pg2osync_indices_created_total/ {print $2}')
	[ "${n:-0}" -ge 2 ]
}
wait_for 10 created
ok $? "indices created at first use are counted ($(created; echo $n))"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"

# a template column outside the key, without the before-image to find
# the document by when it changes: refused at startup, naming the table
drop_slot ${S}_r
mkhead "$T/nofull.yaml" ${S}_r
cat >> "$T/nofull.yaml" <<'YAML'
sync:
  nofull:
    table: shp_nofull
    id: "{tenant}-{id}"
YAML
timeout 60 pg2osync-supervise -c "$T/nofull.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 69 ]; echo $?) "a non-key id column without REPLICA IDENTITY FULL: 69 (got $st)"
grep -q "shp_nofull.*'id' names column 'tenant'.*REPLICA IDENTITY FULL" "$T/out"
ok $? "says which table and why: $(grep -m1 "'id' names" "$T/out")"

[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
drop_slot $S; drop_slot ${S}_r
done_testing
