#!/usr/bin/env bash
# pg2osync init: a starter file from the catalogue (names qualified, a
# keyless table declared append_only, url_env written and never the url or
# its password, an existing file refused without --force, an unknown table
# listing the eligible ones, offline with a note); and init --mappings on a
# MariaDB and a PostgreSQL table holding bigint unsigned at its maximum (on
# PostgreSQL a numeric(20)), a decimal, a datetime(6) / timestamp(6) and a
# JSON column: the pipeline run with the generated files indexes every row
# without a refusal; the file names the flavour the node said it is (also
# run in the Elasticsearch pass), a node that does not answer gets the
# default marked unconfirmed. Run under tests/servers/run-with.sh --pg
# --mariadb --os (or --es).
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${PGHOST:-}" ]; then echo "1..0 # skip needs --pg too"; exit 0; fi

MAX=18446744073709551615
count_is() { [ "$(os_count "$1")" = "$2" ]; }

# ---- MariaDB
my_sql "DROP TABLE IF EXISTS t15_my, t15_mylog;
	CREATE TABLE t15_my (id bigint unsigned PRIMARY KEY, price decimal(12,2), at datetime(6),
		doc json, name varchar(40));
	CREATE TABLE t15_mylog (a int, b varchar(10));
	INSERT INTO t15_my VALUES ($MAX, 12.50, '2024-02-29 13:14:15.123456', '{\"a\":[1,2],\"b\":{\"c\":\"x\"}}', 'max'),
		(1, -0.01, '1999-12-31 23:59:59.000001', '{\"a\":[3],\"b\":{\"c\":\"y\"}}', 'one'),
		(9223372036854775808, 99999999.99, '2038-01-19 03:14:08.5', '{\"a\":[],\"b\":{\"c\":\"z\"}}', 'past long');
	INSERT INTO t15_mylog VALUES (1, 'x')"
for i in t15_my t15_mylog t15_pg; do os_drop $i; done
MY_SERVER_ID=4215 my_fresh_stream t15_my t15_mylog
mkdir -p "$T/my"
export P2O_SOURCE_URL=$P2O_MYSQL_URL
pg2osync init -c "$T/my/p.yaml" --table t15_my --table t15_mylog --mappings --decimal scaled_float \
	--json flat_object --server-id 4215 --target "$OS_URL" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 0 ]; echo $?) "init --mappings on MariaDB (exit $st)"
sed 's/^/#   /' "$T/my/p.yaml"
grep -q '^    table: p2o.t15_my$' "$T/my/p.yaml" && grep -q '^  url_env: P2O_SOURCE_URL' "$T/my/p.yaml" &&
	grep -q '^  server_id: 4215' "$T/my/p.yaml"
ok $? "... names qualified from the url's database, url_env and the server id written"
# the node was asked which engine it is, as the writer asks it: a file
# made against Elasticsearch names it (without it the writer refuses it)
ok $(grep -q "^  flavor: ${P2O_TARGET:-opensearch}\$" "$T/my/p.yaml"; echo $?) \
	"... and target.flavor: ${P2O_TARGET:-opensearch}, as the node said ($(grep flavor "$T/my/p.yaml"))"
ok $(! grep -qF "$MYSQL_PWD" "$T/my/p.yaml"; echo $?) "... no password in the file"
awk '/t15_mylog:/ {s=1} s && /append_only: true/ {f=1} END {exit !f}' "$T/my/p.yaml"
ok $? "... the keyless table declared append_only"
m=$T/my/mappings/t15_my.json
sed 's/^/#   /' "$m"
# a JSON value kept whole is each engine's own type
FLAT=flat_object; [ "${P2O_TARGET:-}" = elasticsearch ] && FLAT=flattened
jq -e --arg flat $FLAT '.mappings.properties | .id.type == "unsigned_long" and .price.type == "scaled_float" and
	.price.scaling_factor == 100 and .at.type == "date_nanos" and .doc.type == $flat and
	.name.type == "text" and .name.fields.keyword.type == "keyword"' "$m" > /dev/null
