#!/usr/bin/env bash
# Recovery when the position is gone, on MariaDB: the binlog files the
# checkpoint needs purged while the pipeline was down, with inserts,
# updates and deletes made meanwhile. On restart the supervisor says what
# was lost, starts a new stream at the server's position, loads the table
# again and sweeps the documents of the deleted rows: the index equals the
# table by content. Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

IX=t521_lp
my_fresh_stream lp
curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/mysql:4242424242%2Fsweep?refresh=true" >/dev/null 2>&1
os_drop $IX
my_raw "DROP TABLE IF EXISTS lp;
CREATE TABLE lp (id int PRIMARY KEY, v int NOT NULL, note varchar(40));
INSERT INTO lp SELECT seq, 0, CONCAT('n', seq) FROM seq_1_to_300"
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" t521 lp
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"
stop_sup() { kill -TERM "$SUP" 2>/dev/null; wait "$SUP" 2>/dev/null; }

sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "the pipeline is up"
my_equal lp $IX 60 "$SEL" > /dev/null; ok $? "loaded: the index equals the table"
my_sql "UPDATE lp SET v = 1 WHERE id <= 10"
my_equal lp $IX 30 "$SEL" > /dev/null; ok $? "streaming"
stop_sup
ck0=$(ckpt -c "$T/cfg.yaml" get 2>/dev/null | jq -r '.text // empty')
ok $([ -n "$ck0" ]; echo $?) "a checkpoint is stored ($ck0)"

# while down: changes, then the files they are in purged
my_sql "INSERT INTO lp SELECT seq, 2, CONCAT('new', seq) FROM seq_301_to_350;
UPDATE lp SET v = 3, note = 'upd' WHERE id BETWEEN 20 AND 49;
DELETE FROM lp WHERE id BETWEEN 100 AND 139"
my_root "FLUSH BINARY LOGS"
cur=$(my_sql "SHOW MASTER STATUS" | cut -f1)
wait_for 20 purged_to "$cur"
ok $([ "$(my_sql "SHOW BINARY LOGS" | head -1 | cut -f1)" = "$cur" ]; echo $?) "purged up to $cur"

sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "the pipeline is up again"
grep -qE "purged|is gone" "$T/sup.log" &&
	[ "$(grep -c "the stream's position is gone (capture-mysql exited with 67" "$T/sup.log")" = 1 ]
ok $? "what was lost is said, and the reload in one line"
my_sql "DELETE FROM lp WHERE id BETWEEN 200 AND 204; INSERT INTO lp VALUES (1000, 9, 'during')"
my_equal lp $IX 120 "$SEL" > /dev/null
ok $? "the index equals the table by content: the rows deleted while down are gone"
swept() { grep -q "sweep: the documents of rows deleted while the position was gone are removed" "$T/sup.log"; }
wait_for 60 swept; ok $? "the sweep ran and was recorded"
ok $([ "$(metric pg2osync_full_reloads_total)" = 1 ]; echo $?) "pg2osync_full_reloads_total 1"
stop_sup; sv_start "$T/sup.log"; wait_for 60 healthy
my_sql "UPDATE lp SET v = 5 WHERE id = 1"
my_equal lp $IX 30 "$SEL" > /dev/null; ok $? "a restart resumes the new stream"
ok $([ "$(grep -c "the stream's position is gone (capture-mysql" "$T/sup.log")" = 1 ]; echo $?) "no second reload"
stop_sup
[ "$_tap_fail" -eq 0 ] || { diag "supervisor log:"; sed 's/^/# /' "$T/sup.log" | tail -60; }
os_drop $IX
done_testing
