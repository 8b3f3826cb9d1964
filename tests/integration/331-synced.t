#!/usr/bin/env bash
# Read-your-writes on real servers: GET /synced on api.bind. The index is
# set to refresh_interval -1, so only the refresh /synced?refresh=true
# makes does: a row committed, /synced?refresh=true, then at once a
# _search without any refresh finds it, 100 times in a row. Without the
# token: 401; a position it cannot read: 400; a quiet PostgreSQL (nothing
# written since) is still synced, through the logical message the
# supervisor emits; with the target refusing writes (index.blocks.write) a
# row committed is never confirmed: timeout=1 and timeout=2000 answer 408.
# The bearer token of metrics.token_env guards /metrics (401 without it),
# /healthz stays open, and a listener off loopback without a token is
# warned about at start-up.
# Fails when: a search right after /synced misses the row, a status is
# not the one above, or a token appears in a log line.
. "$(dirname "$0")/../lib.sh"

S=p2o_synced
drop_slot $S; os_drop ${S}_sy
psql_q -c "drop table if exists sy; create table sy (id int primary key, v text)"
METRICS_PORT=$(free_port)
APORT=$(free_port)
export P2O_API_TOKEN="api-$RANDOM-secret-$$"
export P2O_METRICS_TOKEN="metrics-$RANDOM-secret-$$"
mkconfig "$T/cfg.yaml" $S $S sy
cat >> "$T/cfg.yaml" <<EOF
  token_env: P2O_METRICS_TOKEN
api:
  bind: 127.0.0.1:$APORT
  token_env: P2O_API_TOKEN
EOF
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
M="http://127.0.0.1:$METRICS_PORT"
A="http://127.0.0.1:$APORT"
AUTH="Authorization: Bearer $P2O_API_TOKEN"
wait_for 60 curl -sf "$M/ready"
ok $? "the pipeline is up"
wait_for 60 grep -q "'loader' finished" "$T/sup.log"

code() { curl -s -o "$T/body" -w '%{http_code}' --max-time 30 "$@"; }
ok $([ "$(code "$A/synced")" = 401 ]; echo $?) "/synced without the token: 401"
ok $([ "$(code -H "Authorization: Bearer wrong" "$A/synced")" = 401 ]; echo $?) \
	"/synced with a wrong token: 401"
ok $([ "$(code -H "$AUTH" "$A/synced?position=nonsense")" = 400 ]; echo $?) \
	"a position it cannot parse: 400 ($(cat "$T/body"))"
ok $([ "$(code -H "$AUTH" "$A/synced?timeout=x")" = 400 ]; echo $?) \
	"a timeout it cannot parse: 400"
ok $([ "$(code "$M/metrics")" = 401 ]; echo $?) "/metrics without metrics.token_env's token: 401"
ok $([ "$(code -H "Authorization: Bearer $P2O_METRICS_TOKEN" "$M/metrics")" = 200 ]; echo $?) \
	"/metrics with it: 200"
ok $([ "$(code "$M/healthz")" = 200 ]; echo $?) "/healthz needs no token"

# a quiet source: the logical message makes its position reachable
sleep 2
ok $([ "$(code -H "$AUTH" "$A/synced?timeout=20000")" = 200 ] &&
	jq -e '.synced == true' "$T/body" >/dev/null; echo $?) \
	"a quiet PostgreSQL: synced ($(cat "$T/body"))"

psql_q -c "insert into sy values (0, 'first')"
wait_for 30 bash -c "curl -s '$OS_URL/${S}_sy/_doc/0' | jq -e .found >/dev/null"
curl -sf -XPUT "$OS_URL/${S}_sy/_settings" -H 'content-type: application/json' \
	-d '{"index.refresh_interval": "-1"}' >/dev/null
ok $? "the index refreshes only when asked"

found=0 bad=''
for i in $(seq 1 100); do
	psql_q -c "insert into sy values ($i, 'row $i')"
	c=$(code -H "$AUTH" "$A/synced?refresh=true&timeout=20000")
	n=$(curl -s "$OS_URL/${S}_sy/_search?q=id:$i" | jq '.hits.total.value')
	if [ "$c" = 200 ] && [ "$n" = 1 ]; then
		found=$((found + 1))
	else
		bad="$bad $i:$c:$n"
	fi
done
ok $([ $found = 100 ]; echo $?) "/synced?refresh=true then _search without a refresh: found $found of 100${bad:+ (missed:$bad)}"
ok $(jq -e '.synced == true and .refreshed == true and (.waited_ms | type) == "number" and (.requested | test("^[0-9A-F]+/[0-9A-F]+$")) and (.confirmed | test("^[0-9A-F]+/[0-9A-F]+$"))' "$T/body" >/dev/null; echo $?) \
	"the answer says requested, confirmed, waited_ms ($(cat "$T/body"))"
pos=$(jq -r .confirmed "$T/body")
ok $([ "$(code -H "$AUTH" "$A/synced?position=$pos")" = 200 ]; echo $?) \
	"a position given that is confirmed: 200 at once"

# the target refuses writes: a committed row is never confirmed
curl -sf -XPUT "$OS_URL/${S}_sy/_settings" -H 'content-type: application/json' \
	-d '{"index.blocks.write": true}' >/dev/null
psql_q -c "insert into sy values (1000, 'blocked')"
ok $([ "$(code -H "$AUTH" "$A/synced?timeout=1")" = 408 ]; echo $?) \
	"timeout=1 with the target blocked: 408 ($(cat "$T/body"))"
ok $([ "$(code -H "$AUTH" "$A/synced?timeout=2000")" = 408 ] &&
	jq -e '.synced == false' "$T/body" >/dev/null; echo $?) \
	"timeout=2000 with the target blocked: 408, synced false"
curl -sf -XPUT "$OS_URL/${S}_sy/_settings" -H 'content-type: application/json' \
	-d '{"index.blocks.write": null, "index.refresh_interval": null}' >/dev/null
ok $([ "$(code -H "$AUTH" "$A/synced?refresh=true&timeout=60000")" = 200 ]; echo $?) \
	"the block lifted: synced again"
ok $([ "$(curl -s "$OS_URL/${S}_sy/_search?q=id:1000" | jq '.hits.total.value')" = 1 ]; echo $?) \
	"and the blocked row is found"

kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"
ok $(! grep -qE "$P2O_API_TOKEN|$P2O_METRICS_TOKEN" "$T/sup.log"; echo $?) "no token in the log"

# off loopback without a token: a warning at start-up
P2=$(free_port)
mkconfig "$T/open.yaml" $S $S sy
sed -i "s/  bind: 127.0.0.1:$METRICS_PORT/  bind: 0.0.0.0:$P2/" "$T/open.yaml"
timeout 20 pg2osync-supervise -c "$T/open.yaml" > "$T/open.log" 2>&1 &
OP=$!; cleanup_add $OP
wait_for 20 grep -q "can be reached from other hosts" "$T/open.log"
ok $? "metrics.bind 0.0.0.0 without a token: warned ($(grep -m1 'reached from other' "$T/open.log"))"
kill -TERM $OP 2>/dev/null; wait $OP 2>/dev/null
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 40
drop_slot $S
done_testing
