#!/usr/bin/env bash
# A kill -9 during the sweep, on MariaDB. The binlog files the checkpoint
# needs purged while the pipeline was down, rows deleted and updated
# meanwhile: the restart reloads the table and then sweeps. Every process
# of the pipeline is killed -9 as soon as the sweep starts. The next start
# finds nothing to load and an idle source - no change, so no checkpoint
# stored to set the sweep off - and must still run the sweep owed; then
# the index equals the table by content, no deleted row resurrected.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

IX=t523_lp
N=${N:-150000}
my_fresh_stream lp
curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/mysql:4242424242%2Fsweep?refresh=true" >/dev/null 2>&1
os_drop $IX
my_raw "DROP TABLE IF EXISTS lp;
CREATE TABLE lp (id int PRIMARY KEY, v int NOT NULL, note varchar(40));
INSERT INTO lp SELECT seq, 0, CONCAT('n', seq) FROM seq_1_to_$N"
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" t523 lp
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"
stop_sup() { kill -TERM "$SUP" 2>/dev/null; wait "$SUP" 2>/dev/null; }
marker() { curl -sS "$OS_URL/.pg2osync_meta/_doc/mysql:4242424242%2Fsweep" | jq -r '._source.pending'; }
STARTED="sweep: every table is loaded again"
DONE="sweep: the documents of rows deleted"

sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "the pipeline is up"
my_equal lp $IX 180 "$SEL" > /dev/null; ok $? "loaded: the index equals the table"
stop_sup

# while down: orphans over the whole key range, then their files purged
my_sql "DELETE FROM lp WHERE id % 50 = 0; UPDATE lp SET v = 1 WHERE id % 77 = 0"
my_root "FLUSH BINARY LOGS"
cur=$(my_sql "SHOW MASTER STATUS" | cut -f1)
wait_for 20 purged_to "$cur"
ok $? "rows deleted and the binlog purged up to $cur while down"

sv_start "$T/sup.log"
kill_at_line "$T/sup.log" "$STARTED" 1 180; rc=$?
ok $([ $rc = 0 ] && [ "$(log_count "$T/sup.log" "$DONE")" = 0 ]; echo $?) \
	"every process killed -9 while the sweep ran (started, not done)"
m=$(marker)
ok $([ "$m" = true ]; echo $?) "the marker of the sweep owed stays (pending: $m)"

# no write to the source from here until the sweep is seen
sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "up again"
sweep_again 60 "$OS_URL/.pg2osync_meta/_doc/mysql:4242424242%2Fsweep" "an idle source with nothing to load"
my_equal lp $IX 60 "$SEL" > /dev/null; ok $? "the index equals the table by content"
n=$(curl -sS "$OS_URL/$IX/_refresh" >/dev/null; curl -sS "$OS_URL/$IX/_count?q=id:50" | jq .count)
ok $([ "$n" = 0 ]; echo $?) "a row deleted while down has no document ($n): nothing resurrected"
stop_sup
[ "$_tap_fail" -eq 0 ] || { diag "supervisor log:"; grep -v ' debug: ' "$T/sup.log" | tail -60 | sed 's/^/# /'; }
os_drop $IX
done_testing
