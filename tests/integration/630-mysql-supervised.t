#!/usr/bin/env bash
# pg2osync-supervise with a MariaDB source: the initial load of a table
# with every kind of column beside the stream, then inserts, updates and
# deletes streamed in the same document shape as the load (a row written
# before the start and the same row written after are the same
# document); decimal fidelity; TRUNCATE; ALTER ADD COLUMN counted as drift
# while later rows land; the checkpoint text (file:pos;gtid=...); no
# password on any argv or in any log line; stopped, written to, started
# again: the capture resumes by GTID, nothing lost, nothing replayed.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

IX=t90_t90
my_fresh_stream t90
os_drop $IX
my_raw "DROP TABLE IF EXISTS t90;
CREATE TABLE t90 (id int PRIMARY KEY, name varchar(20), price decimal(12,2),
	e enum('a','b''c'), s set('x','y','z'), b bit(8), vb varbinary(8),
	bn binary(3), dtm datetime(6), ts timestamp(3) NULL, j json,
	big bigint unsigned, f float, d double, c char(5), y year, tm time(2),
	bl blob, tx text, l1 varchar(10) CHARACTER SET latin1) DEFAULT CHARSET=utf8mb4"
# the values of row 1, written before the start and again (as row 101)
# after it
VALS="'lamp', 12.50, 'b''c', 'x,z', b'101', x'00ff', x'01', '2024-02-29 13:14:15.123456',
	'2024-02-29 13:14:15.123', '{\"a\": [1.5, 2.5], \"b\": {\"c\": null}}',
	18446744073709551615, 0.1, 0.1, 'ab', 2024, '-12:34:56.78', x'000102',
	'tëxt 日本 😀', 'café'"
my_raw "INSERT INTO t90 VALUES (1, $VALS), (2, 'desk', 0.10, 'a', '', b'0', '', x'000000',
	'1999-12-31 23:59:59', NULL, '[]', 0, -1.5, 1e300, '', 1901, '00:00:00', '', '', ''),
	(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO t90 (id, name, price) SELECT seq, CONCAT('bulk ', seq), seq / 8 FROM seq_1000_to_3999"
ok $? "3 rows of every kind and 3000 plain ones before the start"
# a number past a long is what dynamic mapping refuses: the index says
# what the column is, as a user would
curl -s -XPUT -H 'Content-Type: application/json' "$OS_URL/$IX" \
	-d '{"mappings":{"properties":{"big":{"type":"unsigned_long"},"f":{"type":"double"},"d":{"type":"double"}}}}' >/dev/null
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" t90 t90
APORT=$(free_port)
printf 'api:\n  bind: 127.0.0.1:%s\n' "$APORT" >> "$T/cfg.yaml"
SEL="JSON_OBJECT('id', id, 'name', name, 'price', CAST(price AS char))"
export MY_COMPARE_SOME=1

sv_start "$T/sup.log"
wait_for 60 healthy
ok $? "the pipeline is up"
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 120 load_done
ok $? "the load finished"
ok $([ "$(metric 'pg2osync_load_rows_total{table="p2o.t90"}')" = 3003 ]; echo $?) \
	"3003 rows loaded ($(metric 'pg2osync_load_rows_total{table="p2o.t90"}'))"

doc() { os_get "/$IX/_doc/$1" | jq -cS '._source'; }
my_raw "INSERT INTO t90 VALUES (101, $VALS)"
wait_for 30 bash -c "curl -s '$OS_URL/$IX/_doc/101' | jq -e .found"
ok $? "a row inserted after the start lands"
a=$(doc 1 | jq -cS 'del(.id)'); b=$(doc 101 | jq -cS 'del(.id)')
ok $([ -n "$a" ] && [ "$a" != null ] && [ "$a" = "$b" ]; echo $?) \
	"the row loaded before the start and the same row streamed after it are the same document"
[ "$a" = "$b" ] || { diag "loaded:   $a"; diag "streamed: $b"; }
want='{"b":5,"big":18446744073709552000,"bl":"AAEC","bn":"AQAA","c":"ab","d":0.1,"dtm":"2024-02-29T13:14:15.123456","e":"b'"'"'c","f":0.1,"j":{"a":[1.5,2.5],"b":{"c":null}},"l1":"café","name":"lamp","price":"12.50","s":["x","z"],"tm":"-12:34:56.78","ts":"2024-02-29T13:14:15.123Z","tx":"tëxt 日本 😀","vb":"AP8=","y":2024}'
# jq reads numbers as doubles: the stored text keeps every digit
ok $([ "$a" = "$want" ] && os_get "/$IX/_doc/101" | grep -q '"big":18446744073709551615,'; echo $?) \
	"and the document is what the type mapping says, bigint unsigned to the last digit"
[ "$a" = "$want" ] || diag "got: $a"

# read-your-writes on MySQL: the binlog position now, and one named by
# the client, both reached once the checkpoint passes them
A="http://127.0.0.1:$APORT"
c=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 "$A/synced?timeout=20000")
ok $([ "$c" = 200 ] && jq -e '.synced == true and (.confirmed | test("^[^;]+[.][0-9]+:[0-9]+$"))' "$T/body" >/dev/null; echo $?) \
	"/synced on MySQL: the position now is reached, confirmed as file:offset ($c $(cat "$T/body"))"
