#!/usr/bin/env bash
# pg2osync reindex on MariaDB: refused while the pipeline streams (the
# binlog dump thread of the source's user); stopped, it builds the fresh
# index, moves the alias, and the alias resolves to the table's rows by
# content. Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

export MY_SERVER_ID=146146
IX=t146_t146
A=t146_live
my_fresh_stream t146
for i in $(curl -sS "$OS_URL/_cat/indices/${IX}*?h=index"); do os_drop $i; done
curl -sS -XDELETE "$OS_URL/_alias/$A" >/dev/null 2>&1
my_raw "DROP TABLE IF EXISTS t146; CREATE TABLE t146 (id int PRIMARY KEY, v int, note varchar(40));
	INSERT INTO t146 SELECT seq, 1, CONCAT('row ', seq) FROM seq_1_to_5000"
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" t146 t146
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"
sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "the pipeline is up"
check "the load lands" -- my_equal t146 $IX 120 "$SEL"
pg2osync reindex -c "$T/cfg.yaml" --table t146 --alias $A > "$T/r1" 2>&1; rc=$?
sed 's/^/#   /' "$T/r1"
ok $([ $rc = 1 ] && grep -q "the pipeline is streaming" "$T/r1"; echo $?) "refused while the pipeline streams: exit $rc"
kill -TERM $SUP; wait $SUP; ok $? "stopped"
# the server ends the old dump thread once it notices its client is gone
no_dump() { [ "$(my_raw "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")" = 0 ]; }
wait_for 60 no_dump; ok $? "the server ended the binlog dump thread"
pg2osync reindex -c "$T/cfg.yaml" --table t146 --alias $A > "$T/r2" 2>&1; rc=$?
sed 's/^/#   /' "$T/r2"
new=$(curl -sS "$OS_URL/_alias/$A" | jq -r 'keys | join(",")')
ok $([ $rc = 0 ] && [[ "$new" =~ ^${IX}-[0-9]+$ ]]; echo $?) "built, the alias names '$new': exit $rc"
check "the alias resolves to the table's rows by content" -- my_compare t146 $A "$SEL"
for i in $(curl -sS "$OS_URL/_cat/indices/${IX}*?h=index"); do os_drop $i; done
done_testing
