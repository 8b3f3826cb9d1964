#!/usr/bin/env bash
# pg2osync bootstrap then run: bootstrap creates the slot, the publications
# (the table a collection reads in the publication, as the capture would
# make it) and the indices (with their mapping) and exits; the pipeline
# then starts without creating anything and syncs, the collection too; drop-slot refuses a slot a pipeline
# streams from, then drops the slot and keeps the publication unless
# --publication; bootstrap against a database that is not there exits at
# once (75), it does not wait. Run under tests/servers/run-with.sh --pg --os.
. "$(dirname "$0")/../lib.sh"

SLOT=t14
drop_slot $SLOT
drop_loads $SLOT t14 t14_log t14_cust
psql_q -c "drop table if exists t14, t14_log, t14_cust, t14_ord; create table t14 (id int primary key, v text);
	create table t14_log (at int, what text);
	create table t14_cust (id int primary key, name text);
	create table t14_ord (id int primary key, cust_id int, v int);
	alter table t14_ord replica identity full;
	insert into t14 select g, 'v' || g from generate_series(1, 500) g;
	insert into t14_log values (1, 'a');
	insert into t14_cust values (1, 'a'), (2, 'b');
	insert into t14_ord values (1, 1, 10), (2, 1, 20)" || exit 1
for i in t14 t14_log t14_cust; do os_drop $i; done
mkhead "$T/cfg.yaml" $SLOT
echo '{"properties":{"v":{"type":"keyword"}}}' > "$T/t14.json"
cat >> "$T/cfg.yaml" <<EOF
sync:
  t14:
    table: public.t14
    index: t14
    mapping_file: t14.json
  log:
    table: public.t14_log
    index: t14_log
    append_only: true
  cust:
    table: public.t14_cust
    index: t14_cust
    children:
      - table: public.t14_ord
        field: orders
        foreign_key: cust_id
EOF

pg2osync bootstrap -c "$T/cfg.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 0 ]; echo $?) "bootstrap: exit 0"
ok $([ "$(psql_q -c "select count(*) from pg_replication_slots where slot_name = '$SLOT' and plugin = 'pgoutput' and not active")" = 1 ]; echo $?) "... the slot exists, nothing reads it"
ok $([ "$(psql_q -c "select string_agg(pubname, ',' order by pubname) from pg_publication where pubname like '$SLOT%'")" = "$SLOT,${SLOT}_append" ]; echo $?) "... both publications"
ok $([ "$(psql_q -c "select count(*) from pg_publication_tables where pubname = '${SLOT}_append' and tablename = 't14_log'")" = 1 ]; echo $?) "... the keyless table in ${SLOT}_append"
ok $([ "$(psql_q -c "select count(*) from pg_publication_tables where pubname = '$SLOT' and tablename = 't14_ord'")" = 1 ]; echo $?) "... the table a collection reads in $SLOT"
ok $([ "$(os_get /t14/_mapping | jq -r '.t14.mappings.properties.v.type')" = keyword ]; echo $?) "... index t14 with its mapping"
ok $([ "$(os_get /_cat/indices/.pg2osync_meta?h=index\&expand_wildcards=all)" = .pg2osync_meta ]; echo $?) "... and the state index"
pg2osync bootstrap -c "$T/cfg.yaml" > "$T/out2" 2>&1
ok $([ $? = 0 ] && grep -q "slot '$SLOT' exists: left as it is" "$T/out2"; echo $?) "a second bootstrap leaves what exists"

METRICS_PORT=$(free_port)
printf 'metrics:\n  bind: 127.0.0.1:%s\n' "$METRICS_PORT" >> "$T/cfg.yaml"
pg2osync run -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!
cleanup_add $SUP
wait_equal public.t14 t14 60 > /dev/null
ok $? "run: the pipeline loads the table"
psql_q -c "update t14 set v = 'changed' where id < 50; insert into t14_log values (2, 'b')"
wait_equal public.t14 t14 30 > /dev/null
ok $? "... and streams"
orders() { [ "$(os_get /t14_cust/_doc/1 | jq -c '[._source.orders[].v] | sort')" = "$1" ]; }
psql_q -c "insert into t14_ord values (3, 1, 30)"
wait_for 30 orders '[10,20,30]'
ok $? "... the collection too: a child row inserted reaches its parent's document"
ok $(! grep -iE "created (publication|replication slot|index)" "$T/sup.log"; echo $?) "the pipeline created nothing: no slot, publication or index"
m=$(metrics_text | awk '$1 == "pg2osync_indices_created_total" {print $2}')
ok $([ "$m" = 0 ]; echo $?) "... pg2osync_indices_created_total is 0 (got '$m')"

pg2osync drop-slot -c "$T/cfg.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 1 ] && grep -q "slot '$SLOT' is active" "$T/out"; echo $?) "drop-slot while it streams: refused, exit 1 (exit $st)"
ok $(slot_active $SLOT; echo $?) "... the slot is still there"
kill -TERM $SUP; wait $SUP
psql_q -c "select pg_create_logical_replication_slot('t14_other', 'pgoutput')" > /dev/null
pg2osync drop-slot -c "$T/cfg.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 0 ]; echo $?) "drop-slot: exit 0"
ok $([ "$(psql_q -c "select count(*) from pg_replication_slots where slot_name = '$SLOT'")" = 0 ]; echo $?) "... the slot is gone"
ok $([ "$(psql_q -c "select count(*) from pg_replication_slots where slot_name = 't14_other'")" = 1 ]; echo $?) "... another slot is not touched"
ok $([ "$(psql_q -c "select count(*) from pg_publication where pubname like '$SLOT%'")" = 2 ]; echo $?) "... the publications are kept"
pg2osync bootstrap -c "$T/cfg.yaml" > /dev/null 2>&1
pg2osync drop-slot -c "$T/cfg.yaml" --publication > "$T/out" 2>&1
ok $([ $? = 0 ] && [ "$(psql_q -c "select count(*) from pg_replication_slots where slot_name = '$SLOT'") $(psql_q -c "select count(*) from pg_publication where pubname like '$SLOT%'")" = "0 0" ]; echo $?) "drop-slot --publication: the slot and both publications are gone"
psql_q -c "select pg_drop_replication_slot('t14_other')" > /dev/null
# without bootstrap the same run creates them: the check above can fail
pg2osync run -c "$T/cfg.yaml" > "$T/sup2.log" 2>&1 &
SUP=$!
cleanup_add $SUP
wait_for 60 grep -q "created replication slot '$SLOT'" "$T/sup2.log"
ok $? "without bootstrap the pipeline's log says it created the slot"
kill -TERM $SUP 2>/dev/null; wait $SUP 2>/dev/null

# a database that is not there: an exit, not a wait
export P2O_T14_DOWN="postgres://$PGUSER:$PGPASSWORD@127.0.0.1:$(free_port)/$PGDATABASE"
sed 's/url_env: P2O_TEST_URL/url_env: P2O_T14_DOWN/' "$T/cfg.yaml" > "$T/down.yaml"
start=$SECONDS
timeout 60 pg2osync bootstrap -c "$T/down.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 75 ] && [ $((SECONDS - start)) -le 5 ]; echo $?) "bootstrap with the database down: exit 75 at once (exit $st, $((SECONDS - start)) s)"
ok $(! grep -qF "$PGPASSWORD" "$T/out"; echo $?) "... and its message holds no password"
drop_slot $SLOT
done_testing
