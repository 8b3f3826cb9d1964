#!/usr/bin/env bash
# Two captures with one replica id (source.server_id) on one MariaDB: the
# server ends the older binlog dump when the newer one registers. The
# older capture ends with 75, as for any lost dump, and its one error line
# names the replica id and the likely cause (a second pipeline with the
# same server_id) instead of only the server's words; the newer one goes
# on streaming. Fails when: the older capture hangs, exits with another
# code, or says nothing about a second reader.
# Run under tests/servers/run-with.sh --mariadb.
. "$(dirname "$0")/../mysql-lib.sh"

my_sql "DROP TABLE IF EXISTS t62; CREATE TABLE t62 (id int PRIMARY KEY)"
ok $? "table created"
MY_SERVER_ID=4242420623 my_config "$T/cfg.yaml" t62 t62
cap_start "$T/a.log" "$T/fa" -c "$T/cfg.yaml"
ok $? "the first capture starts its dump"
A=$CAP
cap_start "$T/b.log" "$T/fb" -c "$T/cfg.yaml"
ok $? "a second capture with the same replica id starts its dump"
wait_for 30 sh -c "! kill -0 $A 2>/dev/null"
ok $? "the first capture ends"
wait $A; rc=$?
ok $([ $rc = 75 ]; echo $?) "with 75, a temporary failure ($rc)"
grep -q "error: dump connection lost: another reader started a binlog dump with replica id 4242420623, and the server ended this one; is a second pipeline running with this 'source.server_id'?" "$T/a.log"
ok $? "its error names the replica id and a second pipeline: $(grep -m1 error "$T/a.log" | cut -c1-160)"
ok $([ "$(grep -c 'error:' "$T/a.log")" = 1 ]; echo $?) "one error line"
my_sql "INSERT INTO t62 VALUES (1)"
wait_frames 20 "$T/fb" '.k=="commit"' 1
ok $? "the second capture streams on"
cap_stop; ok $? "the second capture drains and exits 0"
done_testing
