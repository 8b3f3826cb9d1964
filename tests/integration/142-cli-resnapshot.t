#!/usr/bin/env bash
# pg2osync resnapshot on PostgreSQL, beside a running supervised pipeline
# and a concurrent writer of updates: --where reads again only the rows it
# names (a document damaged outside it stays damaged), the whole table
# afterwards makes the index equal the table by content, nothing is
# deleted, and the stored checkpoint, sampled throughout, never moves
# backwards.
. "$(dirname "$0")/../lib.sh"

S=p2o_resnap
IX=${S}_rs
N=20000
drop_slot $S; os_drop $IX
psql_q -c "drop table if exists rs; create table rs (id int primary key, name text, n int);
	insert into rs select g, 'row ' || g, g from generate_series(1, $N) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S rs
sup_start; ok $? "pipeline up"
check "the load lands" -- wait_equal rs $IX 120

# damage by hand: one edit and one deletion inside the scope, one of each
# outside it, and an orphan (which resnapshot never deletes)
put() { curl -sS -XPUT "$OS_URL/$IX/_doc/$1?refresh=true" -H 'content-type: application/json' -d "$2" >/dev/null; }
put 5 '{"id":5,"name":"edited by hand","n":5}'
put 15000 '{"id":15000,"name":"edited by hand","n":15000}'
curl -sS -XDELETE "$OS_URL/$IX/_doc/7?refresh=true" >/dev/null
curl -sS -XDELETE "$OS_URL/$IX/_doc/15007?refresh=true" >/dev/null
put 999999 '{"id":999999,"name":"orphan","n":0}'
doc() { curl -sS "$OS_URL/$IX/_doc/$1" | jq -r "._source.name // \"(none)\""; }

pg2osync resnapshot -c "$T/cfg.yaml" --table rs --where "id <= 100" > "$T/r1" 2>&1; rc=$?
sed 's/^/#   /' "$T/r1"
ok $([ $rc = 0 ] && grep -q "100 documents written" "$T/r1"; echo $?) "resnapshot --where 'id <= 100': exit $rc, 100 documents"
ok $([ "$(doc 5)" = "row 5" ] && [ "$(doc 7)" = "row 7" ]; echo $?) "inside the scope: the edit and the deletion are repaired"
ok $([ "$(doc 15000)" = "edited by hand" ] && [ "$(doc 15007)" = "(none)" ]; echo $?) "outside it: left as they were"
pg2osync resnapshot -c "$T/cfg.yaml" --table rs --where "id <=" > "$T/r2" 2>&1; rc=$?
ok $([ $rc = 64 ]; echo $?) "a --where that does not parse: exit $rc"
pg2osync resnapshot -c "$T/cfg.yaml" > "$T/r3" 2>&1; rc=$?
ok $([ $rc = 64 ]; echo $?) "no --table: exit $rc"
pg2osync resnapshot -c "$T/cfg.yaml" --table nope > "$T/r4" 2>&1; rc=$?
ok $([ $rc = 64 ]; echo $?) "--table of no section: exit $rc"

# the whole table, beside a writer of updates and a sampler of the
# checkpoint
cat > "$T/upd.sql" <<SQL
\set id random(1, $N)
update rs set n = n + 1, name = 'updated ' || :id where id = :id;
SQL
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -n 1)
"$PGBENCH" -n -c 2 -T 3600 -f "$T/upd.sql" > "$T/pgbench.log" 2>&1 &
PGB=$!; cleanup_add $PGB
( while :; do ckpt_lsn "$T/cfg.yaml"; sleep 0.2; done ) > "$T/ckpts" 2>/dev/null &
SAMP=$!; cleanup_add $SAMP
sleep 1
pg2osync resnapshot -c "$T/cfg.yaml" --table public.rs > "$T/r5" 2>&1; rc=$?
sed 's/^/#   /' "$T/r5"
ok $([ $rc = 0 ] && grep -q "$N documents written" "$T/r5"; echo $?) "resnapshot of the whole table under updates: exit $rc"
sleep 1
kill $PGB 2>/dev/null; wait $PGB 2>/dev/null
sleep 0.5
kill $SAMP; wait $SAMP 2>/dev/null
ok $([ "$(doc 999999)" = orphan ]; echo $?) "the orphan is still there: resnapshot never deletes"
curl -sS -XDELETE "$OS_URL/$IX/_doc/999999?refresh=true" >/dev/null
check "the index equals the table by content" -- wait_equal rs $IX 60
prev=0; back=0; n=0
while read -r l; do
	[ -z "$l" ] && continue
	v=$(lsn_num "$l"); n=$((n + 1))
	[ "$v" -lt "$prev" ] && { back=1; diag "checkpoint went back: $l"; }
	prev=$v
done < "$T/ckpts"
ok $([ $back = 0 ] && [ $n -gt 5 ]; echo $?) "the checkpoint never moved backwards ($n samples)"
upd=$(psql_q -c "select count(*) from rs where name like 'updated %'")
diag "$upd rows updated during the run"; [ "$upd" -gt 0 ] || sed "s/^/#   /" "$T/pgbench.log"
ok $([ "$upd" -gt 0 ]; echo $?) "updates ran beside the resnapshot"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
