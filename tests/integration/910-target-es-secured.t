#!/usr/bin/env bash
# Credentials and TLS, live, on an Elasticsearch 8 or 9 node with x-pack
# security: HTTPS with a CA this test makes (tests/servers/tls.sh), a user
# it creates and API keys it makes. Basic auth (the url from url_env) with
# the CA, and tls_verify false (warned), each stream a table. An API key
# limited to the writer's indices (target.api_key_env): validate passes
# with it and creates nothing, and the pipeline streams inserts, updates
# and deletes and stores its checkpoint. A wrong password, a wrong API key
# or an invalidated one stops the pipeline with exit 77 and one message,
# and validate says so in one line; a CA that did not sign the node's
# certificate stops it with exit 69: each before anything is written or
# acknowledged. No secret is on any argv or in any log line.
# The user is in the file realm; the API keys live in the .security index,
# whose analysis the test node gets from tests/servers/es-analysis-plugin.
# Runs in the Elasticsearch pass (P2O_TARGET=elasticsearch), with its own
# node beside the one the other tests use.
. "$(dirname "$0")/../lib.sh"
[ "$P2O_TARGET" = elasticsearch ] || { echo "1..0 # skip the Elasticsearch pass runs it"; exit 0; }

S=p2o_secure
TLS=$T/tls D=$P2O_SERVERS_DIR/es-secure
"$TOP/tests/servers/tls.sh" "$TLS" "DNS:localhost,IP:127.0.0.1"
mkdir -p "$D/certs"
cp "$TLS/ca.crt" "$D/certs/ca.crt"
cp "$TLS/server.crt" "$D/certs/node.crt"
cp "$TLS/server.key" "$D/certs/node.key"
# without the node every later check would only wait for its timeout
"$TOP/tests/servers/elasticsearch.sh" start "$D" || { ok 1 "a secured Elasticsearch node starts"; done_testing; exit; }
ok 0 "a secured Elasticsearch node starts"
_stop_node() { "$TOP/tests/servers/elasticsearch.sh" stop "$D"; }
trap '_stop_node; _cleanup' EXIT
. "$D/env"
# the admin's password reaches curl in a config file, never its argv
printf 'user = "p2o-admin:%s"\ncacert = "%s"\n' "$(cat "$D/admin-password")" "$TLS/ca.crt" > "$T/admin.curl"
chmod 600 "$T/admin.curl"
es() { curl -sS --max-time 30 -K "$T/admin.curl" -H 'content-type: application/json' "$@"; }
count_is() { [ "$(es_count "$1")" = "$2" ]; }
es_count() { es -XPOST "$ES_URL/$1/_refresh" >/dev/null 2>&1; es "$ES_URL/$1/_count" | jq -r '.count // 0'; }

PW=$(head -c 12 /dev/urandom | base64 | tr -d '/+=')
# the tool takes the password only on its argv: the test's, not ours
# the JDK the node runs on: its own where install.sh put one (9.x)
JH=$D/home/jdk
[ -x "$JH/bin/java" ] || JH=$(ls -d /usr/lib/jvm/java-17-openjdk-* | head -n1)
runuser -u p2o-os -- env -i PATH=/usr/bin:/bin ES_JAVA_HOME="$JH" \
	ES_PATH_CONF="$D/config" "$D/home/bin/elasticsearch-users" useradd p2o-writer -p "$PW" -r superuser
# the node reads the realm's file every 5 s
printf 'user = "p2o-writer:%s"\ncacert = "%s"\n' "$PW" "$TLS/ca.crt" > "$T/writer.curl"
wait_for 30 curl -sf -K "$T/writer.curl" -o /dev/null "$ES_URL/_nodes/_local"
ok $? "a user for the writer"
KEY=d3JvbmctaWQ6d3Jvbmcta2V5
export P2O_T_ES_URL=$ES_URL P2O_T_ES_PW=$PW

