#!/usr/bin/env bash
# pg2osync verify on MariaDB: after a document is edited by hand in the
# index, one deleted by hand and an orphan inserted by hand, verify names
# exactly those three keys and exits 1; --repair fixes them; verify then
# exits 0. Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

export MY_SERVER_ID=141141
IX=t141_t141
my_fresh_stream t141
os_drop $IX
my_raw "DROP TABLE IF EXISTS t141; CREATE TABLE t141 (id int PRIMARY KEY, name varchar(40), n int);
	INSERT INTO t141 SELECT seq, CONCAT('row ', seq), seq * 10 FROM seq_1_to_50"
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" t141 t141
ckpt_text() { ckpt -c "$T/cfg.yaml" get 2>/dev/null | jq -r '.text // empty'; }
found() { [ "$(curl -sS "$OS_URL/$IX/_doc/$1" | jq -r .found)" = true ]; }
sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "the pipeline is up"
wait_for 60 grep -q "'loader' finished" "$T/sup.log"
wait_for 30 found 50; ok $? "the load lands"

curl -sS -XPUT "$OS_URL/$IX/_doc/5?refresh=true" -H 'content-type: application/json' \
	-d '{"id":5,"name":"edited by hand","n":50}' >/dev/null
curl -sS -XDELETE "$OS_URL/$IX/_doc/7?refresh=true" >/dev/null
curl -sS -XPUT "$OS_URL/$IX/_doc/999?refresh=true" -H 'content-type: application/json' \
	-d '{"id":999,"name":"orphan","n":0}' >/dev/null
ck=$(ckpt_text)
my_raw "INSERT INTO t141 VALUES (51, 'row 51', 510)"
moved() { [ "$(ckpt_text)" != "$ck" ]; }
wait_for 30 found 51 && wait_for 30 moved; ok $? "a later row lands and moves the checkpoint"

pg2osync verify -c "$T/cfg.yaml" > "$T/v1" 2>&1; rc=$?
sed 's/^/#   /' "$T/v1"
grep -E '^(differs|missing|orphan): ' "$T/v1" | sort > "$T/keys"
printf 'differs: %s/5\nmissing: %s/7\norphan: %s/999\n' $IX $IX $IX | sort > "$T/want"
ok $([ $rc = 1 ] && diff -q "$T/want" "$T/keys" >/dev/null; echo $?) "verify names exactly the edited, the deleted and the orphan key, exit $rc"
pg2osync verify -c "$T/cfg.yaml" --repair > "$T/v2" 2>&1; rc=$?
sed 's/^/#   /' "$T/v2"
ok $([ $rc = 0 ] && grep -q "^repaired 3 of 3" "$T/v2"; echo $?) "--repair fixes the three, exit $rc"
pg2osync verify -c "$T/cfg.yaml" > "$T/v3" 2>&1; rc=$?
ok $([ $rc = 0 ] && grep -q "^51 rows, 51 documents: 0 differ" "$T/v3"; echo $?) "verify after the repair: exit $rc: $(tail -1 "$T/v3")"
my_raw "UPDATE t141 SET name = 'streamed after the repair' WHERE id = 5"
streamed() { [ "$(curl -sS "$OS_URL/$IX/_doc/5" | jq -r ._source.name)" = "streamed after the repair" ]; }
wait_for 30 streamed; ok $? "the stream still wins over a repaired document"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
