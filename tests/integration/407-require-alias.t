#!/usr/bin/env bash
# target.require_alias: every index write names an alias. A templated
# index is refused at load; without the alias the load stops (69) before
# anything is written and validate says why; pg2osync reindex builds the
# index and the alias; the pipeline then loads, streams, resnapshots and
# replays a kill -9 through the alias (the same documents each time,
# verify finding nothing); a section whose index is a plain index is
# refused permanently, naming the rule, and nothing lands there; and a
# second reindex moves the alias with the pipeline writing on through it.
. "$(dirname "$0")/../lib.sh"

S=p2o_alias
S2=p2o_alias_plain
drop_slot $S; drop_slot $S2; drop_loads $S ra_items; drop_loads $S2 ra_plain
os_drop ra_plain
for i in $(curl -sS "$OS_URL/_cat/indices/ra_items*?h=index"); do os_drop "$i"; done
psql_q <<'SQL'
drop table if exists ra_items, ra_plain;
create table ra_items (id int primary key, name text, n int);
insert into ra_items select g, 'item ' || g, g from generate_series(1, 50) g;
create table ra_plain (id int primary key, name text);
insert into ra_plain values (1, 'one');
SQL
METRICS_PORT=$(free_port)
CKPT_MS=3000 mkhead "$T/cfg.yaml" $S
sed -i "s#^  url: $OS_URL#&\n  require_alias: true#" "$T/cfg.yaml"
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  items:
    table: ra_items
    index: ra_items
YAML

# a template: no alias to write through
cp "$T/cfg.yaml" "$T/tmpl.yaml"
cat >> "$T/tmpl.yaml" <<'YAML'
  plain:
    table: ra_plain
    index: "ra-{id}"
YAML
line=$(grep -n 'index: "ra-{id}"' "$T/tmpl.yaml" | cut -d: -f1)
timeout 60 pg2osync-supervise -c "$T/tmpl.yaml" > "$T/tmpl.out" 2>&1; st=$?
ok $([ $st = 78 ] && grep -q "tmpl.yaml:$line: 'sync.plain.index' is a template, and 'target.require_alias' writes only through aliases" "$T/tmpl.out"; echo $?) \
	"a templated index is refused at load, at its line (exit $st)"

# no alias yet: validate says so, the load stops before writing
pg2osync validate -c "$T/cfg.yaml" > "$T/v1.out" 2>&1
ok $(grep -q "^FAIL.*'ra_items' is not there, and target.require_alias writes only through an alias" "$T/v1.out"; echo $?) \
	"validate: the alias is not there"
timeout 120 pg2osync-supervise -c "$T/cfg.yaml" > "$T/noalias.out" 2>&1; st=$?
r=$([ $st = 69 ] && grep -q "there is no index or alias 'ra_items', and target.require_alias writes only through an alias that exists" "$T/noalias.out"; echo $?)
ok $r "without the alias the load stops, permanently (exit $st), naming the rule"
[ $r = 0 ] || grep -v ' info: ' "$T/noalias.out" | tail -n 5 | sed 's/^/#   /'
ok $([ "$(curl -s -o /dev/null -w '%{http_code}' "$OS_URL/ra_items")" = 404 ]; echo $?) \
	"and created nothing under the alias's name"
drop_slot $S

pg2osync reindex -c "$T/cfg.yaml" --table items --alias ra_items > "$T/r1.out" 2>&1; st=$?
sed 's/^/#   /' "$T/r1.out"
first=$(curl -sS "$OS_URL/_alias/ra_items" | jq -r 'keys[0]')
ok $([ $st = 0 ] && [ "${first#ra_items-}" != "$first" ]; echo $?) "pg2osync reindex builds an index and the alias naming it ($first)"
pg2osync validate -c "$T/cfg.yaml" > "$T/v2.out" 2>&1
r=$(grep -q "^ok.*alias 'ra_items' exists and takes writes" "$T/v2.out"; echo $?)
ok $r "validate: the alias takes writes"
[ $r = 0 ] || sed 's/^/#   /' "$T/v2.out"

