#!/usr/bin/env bash
# pg2osync reindex and switch-alias on Meilisearch, against a real server:
# no aliases, so a rebuild swaps (POST /swap-indexes) the fresh index with
# the live one.
# Refused while the pipeline streams; stopped, it builds <index>-<seconds>,
# swaps it in - readers' index then holds the table by content, the
# timestamped one what the live one held - and prints the swap back;
# switch-alias swaps back and forth; a swap with a missing index fails as
# a task, clearly, changing nothing; --drop-old deletes the old documents'
# index; the pipeline started again writes into the rebuilt index.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meili_rx
IX=${S}_mrx
N=2000
drop_slot $S
psql_q -c "drop table if exists mrx; create table mrx (id int primary key, name text, n int);
	insert into mrx select g, 'row ' || g, g from generate_series(1, $N) g"
meili_start; ok $? "$MEILI_KIND up"
meili_drop $IX ${IX}_none
METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mrx
sup_start; ok $? "pipeline up"
check "the load lands" -- meili_wait_equal mrx $IX 120

pg2osync reindex -c "$T/cfg.yaml" --table mrx > "$T/r1" 2>&1; rc=$?
sed 's/^/#   /' "$T/r1"
ok $([ $rc = 1 ] && grep -q "the pipeline is streaming (slot '$S' is active" "$T/r1"; echo $?) "refused while the pipeline streams: exit $rc"
kill -TERM $SUP; wait $SUP; ok $? "stopped"

pg2osync reindex -c "$T/cfg.yaml" --table mrx --alias ${S}_other > "$T/r2" 2>&1; rc=$?
ok $([ $rc = 78 ] && grep -q "has no aliases: the rebuilt index is swapped into the section's index '$IX'" "$T/r2"; echo $?) \
	"an alias other than the section's index is refused: exit $rc"

# a document no row accounts for, written by hand: the old index's mark
meili_curl -XPOST -H 'Content-Type: application/json' "$MEILI_URL/indexes/$IX/documents" \
	-d '[{"pg2osync_id":"stray","name":"written by hand"}]' >/dev/null
stray_in() { meili_get "/indexes/$1/documents/stray" | jq -e '.name == "written by hand"'; }
wait_for 60 stray_in $IX; ok $? "the live index holds a stray document"

# (a swap renames the indexes in the whole task history, earlier runs'
# tasks too: the swap tasks counted are those enqueued from here on)
since=$(date -u +%FT%TZ)
pg2osync reindex -c "$T/cfg.yaml" --table mrx --alias $IX > "$T/r3" 2>&1; rc=$?
sed 's/^/#   /' "$T/r3"
old1=$(sed -n "s/^swapped '$IX' and '\([^']*\)'.*/\1/p" "$T/r3")
ok $([ $rc = 0 ] && [[ "$old1" =~ ^${IX}-[0-9]+$ ]] &&
	grep -q "rollback (swaps them back): pg2osync switch-alias --alias $IX --index $old1" "$T/r3"; echo $?) \
	"built and swapped in, the old documents in '$old1', the swap back printed: exit $rc"
check "readers' index holds the table's rows by content (the stray gone)" -- meili_compare mrx $IX
ok $(stray_in $old1 >/dev/null && [ "$(meili_get /indexes/$old1/stats | jq .numberOfDocuments)" = $((N + 1)) ]; echo $?) \
	"'$old1' holds what the live index held"
swaps=$(meili_get "/tasks?statuses=succeeded&types=indexSwap&indexUids=$old1&afterEnqueuedAt=$since&limit=1" | jq .total)
ok $([ "$swaps" = 1 ]; echo $?) "one indexSwap task did it ($swaps)"

pg2osync switch-alias -c "$T/cfg.yaml" --alias $IX --index $old1 > "$T/r4" 2>&1; rc=$?
sed 's/^/#   /' "$T/r4"
ok $([ $rc = 0 ] && stray_in $IX >/dev/null && ! stray_in $old1 >/dev/null; echo $?) "switch-alias swaps back: the old documents are live again, exit $rc"
pg2osync switch-alias -c "$T/cfg.yaml" --alias $IX --index $old1 > /dev/null 2>&1; rc=$?
ok $([ $rc = 0 ]; echo $?) "and forth again: exit $rc"
check "the rebuilt documents are live again" -- meili_compare mrx $IX

pg2osync switch-alias -c "$T/cfg.yaml" --alias $IX --index ${IX}-nope > "$T/r5" 2>&1; rc=$?
sed 's/^/#   /' "$T/r5"
ok $([ $rc = 69 ] && grep -q "swapping '$IX' and '${IX}-nope': the swap task failed: index_not_found: Index \`${IX}-nope\` not found" "$T/r5"; echo $?) \
	"a swap with a missing index fails as a task, named: exit $rc"
check "and changes nothing" -- meili_compare mrx $IX
pg2osync switch-alias -c "$T/cfg.yaml" --alias $IX --index $IX > /dev/null 2>&1; rc=$?
ok $([ $rc = 78 ]; echo $?) "an index swapped with itself is refused: exit $rc"

sleep 1.1
pg2osync reindex -c "$T/cfg.yaml" --table mrx --drop-old > "$T/r6" 2>&1; rc=$?
sed 's/^/#   /' "$T/r6"
old2=$(sed -n "s/^swapped '$IX' and '\([^']*\)'.*/\1/p" "$T/r6")
gone() { [ "$(meili_curl -o /dev/null -w '%{http_code}' "$MEILI_URL/indexes/$1")" = 404 ]; }
ok $([ $rc = 0 ] && [ -n "$old2" ] && [ "$old2" != "$old1" ] && gone $old2 &&
	grep -q "deleted the old documents' index '$old2'" "$T/r6"; echo $?) "--drop-old: '$old2' swapped out and deleted, exit $rc"
check "readers' index holds the table's rows by content" -- meili_compare mrx $IX

# no index to swap with: a section whose index was never created
sed -i "s#^    index: $IX\$#    index: ${IX}_none#" "$T/cfg.yaml"
pg2osync reindex -c "$T/cfg.yaml" --table mrx > "$T/r7" 2>&1; rc=$?
sed 's/^/#   /' "$T/r7"
ok $([ $rc = 1 ] && grep -q "there is no index '${IX}_none' to swap the rebuilt one with" "$T/r7"; echo $?) \
	"no live index to swap with: exit $rc"
sed -i "s#^    index: ${IX}_none\$#    index: $IX#" "$T/cfg.yaml"

psql_q -c "insert into mrx values ($((N + 1)), 'while stopped', 0); delete from mrx where id = 1"
sup_start; ok $? "pipeline up again"
check "what changed while stopped replays into the rebuilt index" -- meili_wait_equal mrx $IX 60
kill -TERM $SUP; wait $SUP
drop_slot $S
done_testing
