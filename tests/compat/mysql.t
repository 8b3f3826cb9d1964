#!/usr/bin/env bash
# The core scenarios on one MySQL or MariaDB server, whichever
# tests/servers/run-with.sh --mariadb[=VERSION] or --mysql[=VERSION]
# started (the compatibility lane runs it on MariaDB 11.8 and MySQL 9.7;
# it passes on 10.11 too). Each TAP line's description starts with the
# scenario it belongs to, as the README's compatibility table names them
# (tests/compat/table.sh reads them):
#   load: 20,000 rows loaded while a client upserts and deletes across
#     them the whole time;
#   crud: inserts, updates and deletes of the binary and JSON types
#     (decimal as text, enum, set, bit, varbinary, datetime(6),
#     timestamp(3), JSON, bigint unsigned, double), a JSON_SET;
#   key change: a primary key update moves the document;
#   truncate: the index is emptied, and rows after it land;
#   kill -9: every process of the pipeline killed three times under a
#     client's writes, each time brought back;
#   auth (MySQL only): a caching_sha2_password account's first connection
#     without TLS (full authentication through the server's RSA key) and
#     over TLS both stream; a wrong password is refused with exit 77;
#   equal: after each scenario the index equals the table by content, and
#     a drain at the end exits 0.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

V=$(my_sql "SELECT VERSION()")
FLAVOR=${MYSQL_SERVER:-mariadb}
ENGINE=$([ "$FLAVOR" = mysql ] && echo MySQL || echo MariaDB)
diag "compat: $ENGINE ${V%% *}"	# "11.8.3-MariaDB-… from Debian-log": the words after the version would name a target (table.sh)
IX=cmp_items
MY_SERVER_ID=4242424301
my_fresh_stream items
os_drop $IX
my_sql "DROP TABLE IF EXISTS items, digits;
CREATE TABLE digits (d int PRIMARY KEY);
INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
CREATE TABLE items (id int PRIMARY KEY, v int, note varchar(40), price decimal(20,4),
	e enum('a','b'), s set('x','y','z'), b bit(8), vb varbinary(16), dtm datetime(6),
	ts timestamp(3) NULL, j json, big bigint unsigned, f double);
INSERT INTO items SELECT n, 1, LEFT(SHA2(n, 256), 32), n / 7, IF(n % 2, 'a', 'b'), IF(n % 3, 'x,z', ''), n % 256,
	UNHEX(LEFT(SHA2(n, 256), 32)), '2024-01-01' + INTERVAL n MINUTE, '2024-01-01 00:00:00.5' + INTERVAL n SECOND,
	JSON_OBJECT('n', n, 'odd', n % 2 = 1, 'l', JSON_ARRAY(CONCAT('n', n), 'x')), n * 1000003, n / 3
	FROM (SELECT a.d * 10000 + b.d * 1000 + c.d * 100 + e.d * 10 + g.d + 1 AS n
		FROM digits a, digits b, digits c, digits e, digits g) k WHERE n <= 20000"
