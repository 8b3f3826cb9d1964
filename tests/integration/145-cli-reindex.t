#!/usr/bin/env bash
# pg2osync reindex and switch-alias on PostgreSQL: refused while the
# pipeline streams; stopped, it builds <index>-<seconds>, moves the alias
# onto it and prints the follow-ups; a second rebuild leaves the first as
# the rollback, which switch-alias restores; rows deleted during a build
# leave the alias alone and exit 1; --drop-old deletes what the alias named.
. "$(dirname "$0")/../lib.sh"

S=p2o_reidx
IX=${S}_rx
A=${S}_live
N=100000
drop_slot $S; os_drop "$IX*"; curl -sS -XDELETE "$OS_URL/_alias/$A" >/dev/null 2>&1
psql_q -c "drop table if exists rx; create table rx (id int primary key, name text, n int);
	insert into rx select g, 'row ' || g, g from generate_series(1, $N) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S rx
sup_start; ok $? "pipeline up"
check "the load lands" -- wait_equal rx $IX 180

pg2osync reindex -c "$T/cfg.yaml" --table rx --alias $A > "$T/r1" 2>&1; rc=$?
sed 's/^/#   /' "$T/r1"
ok $([ $rc = 1 ] && grep -q "the pipeline is streaming (slot '$S' is active" "$T/r1"; echo $?) "refused while the pipeline streams: exit $rc"
kill -TERM $SUP; wait $SUP; ok $? "stopped"
pg2osync reindex -c "$T/cfg.yaml" --table rx --alias $IX > "$T/r2" 2>&1; rc=$?
ok $([ $rc = 78 ] && grep -q "is an index, not an alias" "$T/r2"; echo $?) "an alias named as the index is refused: exit $rc"

aliased() { curl -sS "$OS_URL/_alias/$A" | jq -r 'keys | join(",")'; }
pg2osync reindex -c "$T/cfg.yaml" --table rx --alias $A > "$T/r3" 2>&1; rc=$?
sed 's/^/#   /' "$T/r3"
new1=$(aliased)
ok $([ $rc = 0 ] && [[ "$new1" =~ ^${IX}-[0-9]+$ ]] && grep -q "set sync.rx.index to '$A'" "$T/r3"; echo $?) \
	"built, the alias names '$new1', the follow-ups printed: exit $rc"
check "the alias resolves to the table's rows by content" -- compare rx $A
ok $([ "$(curl -sS "$OS_URL/$new1/_settings" | jq -r ".[\"$new1\"].settings.index.refresh_interval // \"default\"")" != "-1" ]; echo $?) \
	"refresh is restored after the build"

sleep 1.1
pg2osync reindex -c "$T/cfg.yaml" --table rx --alias $A > "$T/r4" 2>&1; rc=$?
sed 's/^/#   /' "$T/r4"
new2=$(aliased)
ok $([ $rc = 0 ] && [ "$new2" != "$new1" ] && grep -q "rollback: pg2osync switch-alias --alias $A --index $new1" "$T/r4" &&
	[ "$(os_count $new1)" = $N ]; echo $?) "a second rebuild names '$new2' and keeps '$new1' as the rollback: exit $rc"
pg2osync switch-alias -c "$T/cfg.yaml" --alias $A --index $new1 > "$T/r5" 2>&1; rc=$?
sed 's/^/#   /' "$T/r5"
ok $([ $rc = 0 ] && [ "$(aliased)" = "$new1" ]; echo $?) "switch-alias back: the alias names '$(aliased)' again, exit $rc"
pg2osync switch-alias -c "$T/cfg.yaml" --alias $A --index ${IX}-nope > /dev/null 2>&1; rc=$?
ok $([ $rc = 78 ] && [ "$(aliased)" = "$new1" ]; echo $?) "switch-alias onto no index is refused: exit $rc"

# rows deleted while the build runs: the counts differ
sleep 1.1
pg2osync reindex -c "$T/cfg.yaml" --table rx --alias $A > "$T/r6" 2>&1 &
RX=$!
building() { curl -sS "$OS_URL/_cat/indices/${IX}-*?h=index" | grep -vqx -e "$new1" -e "$new2"; }
wait_for 60 building
psql_q -c "delete from rx where id % 1000 = 0"
wait $RX; rc=$?
sed 's/^/#   /' "$T/r6"
ok $([ $rc = 1 ] && grep -q "the counts differ: alias '$A' left as it was" "$T/r6" && [ "$(aliased)" = "$new1" ]; echo $?) \
	"rows deleted during the build: the alias is left alone, exit $rc"

sleep 1.1
pg2osync reindex -c "$T/cfg.yaml" --table rx --alias $A --drop-old > "$T/r7" 2>&1; rc=$?
sed 's/^/#   /' "$T/r7"
new3=$(aliased)
gone() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$OS_URL/$1")" = 404 ]; }
ok $([ $rc = 0 ] && [ "$new3" != "$new1" ] && gone $new1 && [ "$(os_count $A)" = $((N - N / 1000)) ]; echo $?) \
	"--drop-old: the alias names '$new3', '$new1' is deleted, exit $rc"
check "the alias resolves to the table's rows by content" -- compare rx $A
drop_slot $S
for i in $(curl -sS "$OS_URL/_cat/indices/${IX}*?h=index"); do os_drop $i; done
done_testing
