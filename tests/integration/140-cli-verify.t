#!/usr/bin/env bash
# pg2osync verify on PostgreSQL: after a document is edited by hand in the
# index, one deleted by hand and an orphan inserted by hand, verify names
# exactly those three keys and exits 1; --repair writes the two back and
# deletes the orphan; verify then exits 0, and the stream still wins over
# the repair's version.
. "$(dirname "$0")/../lib.sh"

S=p2o_verify
IX=${S}_vt
drop_slot $S; os_drop $IX
psql_q -c "drop table if exists vt; create table vt (id int primary key, name text, n int);
	insert into vt select g, 'row ' || g, g * 10 from generate_series(1, 50) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S vt
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"; ok $? "pipeline up"
check "the load lands" -- wait_equal vt $IX 60

pg2osync verify -c "$T/cfg.yaml" > "$T/v0" 2>&1; rc=$?
ok $([ $rc = 0 ] && grep -q "^50 rows, 50 documents: 0 differ, 0 missing, 0 orphans" "$T/v0"; echo $?) \
	"verify of an index equal to its table: exit $rc: $(tail -1 "$T/v0")"

# by hand: an edit, a deletion, an orphan
curl -sS -XPUT "$OS_URL/$IX/_doc/5?refresh=true" -H 'content-type: application/json' \
	-d '{"id":5,"name":"edited by hand","n":50}' >/dev/null
curl -sS -XDELETE "$OS_URL/$IX/_doc/7?refresh=true" >/dev/null
curl -sS -XPUT "$OS_URL/$IX/_doc/999?refresh=true" -H 'content-type: application/json' \
	-d '{"id":999,"name":"orphan","n":0}' >/dev/null
# the checkpoint moves past the edited document's version
ck=$(ckpt_lsn "$T/cfg.yaml")
psql_q -c "insert into vt values (51, 'row 51', 510)"
moved() { [ "$(ckpt_lsn "$T/cfg.yaml")" != "$ck" ]; }
wait_for 30 moved; ok $? "a later row moves the checkpoint"

pg2osync verify -c "$T/cfg.yaml" > "$T/v1" 2>&1; rc=$?
sed 's/^/#   /' "$T/v1"
grep -E '^(differs|missing|orphan): ' "$T/v1" | sort > "$T/keys"
printf 'differs: %s/5\nmissing: %s/7\norphan: %s/999\n' $IX $IX $IX | sort > "$T/want"
ok $([ $rc = 1 ] && diff -q "$T/want" "$T/keys" >/dev/null; echo $?) "verify names exactly the edited, the deleted and the orphan key, exit $rc"

pg2osync verify -c "$T/cfg.yaml" --repair > "$T/v2" 2>&1; rc=$?
sed 's/^/#   /' "$T/v2"
ok $([ $rc = 0 ] && grep -q "^repaired 3 of 3" "$T/v2"; echo $?) "--repair fixes the three, exit $rc"
check "the index equals the table again" -- wait_equal vt $IX 30
pg2osync verify -c "$T/cfg.yaml" > "$T/v3" 2>&1; rc=$?
ok $([ $rc = 0 ]; echo $?) "verify after the repair: exit $rc: $(tail -1 "$T/v3")"

psql_q -c "update vt set name = 'streamed after the repair' where id in (5, 7)"
check "the stream still wins over the repaired documents" -- wait_equal vt $IX 30
pg2osync verify -c "$T/cfg.yaml" --table vt > "$T/v4" 2>&1; rc=$?
ok $([ $rc = 0 ]; echo $?) "verify --table vt: exit $rc"
pg2osync verify -c "$T/cfg.yaml" --table nope > "$T/v5" 2>&1; rc=$?
ok $([ $rc = 64 ]; echo $?) "verify --table of no section: exit $rc"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
