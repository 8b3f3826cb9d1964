#!/usr/bin/env bash
# pg2osync status on MariaDB: the checkpoint against SHOW MASTER STATUS
# (the bytes between them), whether the binlog file it resumes from is
# still on the server (a purged one: exit 1, said so), --caught-up with the
# pipeline running and stopped, --json, and --max-retained-mb and
# drop-slot refused (a MySQL source has no slot). Run under
# tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"

export MY_SERVER_ID=4218
my_sql "DROP TABLE IF EXISTS t18; CREATE TABLE t18 (id int PRIMARY KEY, v varchar(40));
	INSERT INTO t18 VALUES (1, 'a'), (2, 'b')"
os_drop t18_t18
my_fresh_stream t18
METRICS_PORT=$(free_port) my_config "$T/cfg.yaml" t18 t18
pg2osync status -c "$T/cfg.yaml" > "$T/out" 2>&1
ok $([ $? = 0 ] && grep -q '^checkpoint  none stored' "$T/out"; echo $?) "before the first run: no checkpoint"
pg2osync run -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!
cleanup_add $SUP
loaded() { [ "$(os_count t18_t18)" = 2 ]; }
wait_for 60 loaded
ok $? "the pipeline loads the table"
my_sql "INSERT INTO t18 SELECT seq, 'burst' FROM seq_3_to_3000"
pg2osync status -c "$T/cfg.yaml" --caught-up --timeout 30 > "$T/out" 2>&1
st=$?
ok $([ $st = 0 ]; echo $?) "--caught-up after a burst of writes: 0 (exit $st)"
pg2osync status -c "$T/cfg.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
file=$(my_sql "SHOW MASTER STATUS" | cut -f1)
ok $([ $st = 0 ] && grep -q "^source      MariaDB, binlog at $file:" "$T/out" &&
	grep -qE "^checkpoint  $file:[0-9]+.*behind; binlog file '$file' is still on the server" "$T/out"; echo $?) "the checkpoint against SHOW MASTER STATUS, its file still there"
pg2osync status -c "$T/cfg.yaml" --json > "$T/json"
jq -e '.source == "mysql" and .checkpoint.file_exists == true and (.checkpoint.lag_bytes | type) == "number"' "$T/json" > /dev/null
ok $? "--json says the same"
kill -TERM $SUP; wait $SUP
my_sql "INSERT INTO t18 VALUES (5000, 'after the stop')"
pg2osync status -c "$T/cfg.yaml" --caught-up --timeout 3 > /dev/null 2>&1
ok $([ $? = 1 ]; echo $?) "--caught-up with the pipeline stopped: 1"
pg2osync status -c "$T/cfg.yaml" --max-retained-mb 10 > /dev/null 2> "$T/err"
ok $([ $? = 64 ] && grep -q 'no slot' "$T/err"; echo $?) "--max-retained-mb on MySQL: a usage error, no slot to measure"
pg2osync drop-slot -c "$T/cfg.yaml" > /dev/null 2> "$T/err"
ok $([ $? = 64 ] && grep -q "a MySQL source has no slot" "$T/err"; echo $?) "drop-slot on MySQL: a usage error, no slot to drop"

# the file the checkpoint needs, purged
my_root "FLUSH BINARY LOGS"
cur=$(my_sql "SHOW MASTER STATUS" | cut -f1)
wait_for 20 purged_to "$cur"
pg2osync status -c "$T/cfg.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 1 ] && grep -q "binlog file '$file' is no longer on the server (purged): the stream cannot resume from it" "$T/out"; echo $?) "a purged binlog file: exit 1, said so (exit $st)"
pg2osync status -c "$T/cfg.yaml" --json | jq -e '.checkpoint.file_exists == false' > /dev/null
ok $? "... and in --json"
done_testing