drop_slot $S
psql_q -c "drop table if exists sec_items; create table sec_items (id int primary key, v text)"

# cfg NAME KEYS... : a configuration for index ${S}_NAME with these target keys
cfg() {
	local name=$1; shift
	{
		echo "source:"
		echo "  url_env: P2O_TEST_URL"
		echo "  slot_name: ${S}_$name"
		echo "  publication: ${S}_$name"
		echo "target:"
		echo "  flavor: elasticsearch"
		printf '  %s\n' "$@"
		echo "sync:"
		echo "  sec_items:"
		echo "    table: public.sec_items"
		echo "    index: ${S}_$name"
		echo "engine:"
		echo "  checkpoint_interval_ms: 200"
	} > "$T/$name.yaml"
}

# streams NAME DESC: the pipeline of NAME's configuration copies the table
n=0
streams() {
	local name=$1 desc=$2
	n=$((n + 1))
	psql_q -c "insert into sec_items values ($n, 'row $n')"
	pg2osync-supervise -c "$T/$name.yaml" > "$T/$name.log" 2>&1 &
	local sup=$!
	cleanup_add $sup
	wait_for 90 count_is ${S}_$name "$n"
	ok $? "$desc: the table is streamed ($(es_count ${S}_$name) of $n)"
	ok "$(argv_secrets "$T/$name.yaml" "$PW" "$(cat "$D/admin-password")")" \
		"$desc: no secret on any stage's argv"
	kill -TERM $sup; wait $sup
	! has_secret "$T/$name.log" "$PW"
	ok $? "$desc: no secret in the log"
	drop_slot ${S}_$name
}

cfg basic "url_env: P2O_T_ES_URL" "username: p2o-writer" "password_env: P2O_T_ES_PW" "ca_file: $TLS/ca.crt"
streams basic "basic auth, the url from url_env, the test's CA"
cfg noverify "url: $ES_URL" "username: p2o-writer" "password_env: P2O_T_ES_PW" "tls_verify: false"
streams noverify "tls_verify false"
grep -q "target.tls_verify is false" "$T/noverify.log"
ok $? "tls_verify false is warned about at start"

# mkkey NAME: an API key, made by the admin, with what the writer needs:
# everything on its indices and the state index (.pg2osync_meta, where the
# checkpoint is), and the node's description (its probe); the answer is
# left in $T/NAME.key (the encoded key, its id and its secret part)
mkkey() {
	es -XPOST "$ES_URL/_security/api_key" -d '{"name": "'"$1"'", "role_descriptors": {"p2o-writer": {
		"cluster": ["monitor"],
		"indices": [{"names": ["'"$S"'_*", ".pg2osync_*"], "privileges": ["all"]}]}}}' > "$T/$1.key"
	jq -e '.encoded and .id and .api_key' "$T/$1.key" > /dev/null
}
key_of() { jq -r ".$2" "$T/$1.key"; }
mkkey p2o-writer-key
ok $? "an API key for the writer ($(jq -c '{id, name, error}' "$T/p2o-writer-key.key"))"
export P2O_T_ES_KEY=$(key_of p2o-writer-key encoded)
# every secret the logs and argvs are searched for
SECRETS=("$PW" "$(cat "$D/admin-password")" "$P2O_T_ES_KEY" "$(key_of p2o-writer-key api_key)")

