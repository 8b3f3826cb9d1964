#!/usr/bin/env bash
# Meilisearch with a master key, against a real server (which wants
# "Authorization: Bearer <key>" on every route but /health):
# target.api_key_env's key streams the table; a wrong key stops with exit
# 77 and one message, writes nothing and acknowledges nothing; the key is
# on no process's argv and in no log line.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meili_key
drop_slot $S; drop_slot ${S}_bad
psql_q -c "drop table if exists mkey; create table mkey (id int primary key, a text)"
psql_q -c "insert into mkey select g, 'row ' || g from generate_series(1, 20) g"
meili_start; ok $? "$MEILI_KIND up, with a master key"
meili_drop ${S}_mkey ${S}_bad_mkey
code=$(curl -s -o /dev/null -w '%{http_code}' "$MEILI_URL/version")
ok $([ "$code" = 401 ]; echo $?) "the server refuses a request without the key ($code)"

METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mkey
grep -q "^  api_key_env: P2O_T_MEILI_KEY" "$T/cfg.yaml"; ok $? "the key comes from api_key_env"
P2O_T_MEILI_KEY=$MEILI_MASTER_KEY pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"; ok $? "pipeline up"
psql_q -c "insert into mkey values (21, 'streamed'); update mkey set a = 'changed' where id = 3; delete from mkey where id = 4"
check "the key streams the table (load and changes)" -- meili_wait_equal mkey ${S}_mkey 60
ok "$(argv_secrets "$T/cfg.yaml" "$MEILI_MASTER_KEY")" "the key is on no stage's argv"
kill -TERM $SUP; wait $SUP
has_secret "$T/sup.log" "$MEILI_MASTER_KEY"
ok $([ $? = 1 ]; echo $?) "the key is in no log line"

# a wrong key: 403 invalid_api_key from the server
mkmeili "$T/bad.yaml" ${S}_bad ${S}_bad mkey
P2O_T_MEILI_KEY=not-the-key timeout 60 pg2osync-supervise -c "$T/bad.yaml" > "$T/bad.log" 2>&1
st=$?
sed 's/^/#   /' "$T/bad.log" | head -5
ok $([ $st = 77 ] && grep -q "invalid_api_key\|API key is invalid" "$T/bad.log"; echo $?) "a wrong key: exit 77 naming the refusal (exit $st)"
ok $([ "$(meili_get "/indexes/${S}_bad_mkey" | jq -r .code)" = index_not_found ]; echo $?) "a wrong key: nothing written"
ok $([ -z "$(ls "$T/state" 2>/dev/null | grep "${S}_bad")" ] && ! grep -q "${S}_bad" "$T/state"/* 2>/dev/null; echo $?) "a wrong key: nothing acknowledged"
has_secret "$T/bad.log" not-the-key
ok $([ $? = 1 ]; echo $?) "a wrong key: the key is in no log line"
done_testing
