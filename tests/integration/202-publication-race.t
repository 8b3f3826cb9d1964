#!/usr/bin/env bash
# The publication created by someone else between the capture's look and
# its CREATE PUBLICATION (found by make chaos, seed 2030: a capture killed
# by kill -9 while its CREATE PUBLICATION was running; the server finished
# the statement, and the next capture, which had found no publication,
# failed on "already exists" with exit 69, and the supervisor stopped for
# good). Here a session holds an uncommitted CREATE PUBLICATION of the same
# name while the pipeline starts, and commits it once the capture waits on
# it. The capture must take "already exists" as temporary: the next start
# finds the publication, checks it and streams.
. "$(dirname "$0")/../lib.sh"

S=p2o_pubrace
drop_slot $S; os_drop ${S}_pr
psql_q -c "drop table if exists pr; create table pr (id int primary key, v int);
	insert into pr select g, g from generate_series(1, 100) g"
psql_q -c "begin; create publication $S for table pr with (publish_via_partition_root = true);
	select pg_sleep(4); commit" > /dev/null &
HOLD=$!; cleanup_add $HOLD
sleep 1
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S pr
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait $HOLD
ok $? "another session created the publication while the capture was creating it"
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "the pipeline comes up: $(grep -m1 'already exists' "$T/sup.log" | cut -c1-120)"
kill -0 $SUP 2>/dev/null; ok $? "the supervisor did not stop"
check "the rows land" -- wait_equal pr ${S}_pr 60
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 20 | sed 's/^/#   /'; }
drop_slot $S
done_testing
