#!/usr/bin/env bash
# Bad input at the edges: config errors name file:line:key with exit 78,
# wrong credentials exit 77, a table without a key exits 69, and the
# supervisor stops on each with one clear message instead of restarting.
. "$(dirname "$0")/../lib.sh"

printf 'source:\n  url_env: P2O_TEST_URL\n  slott_name: x\ntarget:\n  url: http://127.0.0.1:1\nsync:\n  a:\n    table: a\n' > "$T/bad.yaml"
pg2osync-supervise -c "$T/bad.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 78 ]; echo $?) "unknown key: exit 78 (got $st)"
grep -q "$T/bad.yaml:3:.*slott_name" "$T/out"; ok $? "message names file:line:key: $(head -n 1 "$T/out")"

printf 'source:\n  url_env: P2O_TEST_URL\ntarget:\n  url: http://127.0.0.1:1\nengine:\n  batch_size: lots\nsync:\n  a:\n    table: a\n' > "$T/bad2.yaml"
pg2osync-supervise -c "$T/bad2.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 78 ] && grep -q "bad2.yaml:6:.*batch_size" "$T/out"; echo $?) "wrong type names file:line:key: $(head -n 1 "$T/out")"

S=p2o_cfg
drop_slot $S
psql_q -c "drop table if exists nokey; create table nokey (a int, b text)"
mkconfig "$T/nokey.yaml" $S $S nokey
timeout 60 pg2osync-supervise -c "$T/nokey.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 69 ]; echo $?) "a table without a key stops the supervisor with 69 (got $st)"
grep -q "nokey" "$T/out"; ok $? "and names the table: $(grep -m1 nokey "$T/out")"
ok $([ "$(grep -c 'restarting' "$T/out")" = 0 ]; echo $?) "without restarting"

psql_q -c "drop table if exists okt; create table okt (id int primary key)"
mkconfig "$T/badpw.yaml" $S $S okt
P2O_TEST_URL="postgres://$PGUSER:wrong-password@$PGHOST:$PGPORT/$PGDATABASE" \
	timeout 60 pg2osync-supervise -c "$T/badpw.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 77 ]; echo $?) "wrong password stops with 77 (got $st)"
ok $(! grep -q 'wrong-password' "$T/out"; echo $?) "and does not print the password: $(grep -m1 -i auth "$T/out")"
drop_slot $S
done_testing