# what validate could create: slots, publications, and this test's and
# the state's indices on the node (hidden ones included)
snapshot() {
	{
		psql_q -c "select 'slot ' || slot_name from pg_replication_slots where slot_name like '${S}%' order by 1"
		psql_q -c "select 'pub ' || pubname from pg_publication where pubname like '${S}%' order by 1"
		es "$ES_URL/_cat/indices?h=index&expand_wildcards=all" | grep -E "^(${S}_|\.pg2osync)" | sort
	} > "$1"
}
# validates NAME WANT DESC PATTERN: pg2osync validate on NAME's
# configuration exits WANT, with PATTERN on one line, and creates nothing
validates() {
	local name=$1 want=$2 desc=$3 pat=$4 st=0
	snapshot "$T/before"
	pg2osync validate -c "$T/$name.yaml" > "$T/$name.validate" 2>&1 || st=$?
	snapshot "$T/after"
	ok $([ $st = "$want" ] && [ "$(grep -cE -- "$pat" "$T/$name.validate")" = 1 ]; echo $?) \
		"validate, $desc: exit $want, one line '$pat' (exit $st)"
	[ $st = "$want" ] || sed 's/^/#   /' "$T/$name.validate"
	diff "$T/before" "$T/after" > "$T/diff"
	ok $? "validate, $desc: nothing created"
	sed 's/^/#   /' "$T/diff"
	! has_secret "$T/$name.validate" "${SECRETS[@]}"
	ok $? "validate, $desc: no secret in its output"
}

cfg apikey "url: $ES_URL" "api_key_env: P2O_T_ES_KEY" "ca_file: $TLS/ca.crt"
validates apikey 0 "an API key" "^ok .*accepts the credentials"
tail -n1 "$T/apikey.validate" | grep -qx 'all checks passed'
ok $? "validate, an API key: all checks passed"

# streaming with the key: the table as it is, then an insert, an update
# and a delete, and a checkpoint stored on SIGTERM's drain
psql_q -c "insert into sec_items values ($((n += 1)), 'row $n')"
pg2osync-supervise -c "$T/apikey.yaml" > "$T/apikey.log" 2>&1 &
sup=$!
cleanup_add $sup
wait_for 90 count_is ${S}_apikey "$n"
ok $? "an API key: the table is loaded ($(es_count ${S}_apikey) of $n)"
psql_q -c "insert into sec_items values (1000, 'new'); update sec_items set v = 'changed' where id = 1;
	delete from sec_items where id = 2"
doc() { es "$ES_URL/${S}_apikey/_doc/$1" | jq -r "$2"; }
changes_seen() {
	[ "$(doc 1000 ._source.v)" = new ] && [ "$(doc 1 ._source.v)" = changed ] && [ "$(doc 2 .found)" = false ]
}
wait_for 90 changes_seen
ok $? "an API key: an insert, an update and a delete are streamed (1000: $(doc 1000 ._source.v), 1: $(doc 1 ._source.v), 2 found: $(doc 2 .found))"
ok "$(argv_secrets "$T/apikey.yaml" "${SECRETS[@]}")" "an API key: no secret on any stage's argv"
kill -TERM $sup
st=0; wait $sup || st=$?
ok $st "an API key: SIGTERM drains, exit 0 (got $st)"
ck=$(ckpt_lsn "$T/apikey.yaml"); sl=$(slot_confirmed ${S}_apikey)
ok $([ -n "$ck" ] && [ "$(lsn_num "$sl")" -eq "$(lsn_num "$ck")" ]; echo $?) \
	"an API key: the checkpoint is stored ($ck, read back with the key) and the slot confirmed to it ($sl)"
! has_secret "$T/apikey.log" "${SECRETS[@]}"
ok $? "an API key: no secret in the log"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/apikey.log"
drop_slot ${S}_apikey

# a key the admin made and then invalidated
mkkey p2o-revoked-key
ok $? "a second API key"
export P2O_T_REVOKED_KEY=$(key_of p2o-revoked-key encoded)
SECRETS+=("$P2O_T_REVOKED_KEY" "$(key_of p2o-revoked-key api_key)")
[ "$(es -XDELETE "$ES_URL/_security/api_key" -d '{"ids": ["'"$(key_of p2o-revoked-key id)"'"]}' |
	jq -r '.invalidated_api_keys | length')" = 1 ]