my_sql "INSERT INTO t90 (id, name) VALUES (102, 'synced')"
pos=$(my_raw "SHOW MASTER STATUS" | awk 'NR == 1 { print $1 ":" $2 }')
c=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 "$A/synced?position=$pos&timeout=20000")
ok $([ "$c" = 200 ] && [ "$(os_get "/$IX/_doc/102" | jq -r .found)" = true ]; echo $?) \
	"/synced?position=$pos: answered once the row written before it is in the index ($c $(cat "$T/body"))"
my_sql "DELETE FROM t90 WHERE id = 102"

my_sql "UPDATE t90 SET price = 9999999999.99 WHERE id = 1; UPDATE t90 SET price = -0.01 WHERE id = 2"
wait_for 30 bash -c "[ \"\$(curl -s '$OS_URL/$IX/_doc/2' | jq -r ._source.price)\" = -0.01 ]"
ok $([ "$(doc 1 | jq -r .price)" = 9999999999.99 ] && [ "$(doc 2 | jq -r .price)" = -0.01 ]; echo $?) \
	"decimal fidelity: 9999999999.99 and -0.01, every digit"
my_sql "DELETE FROM t90 WHERE id = 3"
wait_for 30 bash -c "[ \"\$(curl -s '$OS_URL/$IX/_doc/3' | jq -r .found)\" = false ]"
ok $? "a delete lands"
check "the index equals the table" -- my_equal t90 $IX 60 "$SEL"

my_sql "TRUNCATE TABLE t90"
wait_for 30 bash -c "[ \"\$(curl -s -XPOST '$OS_URL/$IX/_refresh' >/dev/null; curl -s '$OS_URL/$IX/_count' | jq .count)\" = 0 ]"
ok $? "TRUNCATE empties the index"
my_sql "INSERT INTO t90 (id, name) VALUES (7, 'after truncate')"
my_sql "ALTER TABLE t90 ADD COLUMN color varchar(10)"
wait_for 30 bash -c "[ \"\$(METRICS_PORT=$METRICS_PORT metrics_text | awk '\$1 == \"pg2osync_schema_drift_total{table=\\\"p2o.t90\\\"}\" {print \$2}')\" -ge 1 ] 2>/dev/null"
ok $? "ALTER ADD COLUMN is counted: pg2osync_schema_drift_total{table=\"p2o.t90\"} $(metric 'pg2osync_schema_drift_total{table="p2o.t90"}')"
my_sql "INSERT INTO t90 (id, name, color) VALUES (8, 'red one', 'red')"
wait_for 30 bash -c "curl -s '$OS_URL/$IX/_doc/8' | jq -e '._source.color == \"red\"'"
ok $? "a row after the ALTER lands with the new column"
check "the index equals the table" -- my_equal t90 $IX 60 "$SEL"

sleep 1
text=$(ckpt -c "$T/cfg.yaml" get | jq -r .text)
ok $(echo "$text" | grep -Eq '^binlog\.[0-9]{6}:[0-9]+;gtid=0-1-[0-9]+$'; echo $?) "the checkpoint text is file:pos;gtid=...: $text"

leak=0; n=0
for p in $(pgrep -f -- "-c $T/cfg.yaml"); do
	n=$((n + 1))
	tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -qF "$MYSQL_PWD" && leak=1
done
ok $([ $n -ge 5 ] && [ $leak = 0 ]; echo $?) "no password on the argv of any of the $n processes"

kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains, exit 0"
ckpt0=$(ckpt -c "$T/cfg.yaml" get | jq -r .text)
# written while the pipeline is down: the restart resumes by GTID after
# the checkpoint and sees exactly these
my_sql "INSERT INTO t90 (id, name, price) SELECT seq, 'while down', seq FROM seq_200_to_209;
	UPDATE t90 SET name = 'changed while down' WHERE id = 8; DELETE FROM t90 WHERE id = 7"
sv_start "$T/sup2.log"
wait_for 60 healthy
ok $? "the pipeline is up again"
grep -q "resuming after $ckpt0" "$T/sup2.log"
ok $? "the capture resumes from the checkpoint, by GTID: $(grep -m1 -o 'resuming after [^ ]*' "$T/sup2.log")"
ok $(pgrep -af -- "capture-mysql -c $T/cfg.yaml --start-pos" | grep -q ";gtid="; echo $?) "... the GTID set on its argv, the password not"
check "every change made while it was down lands" -- my_equal t90 $IX 60 "$SEL"
sleep 1.5
ok $([ "$(metric 'pg2osync_events_total{type="insert"}')" = 10 ] && [ "$(metric 'pg2osync_events_total{type="update"}')" = 1 ] &&
	[ "$(metric 'pg2osync_events_total{type="delete"}')" = 1 ]; echo $?) \
	"nothing replayed: 10 inserts, 1 update, 1 delete streamed after the restart ($(metric 'pg2osync_events_total{type="insert"}'), $(metric 'pg2osync_events_total{type="update"}'), $(metric 'pg2osync_events_total{type="delete"}'))"
ok $(grep -q "needs its initial load\|resumes its initial load" "$T/sup2.log"; [ $? = 1 ]; echo $?) "a finished load is not run again"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains again, exit 0"
ok $(! grep -qF "$MYSQL_PWD" "$T/sup.log" "$T/sup2.log"; echo $?) "no password in any log line"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" "$T/sup2.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