sup_start; ok $? "the pipeline starts on it"
found() { curl -sS "$OS_URL/ra_items/_doc/$1" | jq -e .found >/dev/null; }
check "the load writes every row through the alias" -- wait_equal ra_items ra_items 120
ok $([ "$(os_count "$first")" = 50 ]; echo $?) "into the index it names"
loaded=$(curl -sS "$OS_URL/ra_items/_doc/7" | jq -cS ._source)
v0=$(curl -sS "$OS_URL/ra_items/_doc/7" | jq ._version)
psql_q -c "update ra_items set n = n where id = 7"
newer() { [ "$(curl -sS "$OS_URL/ra_items/_doc/7" | jq ._version)" != "$v0" ]; }
wait_for 30 newer
ok $? "the stream rewrites a row through the alias"
ok $([ "$(curl -sS "$OS_URL/ra_items/_doc/7" | jq -cS ._source)" = "$loaded" ]; echo $?) "the same document"
psql_q -c "insert into ra_items values (51, 'new', 51); delete from ra_items where id = 1; update ra_items set name = 'renamed' where id = 2"
check "inserts, updates and deletes land" -- wait_equal ra_items ra_items 60
pg2osync resnapshot -c "$T/cfg.yaml" --table items > "$T/rs.out" 2>&1; st=$?
ok $([ $st = 0 ] && [ "$(curl -sS "$OS_URL/ra_items/_doc/7" | jq -cS ._source)" = "$loaded" ]; echo $?) \
	"resnapshot writes through the alias, the same documents (exit $st)"
psql_q -c "update ra_items set name = 'after kill' where id between 10 and 20"
sleep 0.3
kill_pipeline
sup_start; ok $? "up again after a kill -9"
check "the replay lands through the alias" -- wait_equal ra_items ra_items 60
check "verify finds nothing" -- pg2osync verify -c "$T/cfg.yaml"

# a section whose index is an index, not an alias: refused, and halted
curl -sS -XPUT "$OS_URL/ra_plain" >/dev/null
PPORT_M=$METRICS_PORT
METRICS_PORT=$(free_port)
CKPT_MS=3000 mkhead "$T/plain.yaml" $S2
sed -i "s#^  url: $OS_URL#&\n  require_alias: true#" "$T/plain.yaml"
cat >> "$T/plain.yaml" <<'YAML'
sync:
  plain:
    table: ra_plain
    index: ra_plain
YAML
pg2osync-supervise -c "$T/plain.yaml" > "$T/plain.log" 2>&1 &
P2=$!; cleanup_add $P2
refused() { grep -q "target.require_alias: every write must name an alias, and this names an index or nothing: no such index \[ra_plain\]" "$T/plain.log"; }
wait_for 120 refused
ok $? "a write to a plain index is refused, naming the rule: $(grep -m1 -o 'target.require_alias: every write.*' "$T/plain.log" | cut -c1-150)"
halted() { [ "$(metrics_text | awk '/^pg2osync_writer_halted/ {print $2}')" = 1 ]; }
wait_for 30 halted
ok $? "the writer holds the pipeline there (pg2osync_writer_halted 1)"
ok $([ "$(os_count ra_plain)" = 0 ]; echo $?) "and nothing was written to the index"
for p in $(pgrep -f -- "-c $T/plain.yaml"); do kill -KILL "$p" 2>/dev/null; done
wait $P2 2>/dev/null
METRICS_PORT=$PPORT_M

# a rebuild moves the alias; the pipeline writes on through it
kill -TERM $SUP; wait $SUP
pg2osync reindex -c "$T/cfg.yaml" --table items --alias ra_items --drop-old > "$T/r2.out" 2>&1; st=$?
sed 's/^/#   /' "$T/r2.out"
second=$(curl -sS "$OS_URL/_alias/ra_items" | jq -r 'keys | join(",")')
ok $([ $st = 0 ] && [ "$second" != "$first" ] && [ "${second#ra_items-}" != "$second" ] &&
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$OS_URL/$first")" = 404 ]; echo $?) \
	"reindex with require_alias: a fresh index, the alias moved onto it, the old one dropped ($second)"
sup_start; ok $? "the pipeline starts again"
psql_q -c "insert into ra_items values (52, 'after reindex', 52)"
check "and writes on through the alias into the new index" -- wait_equal ra_items ra_items 60
ok $([ "$(os_count "$second")" = "$(psql_q -c 'select count(*) from ra_items')" ]; echo $?) "which holds every row"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S; drop_slot $S2
done_testing