ok $? "... the mapping: unsigned_long, scaled_float x100, date_nanos, $FLAT, text + keyword"
# the dynamic mapping is what refuses the maximum: the control
curl -sS -XPUT "$OS_URL/t15_dyn" > /dev/null
curl -sS -XPOST "$OS_URL/t15_dyn/_doc" -H 'content-type: application/json' -d '{"id":1}' > /dev/null
r=$(curl -sS -XPOST "$OS_URL/t15_dyn/_doc" -H 'content-type: application/json' -d "{\"id\":$MAX}" | jq -r '.error.type // "none"')
ok $([ "$r" != none ]; echo $?) "without the mapping the target refuses $MAX ($r)"
os_drop t15_dyn
# the Elasticsearch test node is the integ-test distribution: without the
# x-pack and mapper-extras modules it has no unsigned_long, scaled_float or
# flattened, which a full distribution has; the file is then only checked
nohandler=$(curl -sS -XPUT "$OS_URL/t15_types" -H 'content-type: application/json' -d @"$m" |
	jq -r 'select(.error != null) | .error.reason')
os_drop t15_types
if [ -n "$nohandler" ]; then
	for d in "the pipeline with the generated files indexes every loaded row" "... and a streamed one" \
		"the document of the maximum holds $MAX" "... in an index created with the generated mapping" \
		"no refusal"; do skip "$d: the node refuses the mapping ($nohandler)"; done
else
METRICS_PORT=$(free_port)
printf 'engine:\n  checkpoint_interval_ms: 200\nmetrics:\n  bind: 127.0.0.1:%s\n' "$METRICS_PORT" >> "$T/my/p.yaml"
pg2osync run -c "$T/my/p.yaml" > "$T/my.log" 2>&1 &
SUP=$!
cleanup_add $SUP
wait_for 60 count_is t15_my 3
ok $? "the pipeline with the generated files indexes every loaded row"
my_sql "INSERT INTO t15_my VALUES ($((MAX / 2 + 1)), 0.5, '2024-01-01 00:00:00.999999', '{\"a\":[9],\"b\":{\"c\":\"w\"}}', 'streamed')" 2>/dev/null ||
	my_sql "INSERT INTO t15_my VALUES (9223372036854775809, 0.5, '2024-01-01 00:00:00.999999', '{\"a\":[9],\"b\":{\"c\":\"w\"}}', 'streamed')"
wait_for 30 count_is t15_my 4
ok $? "... and a streamed one"
# jq reads numbers as doubles: the bytes themselves
os_get "/t15_my/_doc/$MAX" | grep -q "\"id\":$MAX[,}]"
ok $? "the document of the maximum holds $MAX"
ok $([ "$(os_get /t15_my/_mapping | jq -r '.t15_my.mappings.properties.id.type')" = unsigned_long ]; echo $?) "... in an index created with the generated mapping"
errs=$(metrics_text | awk '$1 == "pg2osync_sink_errors_total" {print $2}')
ok $([ "$errs" = 0 ] && ! grep -qiE 'refus|mapper_parsing|reject' "$T/my.log"; echo $?) "no refusal (sink errors $errs)"
kill -TERM $SUP; wait $SUP
fi

# ---- PostgreSQL: the same table
psql_q -c "drop table if exists t15_pg; create table t15_pg (id bigint primary key, big numeric(20,0),
	price numeric(12,2), at timestamp(6), doc jsonb, name text);
	insert into t15_pg values (1, $MAX, 12.50, '2024-02-29 13:14:15.123456', '{\"a\":[1,2],\"b\":{\"c\":\"x\"}}', 'max'),
		(2, 0, -0.01, '1999-12-31 23:59:59.000001', '{\"a\":[3],\"b\":{\"c\":\"y\"}}', 'zero')" || exit 1
drop_slot t15; drop_loads t15 t15_pg
mkdir -p "$T/pg"
export P2O_SOURCE_URL=$P2O_TEST_URL
pg2osync init -c "$T/pg/p.yaml" --table t15_pg --mappings --slot t15 --publication t15 --target "$OS_URL" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 0 ] && grep -q '^    table: public.t15_pg$' "$T/pg/p.yaml"; echo $?) "init --mappings on PostgreSQL, the name qualified with its schema"
sed 's/^/#   /' "$T/pg/mappings/t15_pg.json"
jq -e '.mappings.properties | .id.type == "long" and .big.type == "keyword" and .price.type == "keyword" and
	.at.type == "date_nanos" and .doc.type == "object"' "$T/pg/mappings/t15_pg.json" > /dev/null
