#!/usr/bin/env bash
# SIGHUP reloads the configuration, on real servers, with the pipeline
# streaming all along. A section added for a table that already holds
# 50,000 rows: the reload's checks pass, the table joins the publication,
# the stages cycle (drain, start on the new file) and the rows are loaded
# while the other table's rows, inserted every 0.1 s throughout, all
# arrive; later inserts to the new table stream; the supervisor's pid is
# the same and no pipeline restart is logged. Refused, each counted and
# logged, the pipeline streaming on: a bad key (with its file:line), a
# table that does not exist, a key that cannot change live (source
# slot_name, named). The section removed by a second reload: later writes
# to that table reach no index. The same file again: unchanged.
# Fails when: a row of either table is lost or duplicated, a refused
# reload changes anything, the supervisor restarts, or a count is wrong.
. "$(dirname "$0")/../lib.sh"

S=p2o_reload
drop_slot $S; os_drop ${S}_ra; os_drop ${S}_rb
drop_loads $S ra rb
psql_q -c "drop table if exists ra; drop table if exists rb;
	create table ra (id int primary key, v text);
	create table rb (id int primary key, v text);
	insert into rb select g, 'old ' || g from generate_series(1, 50000) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S ra
cp "$T/cfg.yaml" "$T/one.yaml"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "every table is loaded" "$T/sup.log"
ok $? "the pipeline is up with table ra"
M="http://127.0.0.1:$METRICS_PORT"
reloads() { metrics_text | awk -v r="$1" '$1 == "pg2osync_config_reloads_total{result=\"" r "\"}" {print $2}'; }

# ra gets a row every 0.1 s for the whole test
( i=1; while :; do psql_q -c "insert into ra values ($i, 'r$i')" >/dev/null 2>&1; i=$((i + 1)); sleep 0.1; done ) &
FEED=$!; cleanup_add $FEED
SELA="json_build_object('id',id,'v',v)"
sleep 2

# 1. refused: a bad key, with its line
cp "$T/one.yaml" "$T/cfg.yaml"
sed -i 's/^  batch_size:/  batch_sise:/' "$T/cfg.yaml"
kill -HUP $SUP
wait_for 30 grep -q "reload refused" "$T/sup.log"
ok $? "a bad key: the reload is refused"
ok $(grep "reload refused" "$T/sup.log" | grep -q "cfg.yaml:[0-9]*:.*batch_sise"; echo $?) \
	"logged with file:line: $(grep -m1 'reload refused' "$T/sup.log" | cut -c1-200)"
ok $([ "$(reloads refused)" = 1 ]; echo $?) "counted: refused $(reloads refused)"

# 2. refused: a table that does not exist
cp "$T/one.yaml" "$T/cfg.yaml"
sed -i "s/^engine:/  nosuch:\n    table: public.no_such_table\n    index: ${S}_nosuch\nengine:/" "$T/cfg.yaml"
kill -HUP $SUP
wait_for 30 bash -c "[ \$(grep -c 'reload refused' '$T/sup.log') -ge 2 ]"
ok $(grep "reload refused" "$T/sup.log" | tail -n1 | grep -q "no_such_table"; echo $?) \
	"a table that does not exist: refused, named ($(grep 'reload refused' "$T/sup.log" | tail -n1 | cut -c1-220))"

# 3. refused: a key that cannot change live, named
cp "$T/one.yaml" "$T/cfg.yaml"
sed -i "s/slot_name: $S/slot_name: ${S}_other/" "$T/cfg.yaml"
kill -HUP $SUP
wait_for 30 bash -c "[ \$(grep -c 'reload refused' '$T/sup.log') -ge 3 ]"
ok $(grep "reload refused" "$T/sup.log" | tail -n1 | grep -q "source.slot_name cannot change"; echo $?) \
	"source.slot_name changed: refused, the key named"
ok $([ "$(reloads refused)" = 3 ]; echo $?) "three refusals counted ($(reloads refused))"
ok $(! grep -q "reload: draining\|reload applied" "$T/sup.log"; echo $?) "nothing was applied"
check "ra streams through the refusals" -- wait_equal ra ${S}_ra 30 "$SELA"

# 4. the same file again: unchanged
cp "$T/one.yaml" "$T/cfg.yaml"
kill -HUP $SUP
wait_for 30 grep -q "reload unchanged" "$T/sup.log"
ok $? "the running file again: unchanged ($(reloads unchanged))"

# 5. a section for rb, which holds 50,000 rows
mkconfig "$T/two.yaml" $S $S ra rb
cp "$T/two.yaml" "$T/cfg.yaml"
kill -HUP $SUP
wait_for 60 grep -q "reload applied" "$T/sup.log"
ok $? "a section added: applied ($(grep -m1 'reload applied' "$T/sup.log" | cut -c1-200))"
ok $(psql_q -c "select 1 from pg_publication_tables where pubname = '$S' and tablename = 'rb'" | grep -q 1; echo $?) \
	"rb is in the publication"
wait_for 120 bash -c "[ \"\$(curl -s '$OS_URL/${S}_rb/_count' | jq .count)\" = 50000 ]"
ok $? "the 50,000 rows are loaded"
psql_q -c "insert into rb values (60001, 'streamed'); update rb set v = 'changed' where id = 7"
SELB="json_build_object('id',id,'v',v)"
check "later writes to rb stream" -- wait_equal rb ${S}_rb 60 "$SELB"
ok $(kill -0 $SUP 2>/dev/null; echo $?) "the supervisor runs on, the same process ($SUP)"
ok $(! grep -qE "stopping the pipeline|restarting the pipeline" "$T/sup.log"; echo $?) "no restart was logged"
ok $([ "$(grep -c 'starting the pipeline' "$T/sup.log")" = 1 ]; echo $?) "the pipeline was started once"
ok $([ "$(reloads applied)" = 1 ]; echo $?) "counted: applied $(reloads applied)"

# 6. the section removed again: rb's writes reach no index
cp "$T/one.yaml" "$T/cfg.yaml"
kill -HUP $SUP
wait_for 60 bash -c "[ \$(grep -c 'reload: starting the stages' '$T/sup.log') -ge 2 ]"
ok $? "the section removed: applied"
wait_for 60 curl -sf "$M/ready"
psql_q -c "insert into rb values (70001, 'never indexed'); update rb set v = 'not this' where id = 8"
# a row of ra after it, as a barrier: once it is in, rb's writes were read
psql_q -c "insert into ra values (900000, 'barrier')"
wait_for 60 bash -c "curl -s '$OS_URL/${S}_ra/_doc/900000' | jq -e .found >/dev/null"
ok $? "ra streams on"
curl -s -XPOST "$OS_URL/${S}_rb/_refresh" >/dev/null
ok $(curl -s "$OS_URL/${S}_rb/_doc/70001" | jq -e '.found == false' >/dev/null &&
	[ "$(curl -s "$OS_URL/${S}_rb/_doc/8" | jq -r ._source.v)" = "old 8" ]; echo $?) \
	"rb's later writes reach no index; its index is left as it was"

kill $FEED 2>/dev/null; wait $FEED 2>/dev/null
check "every row of ra, inserted through all the reloads, is indexed once" -- wait_equal ra ${S}_ra 60 "$SELA"
ok $([ "$(reloads applied)" = 2 ] && [ "$(reloads refused)" = 3 ] && [ "$(reloads unchanged)" = 1 ]; echo $?) \
	"applied 2, refused 3, unchanged 1"
ok $(! grep -qE "stopping the pipeline|restarting the pipeline" "$T/sup.log"; echo $?) "still no restart logged"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 60
drop_slot $S
done_testing