ok $? "... invalidated"
cfg revoked "url: $ES_URL" "api_key_env: P2O_T_REVOKED_KEY" "ca_file: $TLS/ca.crt"
validates revoked 1 "an invalidated API key" "^FAIL  target: .* refused the credentials \(HTTP 401"

# fails NAME CODE DESC PATTERN: the pipeline stops with CODE, saying PATTERN
# once, without restarts, and writes nothing
fails() {
	local name=$1 want=$2 desc=$3 pat=$4 st=0
	psql_q -c "insert into sec_items values ($((n += 1)), 'row $n')"
	timeout 90 pg2osync-supervise -c "$T/$name.yaml" > "$T/$name.log" 2>&1 || st=$?
	local good=1
	[ $st = "$want" ] && [ "$(grep -c -- "$pat" "$T/$name.log")" = 1 ] &&
		! grep -q restarting "$T/$name.log" && good=0
	ok $good "$desc: exit $want, one message (exit $st: $(grep -m1 -- "$pat" "$T/$name.log"))"
	[ $good = 0 ] || sed 's/^/#   /' "$T/$name.log"
	[ "$(es -o /dev/null -w '%{http_code}' "$ES_URL/${S}_$name")" = 404 ]
	ok $? "$desc: nothing written"
	# the position is acknowledged in the checkpoint, which is not there
	[ "$(es "$ES_URL/.pg2osync_meta/_doc/postgres:${S}_$name" | jq -r '.found // .status')" != true ]
	ok $? "$desc: nothing acknowledged"
	! has_secret "$T/$name.log" "${SECRETS[@]}" "wrong-password" "$KEY"
	ok $? "$desc: no secret in the log"
	drop_slot ${S}_$name
}
export P2O_T_BAD_PW=wrong-password P2O_T_BAD_KEY=$KEY
cfg badpw "url: $ES_URL" "username: p2o-writer" "password_env: P2O_T_BAD_PW" "ca_file: $TLS/ca.crt"
fails badpw 77 "a wrong password" "HTTP 401"
cfg badkey "url: $ES_URL" "api_key_env: P2O_T_BAD_KEY" "ca_file: $TLS/ca.crt"
fails badkey 77 "a wrong API key" "HTTP 401"
validates badkey 1 "a wrong API key" "^FAIL  target: .* refused the credentials \(HTTP 401"
fails revoked 77 "an invalidated API key" "HTTP 401"
cfg badca "url: $ES_URL" "username: p2o-writer" "password_env: P2O_T_ES_PW" "ca_file: $TLS/other-ca.crt"
fails badca 69 "a CA that did not sign the node's certificate" "certificate problem"

# the writer asks the node what it is: a configuration that names the
# other engine stops with 78, naming both, before it writes
printf '%s\n' '{"k":"index","index":"'${S}_flavor'","id":"1","v":100,"doc":{"id":1}}' \
	'{"k":"commit","pos":200,"text":"0/C8","n":1}' |
	while IFS= read -r j; do printf '%d %s\n' $((${#j} + 1)) "$j"; done > "$T/ops.frames"
cfg flavor "url: $ES_URL" "username: p2o-writer" "password_env: P2O_T_ES_PW" "ca_file: $TLS/ca.crt"
sed -i 's/^  flavor: elasticsearch$/  flavor: opensearch/' "$T/flavor.yaml"
st=0; timeout 60 writer -c "$T/flavor.yaml" < "$T/ops.frames" 2> "$T/flavor.err" || st=$?
ok $([ $st = 78 ] && [ "$(grep -c "target.flavor is opensearch but the node" "$T/flavor.err")" = 1 ]; echo $?) \
	"flavor opensearch on an Elasticsearch node: 78 ($st: $(cat "$T/flavor.err"))"
[ "$(es -o /dev/null -w '%{http_code}' "$ES_URL/${S}_flavor")" = 404 ]
ok $? "and nothing written"

psql_q -c "drop table if exists sec_items"
done_testing
