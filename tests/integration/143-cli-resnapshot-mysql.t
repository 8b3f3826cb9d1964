#!/usr/bin/env bash
# pg2osync resnapshot on MariaDB, beside a running supervised pipeline and
# a concurrent writer (upserts and deletes): --where reads again only the
# rows it names, the whole table afterwards leaves the index equal to the
# table by content, and the stored checkpoint, sampled throughout, never
# moves backwards. Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

export MY_SERVER_ID=143143
IX=t143_t143
N=20000
my_fresh_stream t143
os_drop $IX
my_raw "DROP TABLE IF EXISTS t143; CREATE TABLE t143 (id int PRIMARY KEY, v int, note varchar(40));
	INSERT INTO t143 SELECT seq, 1, CONCAT('row ', seq) FROM seq_1_to_$N"
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" t143 t143
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"
doc() { curl -sS "$OS_URL/$IX/_doc/$1" | jq -r "._source.note // \"(none)\""; }
sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "the pipeline is up"
wait_for 60 grep -q "'loader' finished" "$T/sup.log"
check "the load lands" -- my_equal t143 $IX 120 "$SEL"

put() { curl -sS -XPUT "$OS_URL/$IX/_doc/$1?refresh=true" -H 'content-type: application/json' -d "$2" >/dev/null; }
put 5 '{"id":5,"v":1,"note":"edited by hand"}'
put 15000 '{"id":15000,"v":1,"note":"edited by hand"}'
curl -sS -XDELETE "$OS_URL/$IX/_doc/7?refresh=true" >/dev/null
# an edit by hand bumps the version by one; the binlog must move past the
# load's coordinate for a copy to outrank it (on PostgreSQL the WAL always
# has)
my_raw "UPDATE t143 SET v = 2 WHERE id = 19999"
pg2osync resnapshot -c "$T/cfg.yaml" --table t143 --where "id <= 100" > "$T/r1" 2>&1; rc=$?
sed 's/^/#   /' "$T/r1"
ok $([ $rc = 0 ] && grep -q "100 documents written" "$T/r1"; echo $?) "resnapshot --where 'id <= 100': exit $rc, 100 documents"
ok $([ "$(doc 5)" = "row 5" ] && [ "$(doc 7)" = "row 7" ] && [ "$(doc 15000)" = "edited by hand" ]; echo $?) \
	"inside the scope repaired, outside it left alone"
pg2osync resnapshot -c "$T/cfg.yaml" --table t143 --where "v = 1.5e0" > "$T/r2" 2>&1; rc=$?
sed 's/^/#   /' "$T/r2"
ok $([ $rc = 64 ]; echo $?) "a --where the server cannot run as written is refused: exit $rc"

ckpt_pos() { ckpt -c "$T/cfg.yaml" get 2>/dev/null | jq -r '.pos // empty'; }
my_writer t143 $N
( while :; do ckpt_pos; sleep 0.2; done ) > "$T/ckpts" 2>/dev/null &
SAMP=$!; cleanup_add $SAMP
sleep 1
pg2osync resnapshot -c "$T/cfg.yaml" --table t143 > "$T/r3" 2>&1; rc=$?
sed 's/^/#   /' "$T/r3"
ok $([ $rc = 0 ] && grep -Eq "^resnapshot of '.*t143': [0-9]+ documents written" "$T/r3"; echo $?) "resnapshot of the whole table under a writer: exit $rc"
sleep 1
my_writer_stop
sleep 0.5
kill $SAMP; wait $SAMP 2>/dev/null
check "the index equals the table by content" -- my_equal t143 $IX 60 "$SEL"
prev=0; back=0; n=0
while read -r l; do
	[ -z "$l" ] && continue
	n=$((n + 1))
	[ "$l" -lt "$prev" ] && { back=1; diag "checkpoint went back: $l after $prev"; }
	prev=$l
done < "$T/ckpts"
ok $([ $back = 0 ] && [ $n -gt 5 ]; echo $?) "the checkpoint never moved backwards ($n samples)"
ch=$(my_raw "SELECT COUNT(*) FROM t143 WHERE v > 1")
diag "$ch rows changed by the writer"
ok $([ "$ch" -gt 0 ]; echo $?) "the writer ran beside the resnapshot"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
