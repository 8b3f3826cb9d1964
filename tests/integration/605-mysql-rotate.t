#!/usr/bin/env bash
# The binary log moves to a new file under the capture: FLUSH BINARY LOGS
# while it streams (the server sends the old file's ROTATE, then an
# artificial one naming the new file, then the new file's FORMAT
# DESCRIPTION), and a capture that starts files behind and catches up
# across several files in one dump. Every row lands; the checkpoint
# names the newest file.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

IX=t65_t65
os_drop $IX
my_fresh_stream t65
my_sql "DROP TABLE IF EXISTS t65; CREATE TABLE t65 (id int PRIMARY KEY, v int NOT NULL, note varchar(40))"
my_config "$T/cfg.yaml" t65 t65
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"

( capture-mysql -c "$T/cfg.yaml" 2> "$T/cap.log" |
	shaper -c "$T/cfg.yaml" 2> "$T/shaper.log" |
	writer -c "$T/cfg.yaml" 2> "$T/writer.log" ) &
PIPE=$!
cleanup_add $PIPE
wait_for 30 grep -q "binlog dump" "$T/cap.log"
ok $? "the pipeline streams"
start=$(my_sql "SHOW MASTER STATUS" | cut -f1)

# live: rows, a new file, rows, three new files in a row, rows
for round in 1 2 3 4; do
	my_sql "INSERT INTO t65 SELECT seq, $round, MD5(seq) FROM seq_$((round * 100 - 99))_to_$((round * 100))"
	my_root "FLUSH BINARY LOGS"
	[ $round = 3 ] && my_root "FLUSH BINARY LOGS; FLUSH BINARY LOGS"
done
my_sql "UPDATE t65 SET v = v + 10 WHERE id % 7 = 0; DELETE FROM t65 WHERE id % 11 = 0"
check "every row across five new files lands" -- my_equal t65 $IX 30 "$SEL"
kill -0 $PIPE 2>/dev/null
ok $? "the capture is still streaming (log: $(grep -c . "$T/cap.log") lines)"
grep -E "error" "$T/cap.log" | sed 's/^/#   /'
pkill -TERM -f "capture-mysql -c $T/cfg.yaml"
wait $PIPE 2>/dev/null

# catching up: the same rows read again from the first file, through
# every file since, in one dump
os_drop $IX
cap_start "$T/cap2.log" "$T/frames" -c "$T/cfg.yaml" --start-pos "$start:4"
ok $? "a dump from $start, $(my_sql "SHOW BINARY LOGS" | wc -l) files on the server"
last=$(my_sql "SHOW MASTER STATUS" | cut -f1)
my_sql "INSERT INTO t65 VALUES (1000, 1, 'after')"
wait_for 30 grep -q '"after":{[^}]*"id":1000\|"id":1000' "$T/frames"
ok $? "the row written after the catch-up arrives"
kill -0 $CAP 2>/dev/null
ok $? "the capture crossed every file (log: $(grep -E 'error' "$T/cap2.log" | head -1))"
cap_stop
positions=$(frames "$T/frames" | jq -r 'select(.k == "commit") | .text' 2>/dev/null | sed 's/:.*//' | sort -u | tr '\n' ' ')
diag "files named by positions: $positions"
echo "$positions" | grep -q "$last"
ok $? "positions name the newest file $last"
done_testing
