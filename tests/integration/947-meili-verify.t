#!/usr/bin/env bash
# pg2osync verify and reconcile on Meilisearch, against a real server
# (documents read back with POST /indexes/<uid>/documents/fetch, in
# pages): an index equal to its table verifies, numbers compared by value
# (the server gives a float8's 1e-05 back as 0.00001); a document edited
# by hand, one deleted and an orphan are named exactly, and --repair fixes
# them; reconcile names an orphan and --delete removes it. Meilisearch
# keeps no versions, so a repair reads the rows again after its writes: a
# row the stream changed between the repair's read and its write (held
# there by P2O_TEST_REPAIR_HOLD) is written again as it is now - without
# that the repair's older copy would stay.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meili_vf
IX=${S}_mvt
N=2500
drop_slot $S
psql_q -c "drop table if exists mvt; create table mvt (id int primary key, name text, n int, f float8);
	insert into mvt select g, 'row ' || g, g * 10, g * 1e-5 from generate_series(1, $N) g"
meili_start; ok $? "$MEILI_KIND up"
meili_drop $IX
METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mvt
sup_start; ok $? "pipeline up"
check "the load lands" -- meili_wait_equal mvt $IX 120

pg2osync verify -c "$T/cfg.yaml" > "$T/v0" 2>&1; rc=$?
ok $([ $rc = 0 ] && grep -q "^$N rows, $N documents: 0 differ, 0 missing, 0 orphans" "$T/v0"; echo $?) \
	"verify of an index equal to its table (more than a page of documents, floats by value): exit $rc: $(tail -1 "$T/v0")"

# by hand: an edit, a deletion, an orphan (each task waited for)
task() { meili_wait_task "$(jq -r .taskUid)" > /dev/null; }
meili_curl -XPOST -H 'Content-Type: application/json' "$MEILI_URL/indexes/$IX/documents" \
	-d '[{"pg2osync_id":"5","id":5,"name":"edited by hand","n":50,"f":5e-5}]' | task
meili_curl -XPOST -H 'Content-Type: application/json' "$MEILI_URL/indexes/$IX/documents/delete-batch" \
	-d '["7"]' | task
meili_curl -XPOST -H 'Content-Type: application/json' "$MEILI_URL/indexes/$IX/documents" \
	-d '[{"pg2osync_id":"9999","id":9999,"name":"orphan"}]' | task
# the checkpoint moves past the edited document
ck=$(ckpt_lsn "$T/cfg.yaml")
psql_q -c "insert into mvt values ($((N + 1)), 'row', 0, 0)"
moved() { [ "$(ckpt_lsn "$T/cfg.yaml")" != "$ck" ]; }
wait_for 30 moved; ok $? "a later row moves the checkpoint"

pg2osync verify -c "$T/cfg.yaml" > "$T/v1" 2>&1; rc=$?
sed 's/^/#   /' "$T/v1"
grep -E '^(differs|missing|orphan): ' "$T/v1" | sort > "$T/keys"
printf 'differs: %s/5\nmissing: %s/7\norphan: %s/9999\n' $IX $IX $IX | sort > "$T/want"
ok $([ $rc = 1 ] && diff -q "$T/want" "$T/keys" >/dev/null; echo $?) "verify names exactly the edited, the deleted and the orphan key, exit $rc"

pg2osync verify -c "$T/cfg.yaml" --repair > "$T/v2" 2>&1; rc=$?
sed 's/^/#   /' "$T/v2"
ok $([ $rc = 0 ] && grep -q "^repaired 3 of 3" "$T/v2"; echo $?) "--repair fixes the three, exit $rc"
check "the index equals the table again" -- meili_wait_equal mvt $IX 30
pg2osync verify -c "$T/cfg.yaml" > "$T/v3" 2>&1; rc=$?
ok $([ $rc = 0 ]; echo $?) "verify after the repair: exit $rc: $(tail -1 "$T/v3")"

# a row changed while the repair holds its writes: the stream's write of
# it lands first, then the repair's older copy; the repair reads the row
# again and writes it as it is now
meili_curl -XPOST -H 'Content-Type: application/json' "$MEILI_URL/indexes/$IX/documents/delete-batch" \
	-d '["11"]' | task
P2O_TEST_REPAIR_HOLD=$T/go pg2osync verify -c "$T/cfg.yaml" --repair > "$T/v4" 2>&1 &
VF=$!; cleanup_add $VF
wait_for 120 grep -q "holding the repair's writes" "$T/v4"
ok $? "the repair found the deleted document and holds its write"
psql_q -c "update mvt set name = 'changed during the repair' where id = 11"
streamed() { meili_get "/indexes/$IX/documents/11" | jq -e '.name == "changed during the repair"'; }
wait_for 30 streamed; ok $? "the stream wrote the change first"
touch "$T/go"
wait $VF; rc=$?
sed 's/^/#   /' "$T/v4"
ok $([ $rc = 0 ] && grep -q "^written again (its row changed while the repair wrote it): $IX/11" "$T/v4"; echo $?) \
	"the repair wrote its copy, read the row again and wrote it again, exit $rc"
check "the document holds the change, not the repair's copy" -- meili_compare mvt $IX

# reconcile: an orphan named, then deleted
meili_curl -XPOST -H 'Content-Type: application/json' "$MEILI_URL/indexes/$IX/documents" \
	-d '[{"pg2osync_id":"stray","name":"written by hand"}]' | task
pg2osync reconcile -c "$T/cfg.yaml" > "$T/r1" 2>&1; rc=$?
sed 's/^/#   /' "$T/r1"
ok $([ $rc = 1 ] && grep -q "^orphan: $IX/stray" "$T/r1" && [ "$(grep -c '^orphan:' "$T/r1")" = 1 ]; echo $?) \
	"reconcile names the one orphan, exit $rc"
pg2osync reconcile -c "$T/cfg.yaml" --delete > "$T/r2" 2>&1; rc=$?
sed 's/^/#   /' "$T/r2"
ok $([ $rc = 0 ] && grep -q "^deleted 1 of 1" "$T/r2"; echo $?) "reconcile --delete removes it, exit $rc"
check "the index equals the table" -- meili_compare mvt $IX
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
