#!/usr/bin/env bash
# MariaDB's compressed binlog events (log_bin_compress=ON): capture-mysql
# reads every statement and rows event zlib-compressed, and writes the
# same frames as from the plain events: inserts, a multi-row insert, an
# update with both images, a delete, a TRUNCATE out of a compressed
# statement, an ALTER counted as drift. The server setting is put back at
# the end.
# Run under tests/servers/run-with.sh --mariadb.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${MYSQL_SOCKET:-}" ]; then echo "1..0 # skip needs the run-with.sh MariaDB"; exit 0; fi

was=$(my_root "SELECT @@global.log_bin_compress, @@global.log_bin_compress_min_len")
trap 'my_root "SET GLOBAL log_bin_compress = $(echo "$was" | cut -f1), GLOBAL log_bin_compress_min_len = $(echo "$was" | cut -f2)"; _cleanup' EXIT
my_sql "DROP TABLE IF EXISTS t69; CREATE TABLE t69 (id int PRIMARY KEY, name varchar(40),
	price decimal(10,2), note text, b binary(4)) DEFAULT CHARSET=utf8mb4"
my_root "SET GLOBAL log_bin_compress = ON, GLOBAL log_bin_compress_min_len = 10"
ok $? "log_bin_compress is on"
my_config "$T/cfg.yaml" t69 t69
cap_start "$T/cap.log" "$T/f" -c "$T/cfg.yaml"
ok $? "capture-mysql starts against a server that compresses its binlog"

my_raw "INSERT INTO t69 VALUES (1, 'lamp', 12.50, REPEAT('compressible ', 60), x'01'),
	(2, 'désk 日本', 0.10, NULL, NULL)"
my_sql "UPDATE t69 SET name = 'lamp 2', note = REPEAT('updated ', 80) WHERE id = 1"
my_sql "DELETE FROM t69 WHERE id = 2"
my_sql "INSERT INTO t69 SELECT seq, CONCAT('bulk ', seq), seq / 4, REPEAT('x', seq), NULL FROM seq_10_to_209"
my_sql "TRUNCATE TABLE t69"
my_sql "ALTER TABLE t69 ADD COLUMN color varchar(10)"
my_sql "INSERT INTO t69 (id, name, color) VALUES (7, 'after', 'red')"
wait_frames 30 "$T/f" '.k=="row" and .new.id==7' 1
ok $? "the last row arrives"
n=$(mariadb-binlog --no-defaults --read-from-remote-server -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" \
	"$(my_sql "SHOW MASTER STATUS" | cut -f1)" 2>/dev/null | grep -c "_compressed" || true)
ok $([ "$n" -ge 5 ]; echo $?) "the server wrote compressed events ($n)"
want='{"id":1,"name":"lamp","price":"12.50","note":"'"$(printf 'compressible %.0s' $(seq 60))"'","b":"AQAAAA=="}'
ok $([ "$(frames "$T/f" | jq -c 'select(.k=="row" and .op=="i" and .new.id==1) | .new')" = "$want" ]; echo $?) \
	"an insert's values, whole, from a compressed rows event"
ok $(frames "$T/f" | jq -se '[.[] | select(.k=="row" and .op=="i" and .new.id==2)][0].new.name == "désk 日本"' > /dev/null; echo $?) \
	"the second row of the same event"
ok $(frames "$T/f" | jq -se '[.[] | select(.k=="row" and .op=="u")][0] | .new.name == "lamp 2" and .old.name == "lamp" and (.new.note | length) == 640' > /dev/null; echo $?) \
	"the update, both images"
ok $(frames "$T/f" | jq -se '[.[] | select(.k=="row" and .op=="d")] | length == 1 and .[0].old.id == 2' > /dev/null; echo $?) \
	"the delete"
ok $([ "$(frame_count "$T/f" '.k=="row" and .op=="i" and .new.id>=10 and .new.id<=209')" = 200 ]; echo $?) \
	"200 rows of one INSERT ... SELECT"
ok $([ "$(frame_count "$T/f" '.k=="truncate" and (.rels | index("p2o.t69"))')" = 1 ]; echo $?) \
	"TRUNCATE from a compressed statement"
ok $([ "$(frame_count "$T/f" '.k=="drift" and (.added | index("color"))')" = 1 ] &&
	frames "$T/f" | jq -se '[.[] | select(.k=="row" and .new.id==7)][0].new.color == "red"' > /dev/null; echo $?) \
	"ALTER from a compressed statement: drift, and the later row has the new column"
cap_stop
ok $? "SIGTERM: exit 0"
[ $_tap_fail -gt 0 ] && tail -n 10 "$T/cap.log" | sed 's/^/#   /'
done_testing
