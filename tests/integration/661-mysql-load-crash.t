#!/usr/bin/env bash
# The MariaDB initial load beside the stream, killed: 150,000 rows in
# chunks of 50,000; kill -9 of every process once a chunk is recorded;
# while it is down, rows are deleted, inserted and updated; after the
# restart, changes to rows the copy has not reached yet, then kill -9 of
# the loader alone in the chunks left. The index must equal the table by
# content: deleted rows stay absent, updates win over the copy, the load
# says each time that it resumed after a recorded chunk.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

IX=t92_t92
my_fresh_stream t92
os_drop $IX
my_sql "DROP TABLE IF EXISTS t92; CREATE TABLE t92 (id int PRIMARY KEY, title varchar(40),
	n decimal(12,2), at datetime);
	INSERT INTO t92 SELECT seq, CONCAT('row ', seq), seq / 7, '2024-01-01' + INTERVAL seq MINUTE
	FROM seq_1_to_150000"
ok $? "150,000 rows"
METRICS_PORT=$(free_port)
RECONNECT_MAX=20 my_config "$T/cfg.yaml" t92 t92
SEL="JSON_OBJECT('id', id, 'title', title, 'n', CAST(n AS char), 'at', DATE_FORMAT(at, '%Y-%m-%dT%H:%i:%s'))"

sv_start "$T/sup.log"
chunk_done() { [ "$(metric 'pg2osync_load_ranges_done{table="p2o.t92"}')" -ge 1 ] 2>/dev/null; }
wait_for 180 chunk_done
ok $? "a chunk is recorded ($(metric 'pg2osync_load_ranges_done{table="p2o.t92"}') of $(metric 'pg2osync_load_ranges{table="p2o.t92"}'))"
pkill -KILL -f -- "-c $T/cfg.yaml"
wait $SUP 2>/dev/null
sleep 1
ok $(pgrep -f -- "-c $T/cfg.yaml" >/dev/null; [ $? = 1 ]; echo $?) "every process is gone"
my_sql "DELETE FROM t92 WHERE id IN (3, 120003); INSERT INTO t92 VALUES (150001, 'inserted while down', 1, '2024-06-01');
	UPDATE t92 SET title = 'updated while down' WHERE id IN (5, 140005)"
sv_start "$T/sup.log"
sleep 1
my_sql "UPDATE t92 SET title = 'updated after restart' WHERE id = 149990; DELETE FROM t92 WHERE id = 149999"
resumed() { grep -c "loader: info: resuming 'p2o.t92' after chunk [1-9]" "$T/sup.log"; }
wait_for 120 eval '[ "$(resumed)" -ge 1 ]'
ok $? "the log says where it resumed: $(grep -m1 -o "resuming 'p2o.t92'[^\"]*" "$T/sup.log")"
# the loader alone, in the middle of the chunks left
pid=$(pgrep -f "/loader -c $T/cfg.yaml" | head -n 1)
ok $([ -n "$pid" ] && kill -KILL "$pid"; echo $?) "the loader alone is killed while it loads (${pid:-not running})"
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 300 load_done
ok $? "the load finished after the restarts"
ok $([ "$(resumed)" -ge 2 ]; echo $?) "the killed loader's successor resumed from a recorded chunk too: $(grep -o "resuming 'p2o.t92'[^\"]*" "$T/sup.log" | tail -n 1)"
check "the index equals the table, every document" -- my_equal t92 $IX 120 "$SEL"
for id in 3 120003 149999; do
	ok $([ "$(os_get /$IX/_doc/$id | jq -r .found)" = false ]; echo $?) "deleted row $id stays absent"
done
ok $([ "$(os_get /$IX/_doc/149990 | jq -r ._source.title)" = "updated after restart" ]; echo $?) \
	"an update the copy had not reached wins over the copy"
ok $([ "$(os_get /$IX/_doc/140005 | jq -r ._source.title)" = "updated while down" ] &&
	[ "$(os_get /$IX/_doc/5 | jq -r ._source.title)" = "updated while down" ]; echo $?) \
	"updates made while everything was down win, before and after the recorded chunk"
kill -TERM $SUP; wait $SUP
ok $? "drained, exit 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
