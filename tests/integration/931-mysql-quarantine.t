#!/usr/bin/env bash
# engine.on_permanent_rejection: quarantine with a MariaDB source, the
# basic case: a document a strict mapping refuses lands in
# .pg2osync_rejects while the next rows land and the checkpoint moves;
# `pg2osync rejects` lists it at its binlog position; after the mapping
# takes the field `rejects --replay` writes it and clears its record,
# exit 0. Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

export MY_SERVER_ID=931931
STREAM=mysql:$MY_SERVER_ID
IX=t931_t931
my_fresh_stream t931
os_drop $IX
curl -sS -XPOST "$OS_URL/.pg2osync_rejects/_delete_by_query?refresh=true" -H 'content-type: application/json' \
	-d "{\"query\":{\"term\":{\"stream\":\"$STREAM\"}}}" >/dev/null 2>&1
my_raw "DROP TABLE IF EXISTS t931; CREATE TABLE t931 (id int PRIMARY KEY, a varchar(10), b varchar(20))"
curl -sS -XPUT "$OS_URL/$IX" -H 'content-type: application/json' \
	-d '{"mappings":{"dynamic":"strict","properties":{"id":{"type":"integer"},"a":{"type":"keyword"},"b":{"type":"integer"}}}}' >/dev/null
records() {
	curl -sS -XPOST "$OS_URL/.pg2osync_rejects/_refresh" >/dev/null 2>&1
	curl -sS -XPOST "$OS_URL/.pg2osync_rejects/_count" -H 'content-type: application/json' \
		-d "{\"query\":{\"term\":{\"stream\":\"$STREAM\"}}}" | jq -r '.count // 0'
}
found() { curl -sS "$OS_URL/$IX/_doc/$1" | jq -r .found; }
has_doc() { [ "$(found "$1")" = true ]; }
ckpt_text() { ckpt -c "$T/cfg.yaml" get 2>/dev/null | jq -r '.text // empty'; }
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" t931 t931
sed -i '/^engine:/a\  on_permanent_rejection: quarantine' "$T/cfg.yaml"
sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "the pipeline is up"
wait_for 60 grep -q "'loader' finished" "$T/sup.log"

my_raw "INSERT INTO t931 VALUES (1, 'x', '7')"
wait_for 30 has_doc 1; ok $? "an accepted row lands"
wait_for 10 test -n "$(ckpt_text)"
ck1=$(ckpt_text)
my_raw "INSERT INTO t931 VALUES (2, 'y', 'not a number')"
my_raw "INSERT INTO t931 VALUES (3, 'z', '8')"
wait_for 30 has_doc 3; ok $? "the row after the refused one lands"
ok $([ "$(found 2)" = false ] && [ "$(records)" = 1 ]; echo $?) "the refused row is recorded in .pg2osync_rejects, not indexed"
wait_for 10 bash -c "[ \"\$(ckpt -c $T/cfg.yaml get 2>/dev/null | jq -r .text)\" != '$ck1' ]"
ok $? "the checkpoint moves past it ($ck1 -> $(ckpt_text))"

pg2osync rejects -c "$T/cfg.yaml" > "$T/list" 2>&1; rc=$?
sed 's/^/#   /' "$T/list"
ok $([ $rc = 0 ] && grep -q "^$IX/2 at [^ ]*: mapper_parsing_exception" "$T/list" &&
	grep -q "^1 refused document in" "$T/list"; echo $?) "rejects lists it at its binlog position"

curl -sS -XPUT "$OS_URL/$IX/_mapping" -H 'content-type: application/json' \
	-d '{"properties":{"b":{"type":"integer","ignore_malformed":true}}}' >/dev/null
pg2osync rejects -c "$T/cfg.yaml" --replay > "$T/replay" 2>&1; rc=$?
sed 's/^/#   /' "$T/replay"
ok $([ $rc = 0 ] && grep -q "^replayed 1, still refused 0" "$T/replay"; echo $?) "after the mapping fix --replay writes it, exit $rc"
ok $([ "$(found 2)" = true ] && [ "$(records)" = 0 ]; echo $?) "the row is in the index and its record cleared"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
