#!/usr/bin/env bash
# Credentials and TLS, live, on an Elasticsearch 8 node with x-pack
# security: HTTPS with a CA this test makes (tests/servers/tls.sh) and a
# user it creates. Basic auth (the url from url_env) with the CA, and
# tls_verify false (warned), each stream a table. A wrong password or API
# key stops the pipeline with exit 77 and one message; a CA that did not
# sign the node's certificate with exit 69, before anything is written. No
# secret is on any argv or in any log line.
# The user is in the file realm and no valid API key is made: the native
# realm and API keys live in the .security index, whose mapping needs the
# analysis-common module, which is not published for 8.x (the node answers
# "Unknown filter type [pattern_capture]"). A wrong key is refused live.
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
"$TOP/tests/servers/elasticsearch.sh" start "$D"
ok $? "a secured Elasticsearch node starts"
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
	! has_secret "$T/$name.log" "$PW" "wrong-password" "$KEY"
	ok $? "$desc: no secret in the log"
	drop_slot ${S}_$name
}
export P2O_T_BAD_PW=wrong-password P2O_T_BAD_KEY=$KEY
cfg badpw "url: $ES_URL" "username: p2o-writer" "password_env: P2O_T_BAD_PW" "ca_file: $TLS/ca.crt"
fails badpw 77 "a wrong password" "HTTP 401"
cfg badkey "url: $ES_URL" "api_key_env: P2O_T_BAD_KEY" "ca_file: $TLS/ca.crt"
fails badkey 77 "a wrong API key" "HTTP 401"
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