ok $? "... numeric as exact keywords (the default), timestamp(6) as date_nanos, jsonb as object"
printf 'engine:\n  checkpoint_interval_ms: 200\n' >> "$T/pg/p.yaml"
pg2osync run -c "$T/pg/p.yaml" > "$T/pg.log" 2>&1 &
SUP=$!
cleanup_add $SUP
wait_for 60 count_is t15_pg 2
ok $? "the pipeline with the generated file indexes every row"
psql_q -c "insert into t15_pg values (3, $MAX, 1.00, '2026-01-01 00:00:00.5', '{\"a\":[],\"b\":{\"c\":\"z\"}}', 'streamed')"
wait_for 30 count_is t15_pg 3
ok $? "... and a streamed one"
os_get /t15_pg/_doc/1 | grep -q "\"big\":\"$MAX\""
ok $? "the maximum kept every digit"
ok $(! grep -qiE 'refus|mapper_parsing|reject' "$T/pg.log"; echo $?) "no refusal"
kill -TERM $SUP; wait $SUP
drop_slot t15

# ---- the rest of init's promises
pg2osync init -c "$T/pg/p.yaml" --table t15_pg > "$T/out" 2>&1
ok $([ $? = 1 ] && grep -q "exists; --force replaces it" "$T/out"; echo $?) "an existing file is refused without --force"
pg2osync init -c "$T/x.yaml" --table t15_nosuch > "$T/out" 2>&1
st=$?
ok $([ $st = 1 ] && grep -q "table 't15_nosuch' is not one the role can read; the eligible tables:" "$T/out" &&
	grep -q '^  public.t15_pg$' "$T/out"; echo $?) "an unknown table: exit 1, listing the eligible tables (exit $st)"
unset P2O_SOURCE_URL
pg2osync init -c "$T/pw.yaml" --source "$P2O_TEST_URL" --table t15_pg > "$T/out" 2>&1
ok $([ $? = 0 ] && ! grep -qF "$PGPASSWORD" "$T/pw.yaml" && grep -q 'url_env: P2O_SOURCE_URL' "$T/pw.yaml"; echo $?) "--source with a password: the file names url_env, never the url"
grep -q "the password in --source is not written" "$T/out"
ok $? "... and says so"
ok $(! grep -qF "$PGPASSWORD" "$T/out"; echo $?) "... without printing it"
pg2osync init -c "$T/off.yaml" --source "postgres://u@127.0.0.1:$(free_port)/db" --table shop.items > "$T/out" 2>&1
st=$?
ok $([ $st = 0 ] && grep -q '^note: .*writing the file without the catalogue' "$T/out" &&
	grep -q '^    table: shop.items$' "$T/off.yaml"; echo $?) "offline: written from the names given, with a note (exit $st)"
pg2osync validate -c "$T/off.yaml" > /dev/null 2>&1
ok $([ $? = 1 ]; echo $?) "... and validate says what is missing"
DEAD=http://127.0.0.1:$(free_port)
pg2osync init -c "$T/dead.yaml" --source "postgres://u@127.0.0.1:$(free_port)/db" --table shop.items \
	--target "$DEAD" > "$T/out" 2>&1
ok $([ $? = 0 ] && grep -q "^note: $DEAD did not say which engine it is" "$T/out" &&
	grep -q '^  flavor: opensearch    # not confirmed' "$T/dead.yaml"; echo $?) \
	"a node that does not answer: the default flavour, marked unconfirmed, with a note"
pg2osync init -c "$T/ms.yaml" --source "postgres://u@127.0.0.1:$(free_port)/db" --table shop.items \
	--target "$DEAD" --flavor meilisearch > "$T/out" 2>&1
ok $([ $? = 0 ] && grep -q '^  flavor: meilisearch$' "$T/ms.yaml" && grep -q '^  state_dir: ' "$T/ms.yaml" &&
	! grep -q 'did not say' "$T/out"; echo $?) \
	"--flavor meilisearch: written without asking, with the state_dir that target needs"
pg2osync init -c "$T/bad.yaml" --table t --flavor solr > "$T/out" 2>&1
ok $([ $? = 64 ]; echo $?) "--flavor of no engine: exit 64"
done_testing
