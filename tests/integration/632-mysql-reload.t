#!/usr/bin/env bash
# SIGHUP reloads the configuration of a pipeline with a MariaDB source:
# a section added for a table that already holds 20,000 rows is loaded
# beside the stream while the other table's rows, inserted every 0.1 s,
# all arrive; later writes to the new table stream; the supervisor's pid
# is the same and no restart is logged. A changed source.server_id is
# refused by name, and a table that does not exist is refused, both
# counted, the stream going on. The section removed: later writes to its
# table reach no index. Run under tests/servers/run-with.sh --mariadb --os.
# Fails when: a row is lost, a refused reload changes anything, the
# supervisor restarts, or a count is wrong.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

MY_SERVER_ID=4242420066
export MY_SERVER_ID
my_fresh_stream m66a m66b
os_drop r66_m66a; os_drop r66_m66b
my_sql "DROP TABLE IF EXISTS m66a; DROP TABLE IF EXISTS m66b;
	CREATE TABLE m66a (id int PRIMARY KEY, v varchar(40));
	CREATE TABLE m66b (id int PRIMARY KEY, v varchar(40));
	INSERT INTO m66b SELECT seq, CONCAT('old ', seq) FROM seq_1_to_20000"
METRICS_PORT=$(free_port)
my_config "$T/one.yaml" r66 m66a
my_config "$T/two.yaml" r66 m66a m66b
cp "$T/one.yaml" "$T/cfg.yaml"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "every table is loaded" "$T/sup.log"
ok $? "the pipeline is up with table m66a"
reloads() { metrics_text | awk -v r="$1" '$1 == "pg2osync_config_reloads_total{result=\"" r "\"}" {print $2}'; }
( i=1; while :; do my_sql "INSERT INTO m66a VALUES ($i, 'r$i')" >/dev/null 2>&1; i=$((i + 1)); sleep 0.1; done ) &
FEED=$!; cleanup_add $FEED
SEL="JSON_OBJECT('id', id, 'v', v)"
sleep 2

sed "s/server_id: $MY_SERVER_ID/server_id: 4242420067/" "$T/one.yaml" > "$T/cfg.yaml"
kill -HUP $SUP
wait_for 30 grep -q "reload refused" "$T/sup.log"
ok $(grep "reload refused" "$T/sup.log" | grep -q "source.server_id cannot change"; echo $?) \
	"a changed server_id: refused, the key named"
sed "s/^engine:/  gone:\n    table: $MYSQL_DB.no_such_table\n    index: r66_gone\nengine:/" "$T/one.yaml" > "$T/cfg.yaml"
kill -HUP $SUP
wait_for 30 bash -c "[ \$(grep -c 'reload refused' '$T/sup.log') -ge 2 ]"
ok $(grep "reload refused" "$T/sup.log" | tail -n1 | grep -q "no_such_table"; echo $?) \
	"a table that does not exist: refused ($(grep 'reload refused' "$T/sup.log" | tail -n1 | cut -c1-200))"
ok $([ "$(reloads refused)" = 2 ]; echo $?) "both counted ($(reloads refused))"

cp "$T/two.yaml" "$T/cfg.yaml"
kill -HUP $SUP
wait_for 60 grep -q "reload applied" "$T/sup.log"
ok $? "a section added: applied"
wait_for 120 bash -c "[ \"\$(curl -s '$OS_URL/r66_m66b/_count' | jq .count)\" = 20000 ]"
ok $? "the 20,000 rows are loaded"
my_sql "INSERT INTO m66b VALUES (30001, 'streamed'); UPDATE m66b SET v = 'changed' WHERE id = 7"
wait_for 60 my_compare m66b r66_m66b "$SEL"
ok $? "later writes to m66b stream"
ok $(kill -0 $SUP 2>/dev/null; echo $?) "the supervisor runs on, the same process"
ok $(! grep -qE "stopping the pipeline|restarting the pipeline" "$T/sup.log"; echo $?) "no restart was logged"

cp "$T/one.yaml" "$T/cfg.yaml"
kill -HUP $SUP
wait_for 60 bash -c "[ \$(grep -c 'reload: starting the stages' '$T/sup.log') -ge 2 ]"
ok $? "the section removed: applied"
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
my_sql "INSERT INTO m66b VALUES (40001, 'never'); INSERT INTO m66a VALUES (900000, 'barrier')"
wait_for 60 bash -c "curl -s '$OS_URL/r66_m66a/_doc/900000' | jq -e .found >/dev/null"
ok $? "m66a streams on"
curl -s -XPOST "$OS_URL/r66_m66b/_refresh" >/dev/null
ok $(curl -s "$OS_URL/r66_m66b/_doc/40001" | jq -e '.found == false' >/dev/null; echo $?) \
	"m66b's later writes reach no index"
kill $FEED 2>/dev/null; wait $FEED 2>/dev/null
wait_for 60 my_compare m66a r66_m66a "$SEL"
ok $? "every row of m66a, inserted through the reloads, is indexed"
ok $([ "$(reloads applied)" = 2 ] && [ "$(reloads refused)" = 2 ]; echo $?) "applied 2, refused 2"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 50
done_testing
