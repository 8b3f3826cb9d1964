#!/usr/bin/env bash
# capture-mysql | shaper | writer, stand-alone, from a real MariaDB 10.11
# into OpenSearch: documents of the expected shapes (decimal fidelity,
# enum, set, bit, binary, dates with fractions, JSON), updates, deletes, a
# key change, a composite key, truncate, an ALTER counted as drift while
# later rows land; no password on any argv or in any log; the captured
# frames replay into an identical index.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

IX=t63_t63_items
CX=t63_t63_comp
for i in $IX $CX t63r_t63_items t63r_t63_comp; do os_drop $i; done
my_sql "DROP TABLE IF EXISTS t63_items, t63_comp;
CREATE TABLE t63_items (id int PRIMARY KEY, name varchar(20),
	price decimal(10,2), e enum('a','b'), s set('x','y','z'), b bit(8),
	vb varbinary(8), dtm datetime(6), ts timestamp(3) NULL, j json,
	big bigint unsigned, f float);
CREATE TABLE t63_comp (a varchar(5), b int, v text, PRIMARY KEY (a, b))"
# a number past a long is what OpenSearch's dynamic mapping refuses: the
# index says what the column is, as a user would
for i in $IX t63r_t63_items; do
	curl -s -XPUT -H 'Content-Type: application/json' "$OS_URL/$i" \
		-d '{"mappings":{"properties":{"big":{"type":"unsigned_long"}}}}' >/dev/null
done
my_config "$T/cfg.yaml" t63 t63_items t63_comp
my_config "$T/replay.yaml" t63r t63_items t63_comp

( capture-mysql -c "$T/cfg.yaml" 2> "$T/cap.log" | tee "$T/frames" |
	shaper -c "$T/cfg.yaml" 2> "$T/shaper.log" |
	writer -c "$T/cfg.yaml" 2> "$T/writer.log" ) &
PIPE=$!
cleanup_add $PIPE
wait_for 30 grep -q "binlog dump" "$T/cap.log"
ok $? "the pipeline runs"
CAP=$(pgrep -f "capture-mysql -c $T/cfg.yaml")

doc() { os_get "/$1/_doc/$2" | jq -cS ._source; }
# wait_doc INDEX ID JSON: until the document is exactly JSON
wait_doc() {
	local want got i
	want=$(echo "$3" | jq -cS .)
	for ((i = 0; i < 150; i++)); do
		got=$(doc "$1" "$2")
		[ "$got" = "$want" ] && return 0
		sleep 0.2
	done
	diag "got:  $got"; diag "want: $want"
	return 1
}
gone() { [ "$(os_get "/$1/_doc/$2" | jq -r .found)" = false ]; }

my_sql "INSERT INTO t63_items VALUES
	(1, 'lamp', 12.50, 'b', 'x,z', b'101', x'00ff',
	 '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.123',
	 '{\"a\": [1, 2], \"b\": {\"c\": null}}', 18446744073709551615, 0.25),
	(2, 'desk', 0.10, 'a', '', b'0', '', '1999-12-31 23:59:59', NULL,
	 '[]', 0, -1.5)"
wait_doc $IX 1 '{"id":1,"name":"lamp","price":"12.50","e":"b","s":["x","z"],"b":5,"vb":"AP8=","dtm":"2024-02-29T13:14:15.123456","ts":"2024-02-29T13:14:15.123Z","j":{"a":[1,2],"b":{"c":null}},"big":18446744073709551615,"f":0.25}'
ok $? "a row of every kind lands with its document shape"
wait_doc $IX 2 '{"id":2,"name":"desk","price":"0.10","e":"a","s":[],"b":0,"vb":"","dtm":"1999-12-31T23:59:59.000000","ts":null,"j":[],"big":0,"f":-1.5}'
ok $? "empty set, empty binary, zero values, NULL"
raw=$(os_get "/$IX/_doc/1")
ok $(echo "$raw" | grep -q '"big":18446744073709551615'; echo $?) "bigint unsigned keeps every digit in the stored document"

