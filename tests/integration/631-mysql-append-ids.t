#!/usr/bin/env bash
# A keyless MariaDB table declared append_only is streamed by
# capture-mysql (rows with "key": []) and loaded (read in one statement),
# each row filed under the sha256 of its content; a PostgreSQL table with
# the same rows, loaded and streamed the same way, gets the same document
# ids: a row's id is its values, not its source. An UPDATE of the keyless
# MariaDB table stops the pipeline, naming the table, rather than being
# missed. Run under tests/servers/run-with.sh --pg --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ] || [ -z "$PGHOST" ]; then
	echo "1..0 # skip needs --pg --mariadb --os"; exit 0
fi

S=p2o_ap24
MY_SERVER_ID=4224
export P2O_TEST_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE"
drop_slot $S; drop_loads $S ap24
my_fresh_stream ap24
os_drop ap24_pg; os_drop ap24_my
before="('2024-01-05 10:00:00', 'ann', 12.50, 1), ('2024-01-05 10:00:00', 'ann', 12.50, 1),
	('2024-01-06 11:30:00', 'bob', 0.10, NULL), ('2024-01-07 00:00:00', NULL, NULL, -3)"
after="('2024-02-01 08:00:00', 'cy', 99.99, 7), ('2024-01-05 10:00:00', 'ann', 12.50, 1),
	('2024-02-02 09:15:30', 'dee ☃', 1.00, 0)"
psql_q -c "drop table if exists ap24" \
	-c "create table ap24 (at timestamp, who varchar(20), amount numeric(10,2), n int)" \
	-c "insert into ap24 values $before"
my_raw "DROP TABLE IF EXISTS ap24;
CREATE TABLE ap24 (at DATETIME, who VARCHAR(20), amount DECIMAL(10,2), n INT) DEFAULT CHARSET utf8mb4;
INSERT INTO ap24 VALUES $before"

METRICS_PORT=$(free_port)
mkhead "$T/pg.yaml" $S
printf 'sync:\n  ap24:\n    table: ap24\n    index: ap24_pg\n    append_only: true\n' >> "$T/pg.yaml"
my_config "$T/my.yaml" ap24 ap24
sed -i 's/^    index: ap24_ap24$/    index: ap24_my\n    append_only: true/' "$T/my.yaml"
PG_PORT=$METRICS_PORT
MY_PORT=$(free_port)
sed -i "s/127.0.0.1:$METRICS_PORT/127.0.0.1:$MY_PORT/" "$T/my.yaml"

pg2osync-supervise -c "$T/pg.yaml" > "$T/pg.log" 2>&1 &
PGSUP=$!; cleanup_add $PGSUP
pg2osync-supervise -c "$T/my.yaml" > "$T/my.log" 2>&1 &
MYSUP=$!; cleanup_add $MYSUP
wait_for 60 curl -sf "http://127.0.0.1:$PG_PORT/ready"
ok $? "the PostgreSQL pipeline is up"
wait_for 60 curl -sf "http://127.0.0.1:$MY_PORT/ready"
ok $? "the MariaDB pipeline is up with a keyless append_only table (refused before)"

ids() {	# ids INDEX -> the sorted document ids
	curl -sS -XPOST "$OS_URL/$1/_refresh" >/dev/null 2>&1
	curl -sS "$OS_URL/$1/_search?size=100" | jq -r '.hits.hits[]._id' | sort | tr '\n' ' '
}
wait_for 60 eval '[ "$(os_count ap24_pg)" = 3 ] && [ "$(os_count ap24_my)" = 3 ]'
ok $? "both loads: 3 documents of 4 rows (two identical rows are one)"
a=$(ids ap24_pg); b=$(ids ap24_my)
ok $([ -n "$a" ] && [ "$a" = "$b" ]; echo $?) "loaded: the same ids from both sources ($a)"
want=$(printf '%s' '{"amount":"12.50","at":"2024-01-05T10:00:00","n":1,"who":"ann"}' | sha256sum | cut -c1-64)
ok $(echo "$a" | grep -q "$want"; echo $?) "the sha256 of the row's canonical JSON ($want)"

psql_q -c "insert into ap24 values $after"
my_raw "INSERT INTO ap24 VALUES $after"
wait_for 60 eval '[ "$(os_count ap24_pg)" = 5 ] && [ "$(os_count ap24_my)" = 5 ]'
ok $? "both streams: 5 documents (the repeated row is the loaded one)"
a=$(ids ap24_pg); b=$(ids ap24_my)
ok $([ "$a" = "$b" ]; echo $?) "streamed: the same ids from both sources ($b)"
src=$(curl -sS "$OS_URL/ap24_my/_doc/$want" | jq -c ._source)
ok $([ "$src" = "$(curl -sS "$OS_URL/ap24_pg/_doc/$want" | jq -c ._source)" ]; echo $?) \
	"and the same document ($src)"
my_raw "UPDATE ap24 SET n = 2 WHERE who = 'bob'"
wait_for 60 grep -q "table 'p2o.ap24' is append_only, and an UPDATE arrived" "$T/my.log"
ok $? "an UPDATE of the keyless table stops the MariaDB pipeline, naming it"
kill -TERM $PGSUP $MYSUP 2>/dev/null; wait $PGSUP $MYSUP 2>/dev/null
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/pg.log" "$T/my.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
psql_q -c "drop table ap24"
my_sql "DROP TABLE ap24"
done_testing
