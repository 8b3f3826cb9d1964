#!/usr/bin/env bash
# Meilisearch keeps up, against a real server (the issue's scenario: a
# real server takes 0.5 to 2 s a batch of tasks, which the contract server
# hid). One client commits 1,000 transactions back to back, each inserting
# one row, updating one and deleting one: every change is in the index
# within 30 s of the last commit (the time is reported). Then 1,000 more
# while every process of the pipeline is killed with -9, twice: once it is
# up again the index equals the table by content.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meilikeep
N=${P2O_KEEPUP_TXNS:-1000}
WAIT=${P2O_KEEPUP_WAIT:-30}
drop_slot $S
psql_q -c "drop table if exists mkeep; create table mkeep (id int primary key, v int not null, note text)"
psql_q -c "insert into mkeep select g, 0, 'row ' || g from generate_series(1, 4 * $N) g"
meili_start; ok $? "$MEILI_KIND up"
meili_drop ${S}_mkeep
METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mkeep
sup_start; ok $? "pipeline up"
check "the load lands" -- meili_wait_equal mkeep ${S}_mkeep 120

# txns FROM : N transactions of one insert, one update and one delete
# each, rows FROM.. of their own, as one client's script
txns() {
	local i
	for ((i = $1; i < $1 + N; i++)); do
		echo "begin; insert into mkeep values ($((100000 + i)), $i, 'new $i');"
		echo "update mkeep set v = v + 1, note = 'upd $i' where id = $i;"
		echo "delete from mkeep where id = $((2 * N + i)); commit;"
	done
}
txns 1 > "$T/txns.sql"
t0=$(date +%s.%N)
psql_q -f "$T/txns.sql" > /dev/null; ok $? "$N transactions committed back to back"
t1=$(date +%s.%N)
meili_wait_equal mkeep ${S}_mkeep "$WAIT" > "$T/cmp1" 2>&1; rc=$?
t2=$(date +%s.%N)
lag=$(echo "$t2 - $t1" | bc)
ok $rc "all of them in the index $(printf %.1f "$lag") s after the last commit (limit $WAIT s; the client took $(printf %.1f "$(echo "$t1 - $t0" | bc)") s)"
[ $rc = 0 ] || sed 's/^/#   /' "$T/cmp1" | tail -5
# what the server did: its batches since the transactions began, each
# with its tasks, documents and time
meili_get "/batches?limit=100" | jq -r --arg t0 "$(date -u -d "@${t0%.*}" +%FT%T)" \
	'[.results[] | select(.startedAt >= $t0)] | reverse | "server batches since the first commit: \(length); tasks, documents (added+deleted) and seconds each: " +
	([.[] | "\(.stats.totalNbTasks)/\((.details.receivedDocuments // 0) + (.details.providedIds // 0))/\(.duration | ltrimstr("PT") | rtrimstr("S") | tonumber * 10 | round / 10)"] | join(" "))' | sed 's/^/# /'
diag "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# the same with two kill -9 of every process while they stream
txns $((N + 1)) > "$T/txns2.sql"
psql_q -f "$T/txns2.sql" > /dev/null &
CLIENT=$!; cleanup_add $CLIENT
for r in 1 2; do
	sleep 1.$((RANDOM % 10))
	kill_pipeline
	sup_start || diag "restart $r did not come up"
done
wait $CLIENT; ok $? "$N more transactions committed while the pipeline was killed twice"
check "the index equals the table by content after the kills" -- meili_wait_equal mkeep ${S}_mkeep 120
kill -TERM $SUP; wait $SUP
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