my_sql "UPDATE t63_items SET name = 'lamp 2', price = 99999999.99 WHERE id = 1"
wait_doc $IX 1 '{"id":1,"name":"lamp 2","price":"99999999.99","e":"b","s":["x","z"],"b":5,"vb":"AP8=","dtm":"2024-02-29T13:14:15.123456","ts":"2024-02-29T13:14:15.123Z","j":{"a":[1,2],"b":{"c":null}},"big":18446744073709551615,"f":0.25}'
ok $? "an update lands (decimal fidelity)"
my_sql "UPDATE t63_items SET id = 100 WHERE id = 1"
wait_for 30 gone $IX 1
ok $? "a key change removes the old document"
ok $([ "$(doc $IX 100 | jq -r .name)" = "lamp 2" ]; echo $?) "... and writes the new one"
my_sql "DELETE FROM t63_items WHERE id = 2"
wait_for 30 gone $IX 2
ok $? "a delete lands"
my_sql "INSERT INTO t63_comp VALUES ('x|y', 1, 'pipe'), ('a', 2, 'plain')"
wait_doc $CX 'x%257Cy%7C1' '{"a":"x|y","b":1,"v":"pipe"}'
ok $? "a composite key: the id joins the escaped parts"

my_sql "TRUNCATE TABLE t63_items"
wait_for 30 bash -c "[ \$(curl -s -XPOST '$OS_URL/$IX/_refresh' >/dev/null; curl -s '$OS_URL/$IX/_count' | jq .count) = 0 ]"
ok $? "a truncate empties the index"
my_sql "INSERT INTO t63_items (id, name) VALUES (7, 'after truncate')"
wait_for 30 bash -c "curl -s '$OS_URL/$IX/_doc/7' | jq -e .found"
ok $? "a row after the truncate lands"

my_sql "ALTER TABLE t63_items ADD COLUMN color varchar(10)"
wait_for 30 grep -q "table 'p2o.t63_items' changed shape: added 'color'" "$T/shaper.log"
ok $? "ALTER ADD COLUMN reaches the shaper as drift"
my_sql "INSERT INTO t63_items (id, name, color) VALUES (8, 'red one', 'red')"
wait_for 30 bash -c "curl -s '$OS_URL/$IX/_doc/8' | jq -e '._source.color == \"red\"'"
ok $? "rows after the ALTER land with the new column"

leak=0
for p in $(pgrep -f "$T/") $CAP; do
	tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -qF "$MYSQL_PWD" && leak=1
done
ok $([ -n "$CAP" ] && [ $leak = 0 ]; echo $?) "no password on any process's argv"

kill -TERM $CAP
wait_for 60 bash -c "! kill -0 $PIPE"
wait $PIPE
ok $? "SIGTERM drains the pipeline, which exits 0"
ok $(! grep -qF "$MYSQL_PWD" "$T/cap.log" "$T/shaper.log" "$T/writer.log"; echo $?) "no password in any log"

# the frames file replays into another index, identically
shaper -c "$T/replay.yaml" < "$T/frames" 2> "$T/rshaper.log" | writer -c "$T/replay.yaml" 2> "$T/rwriter.log"
ok $? "the captured frames replay"
dump() {
	curl -s -XPOST "$OS_URL/$1/_refresh" >/dev/null
	curl -s "$OS_URL/$1/_search?size=1000" | jq -cS '[.hits.hits[] | {id: ._id, s: ._source}] | sort_by(.id)'
}
for pair in "$IX t63r_t63_items" "$CX t63r_t63_comp"; do
	set -- $pair
	a=$(dump $1); b=$(dump $2)
	if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "[]" ]; then ok 0 "replay: $2 equals $1"
	else ok 1 "replay: $2 equals $1"; diag "$a"; diag "$b"; fi
done
[ $_tap_fail -gt 0 ] && for l in cap shaper writer; do diag "$l log:"; tail -n 8 "$T/$l.log" | sed 's/^/#   /'; done
done_testing