ok $? "load: 20,000 rows on $ENGINE $V"
# each row as the pipeline documents it (capture-mysql/README.md): decimal
# as text, a set as an array, bit as a number, binary in base64,
# datetime(6) with six digits, timestamp(3) in UTC with three and Z
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note, 'price', CAST(price AS CHAR), 'e', e,
	's', JSON_EXTRACT(IF(s = '', '[]', CONCAT('[\"', REPLACE(s, ',', '\",\"'), '\"]')), '\$'),
	'b', b + 0, 'vb', TO_BASE64(vb), 'dtm', DATE_FORMAT(dtm, '%Y-%m-%dT%H:%i:%s.%f'),
	'ts', CONCAT(LEFT(DATE_FORMAT(ts, '%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z'),
	'j', JSON_EXTRACT(j, '\$'), 'big', big, 'f', f)"

# a bigint unsigned past a long is what OpenSearch's dynamic mapping
# refuses: the index says what the column is, as a user would
curl -sS -XPUT -H 'Content-Type: application/json' "$OS_URL/$IX" \
	-d '{"mappings":{"properties":{"big":{"type":"unsigned_long"}}}}' >/dev/null
METRICS_PORT=$(free_port)
RECONNECT_MAX=50 my_config "$T/cfg.yaml" cmp items
sv_start "$T/sup.log"
wait_for 60 grep -q "pipeline up" "$T/sup.log"
ok $? "load: the pipeline is up, loading"
my_writer items 21000
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 300 load_done
ok $? "load: the load finished beside a client's writes"
my_writer_stop
check "load: the index equals the table" -- my_equal items $IX 120 "$SEL"

my_sql "INSERT INTO items VALUES
	(30001, 7, 'every kind', 99999999.9999, 'b', 'x,y,z', b'10000001', x'00ff10',
	 '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.123',
	 '{\"a\": [1.5, 2.5], \"t\": \"s\", \"b\": {\"c\": null, \"d\": true}, \"u\": \"\\\\u00e9\"}',
	 18446744073709551615, -1.25e-7),
	(30002, NULL, '', 0, NULL, '', b'0', '', '1999-12-31 23:59:59', NULL, '[]', 0, 0);
UPDATE items SET note = 'updated', e = 'a', j = JSON_SET(j, '\$.n', 99, '\$.m', 'new') WHERE id BETWEEN 10 AND 20;
DELETE FROM items WHERE id BETWEEN 100 AND 110"
check "crud: inserts, updates and deletes of the binary and JSON types land" -- my_equal items $IX 30 "$SEL"
raw=$(os_get "/$IX/_doc/30001")
got=$(echo "$raw" | jq -c '._source | [.price, .s, .b, .vb, .dtm, .ts, .j.b]')
ok $([ "$got" = '["99999999.9999",["x","y","z"],129,"AP8Q","2024-02-29T13:14:15.123456","2024-02-29T13:14:15.123Z",{"c":null,"d":true}]' ]; echo $?) \
	"crud: decimal, set, bit, varbinary, datetime, timestamp and JSON as documented ($got)"
# jq reads numbers as doubles: the stored text says whether every digit is kept
ok $(echo "$raw" | grep -q '"big":18446744073709551615[,}]'; echo $?) "crud: bigint unsigned keeps every digit"

my_sql "UPDATE items SET id = 40000 WHERE id = 30001"
check "key change: the document moves" -- my_equal items $IX 30 "$SEL"
ok $([ "$(os_get "/$IX/_doc/30001" | jq -r .found)" = false ]; echo $?) "key change: the old id is gone"

my_sql "TRUNCATE TABLE items"
# the clear is a delete by query, which a busy node takes its time over
check "truncate: the index is emptied" -- my_equal items $IX 90 "$SEL"
my_sql "INSERT INTO items (id, v, note, j) SELECT d + 1, d, 'after', JSON_OBJECT('n', d) FROM digits"
check "truncate: rows after it land" -- my_equal items $IX 30 "$SEL"

my_writer items 4000
sleep 1
kill_rounds 3
ok $([ $KILL_UP = 3 ]; echo $?) "kill -9: every process killed 3 times under writes, the pipeline back each time ($KILL_UP)"
n=$(my_sql "SELECT COUNT(*) FROM items")
my_writer_stop
ok $([ "$n" -gt 100 ]; echo $?) "kill -9: the client wrote meanwhile ($n rows)"
check "kill -9: the index equals the table" -- my_equal items $IX 120 "$SEL"

kill -TERM $SUP
wait $SUP; st=$?
ok $st "equal: SIGTERM drains, exit 0 (got $st)"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v 'TOAST' "$T/sup.log" | tail -n 40 | sed 's/^/#   /'; }

# caching_sha2_password, MySQL's default: the server keeps a cache of
# accounts that authenticated; FLUSH PRIVILEGES empties it, so the next
# connection is a first one, authenticated in full: over plaintext the
# password goes encrypted with the server's RSA key, over TLS inside the
# session
if [ "$FLAVOR" != mysql ]; then
	skip "auth: caching_sha2_password is MySQL's ($ENGINE $V)"
else
	SPW=sha2-$RANDOM-secret
	my_root "DROP USER IF EXISTS 'p2o_sha2'@'127.0.0.1';
		CREATE USER 'p2o_sha2'@'127.0.0.1' IDENTIFIED WITH caching_sha2_password BY '$SPW';
		GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'p2o_sha2'@'127.0.0.1'"
	ok $? "auth: an account with caching_sha2_password"
	# try WANT DESC PASSWORD SSLMODE: capture-mysql alone; WANT is plain,
	# tls or an exit code
	try() {
		local want=$1 desc=$2 pid st tls
		my_root "FLUSH PRIVILEGES"
		printf 'source:\n  url_env: P2O_SHA2_URL\n  server_id: 4242424302\n  reconnect_max: 0\n  sslmode: %s\ntarget:\n  url: %s\nsync:\n  items:\n    table: %s.items\n    index: cmp_auth\n' \
			"$4" "$OS_URL" "$MYSQL_DB" > "$T/auth.yaml"
		P2O_SHA2_URL="mysql://p2o_sha2:$3@127.0.0.1:$MYSQL_TCP_PORT/$MYSQL_DB" \
			capture-mysql -c "$T/auth.yaml" > /dev/null 2> "$T/auth.log" &
		pid=$!; cleanup_add $pid
		for _ in $(seq 300); do
			grep -q "binlog dump" "$T/auth.log" && break
			kill -0 $pid 2>/dev/null || break
			sleep 0.1
		done
		if grep -q "binlog dump" "$T/auth.log"; then
			kill -TERM $pid; wait $pid
			tls=plain; grep -q "dump connection .*, TLS)" "$T/auth.log" && tls=tls
			ok $([ "$want" = $tls ]; echo $?) "auth: $desc streams ($tls)"
		else
			wait $pid; st=$?
			ok $([ "$want" = "$st" ]; echo $?) "auth: $desc: exit $st: $(grep -m1 error "$T/auth.log" | cut -c1-160)"
		fi
		ok $(! grep -qF "$3" "$T/auth.log"; echo $?) "auth: $desc: the password is in no log line"
	}
	try plain "a first connection without TLS (sslmode disable)" "$SPW" disable
	try tls "a first connection over TLS (sslmode require)" "$SPW" require
	try 77 "a wrong password" "not-$SPW" disable
	my_root "DROP USER 'p2o_sha2'@'127.0.0.1'"
fi
done_testing
