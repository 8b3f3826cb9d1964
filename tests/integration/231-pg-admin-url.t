#!/usr/bin/env bash
# source.admin_url_env: the catalogue and setup through a second address of
# the server (a forwarder standing for a pooler), the stream on its direct
# replication connection. The pipeline starts with the catalogue and the
# publication read through the second address (the forwarder counts the
# connections, pg_stat_activity names them by application_name) while the
# walsender is the direct url's; with the second address gone the stream
# goes on (it never needed it), validate fails the admin connection and
# still accepts the direct replication one, and passes again once the
# address is back. A MySQL source refuses the key.
# Fails when: the capture's catalogue or the slot's creation takes the
# direct url, the walsender takes the admin url, the stream stops with the
# admin address, or validate checks only one of the two.
. "$(dirname "$0")/../lib.sh"

S=p2o_admin
drop_slot $S; os_drop ${S}_au
psql_q -c "drop table if exists au; create table au (id int primary key, v text);
	insert into au values (1, 'before')"
FPORT=$(free_port)
python3 "$TOP/tests/helper/tcp-forward.py" $FPORT "$PGHOST" "$PGPORT" > "$T/fwd.log" 2>&1 &
FWD=$!; cleanup_add $FWD
wait_for 10 bash -c "echo > /dev/tcp/127.0.0.1/$FPORT"
export P2O_DIRECT_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE?application_name=p2o_direct"
export P2O_ADMIN_URL="postgres://$PGUSER:$PGPASSWORD@127.0.0.1:$FPORT/$PGDATABASE?application_name=p2o_admin"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S au
sed -i "s/  url_env: P2O_TEST_URL/  url_env: P2O_DIRECT_URL\n  admin_url_env: P2O_ADMIN_URL/" "$T/cfg.yaml"

sup_start
ok $? "the pipeline is up"
ok $([ "$(grep -c conn "$T/fwd.log")" -ge 1 ]; echo $?) \
	"the capture's catalogue and setup went through the second address ($(grep -c conn "$T/fwd.log") connections)"
ok $(grep -q "capture-pg: info: admin connection to 127.0.0.1:$FPORT" "$T/sup.log"; echo $?) \
	"and say so: $(grep -o "capture-pg: info: admin connection to [^ ]*" "$T/sup.log" | head -1)"
ok $(grep -q "capture-pg: info: replication connection to $PGHOST:$PGPORT" "$T/sup.log"; echo $?) \
	"the replication connection is the direct url's"
app=$(psql_q -c "select application_name from pg_stat_activity where backend_type = 'walsender' and application_name like 'p2o_%'")
ok $([ "$app" = p2o_direct ]; echo $?) "the walsender streaming is the direct url's ($app)"
psql_q -c "insert into au values (2, 'streamed')"
SEL="json_build_object('id',id,'v',v)"
check "rows load and stream" -- wait_equal au ${S}_au 30 "$SEL"

# the second address gone: the stream does not notice
kill $FWD; wait $FWD 2>/dev/null
psql_q -c "insert into au values (3, 'without the admin address')"
check "the stream goes on without the admin address" -- wait_equal au ${S}_au 30 "$SEL"
pg2osync validate -c "$T/cfg.yaml" > "$T/val.out" 2>&1; st=$?
ok $([ $st != 0 ] && grep -q "^FAIL.*source: could not open the admin connection" "$T/val.out"; echo $?) \
	"validate fails the admin connection (exit $st): $(grep -m1 '^FAIL' "$T/val.out" | head -c 160)"
python3 "$TOP/tests/helper/tcp-forward.py" $FPORT "$PGHOST" "$PGPORT" >> "$T/fwd.log" 2>&1 &
FWD=$!; cleanup_add $FWD
wait_for 10 bash -c "echo > /dev/tcp/127.0.0.1/$FPORT"
pg2osync validate -c "$T/cfg.yaml" > "$T/val.out" 2>&1; st=$?
sed 's/^/# /' "$T/val.out" | head -n 4
ok $([ $st = 0 ] && grep -q "through source.admin_url_env" "$T/val.out"; echo $?) \
	"with it back validate passes (exit $st), its checks through the admin url"
ok $(grep -q "a replication connection is accepted on the source url (direct, for the stream)" "$T/val.out"; echo $?) \
	"and a replication connection on the direct url"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"

# the key is PostgreSQL's
cat > "$T/my.yaml" <<YAML
source:
  url: mysql://u@127.0.0.1:3306/db
  server_id: 4242
  admin_url_env: P2O_ADMIN_URL
target:
  url: $OS_URL
sync:
  t:
    table: db.t
YAML
pg2osync validate -c "$T/my.yaml" > "$T/my.out" 2>&1; st=$?
ok $([ $st != 0 ] && grep -q "my.yaml:4: 'source.admin_url_env' applies only to a postgresql source" "$T/my.out"; echo $?) \
	"a MySQL source refuses it (exit $st: $(head -c 160 "$T/my.out"))"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 30
drop_slot $S
done_testing
