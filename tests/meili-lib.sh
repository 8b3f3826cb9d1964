# tests/meili-lib.sh - helpers for the Meilisearch target's tests (source
# after tests/lib.sh). The tests run against a real Meilisearch server:
# the one tests/servers/run-with.sh --meili started (MEILI_URL and
# MEILI_MASTER_KEY in the environment), else one of the test's own in $T
# (tests/servers/meilisearch.sh, from P2O_MEILI_BIN), stopped at its end.
# A test that needs a fault a real server cannot make on demand (a task
# held enqueued or processing) uses tests/helper/meili-contract.py instead,
# a server written from Meilisearch's documentation, and says so.

# no OpenSearch is needed: the shared helpers that clean its state find
# nothing listening there
: "${OS_URL:=http://127.0.0.1:9}"

# meili_start : the real server, MEILI_URL and MEILI_MASTER_KEY set
meili_start() {
	if [ -z "${MEILI_URL:-}" ]; then
		chmod 711 "$T"
		"$TOP/tests/servers/meilisearch.sh" start "$T/meili" || return 1
		. "$T/meili/env"
	fi
	MEILI_KIND="a real Meilisearch server"
	wait_for 10 curl -sf "$MEILI_URL/health"
}
# meili_contract_start [DELAY_MS] : the contract server on a free port
# instead (each task processed DELAY_MS after it starts), for a fault the
# real server cannot make on demand; its own master key
meili_contract_start() {
	MEILI_PORT=$(free_port)
	MEILI_URL=http://127.0.0.1:$MEILI_PORT
	MEILI_MASTER_KEY=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
	MEILI_KIND="the contract server (tests/helper/meili-contract.py)"
	MEILI_MASTER_KEY=$MEILI_MASTER_KEY python3 "$TOP/tests/helper/meili-contract.py" \
		$MEILI_PORT ${1:-30} 2> "$T/meili.log" &
	cleanup_add $!
	wait_for 10 curl -sf "$MEILI_URL/health"
}
# the tests' own requests carry the key from a curl config file, never an
# argv
meili_curl() {
	printf 'header = "Authorization: Bearer %s"\n' "$MEILI_MASTER_KEY" > "$T/meili.curl"
	curl -sS --max-time 30 -K "$T/meili.curl" "$@"
}
meili_get() { meili_curl "$MEILI_URL$1"; }
meili_post() { meili_curl -XPOST "$MEILI_URL$1"; }
# meili_tasks STATUS [INDEX] : how many tasks (of INDEX) are in that status
meili_tasks() {
	meili_get "/tasks?statuses=$1${2:+&indexUids=$2}&limit=1" | jq -r .total
}
# meili_wait_task UID : the task ended, succeeded or failed (its status)
meili_wait_task() {
	local i st
	for ((i = 0; i < 1200; i++)); do
		st=$(meili_get "/tasks/$1" | jq -r .status)
		case $st in succeeded|failed|canceled) echo "$st"; return 0 ;; esac
		sleep 0.05
	done
	return 1
}
# meili_drop INDEX... : gone, whatever a run before left (waited for)
meili_drop() {
	local ix uid
	for ix; do
		uid=$(meili_curl -XDELETE "$MEILI_URL/indexes/$ix" | jq -r '.taskUid // empty')
		[ -n "$uid" ] && meili_wait_task "$uid" > /dev/null
	done
	return 0
}

# mkmeili FILE SLOT PREFIX TABLE... : mkconfig's configuration written to
# the Meilisearch server, its key from api_key_env (P2O_T_MEILI_KEY,
# exported), its state in $T/state
mkmeili() {
	local f=$1
	mkconfig "$@"
	sed -i "s#^  url: .*#  url: $MEILI_URL\n  flavor: meilisearch\n  api_key_env: P2O_T_MEILI_KEY\n  state_dir: $T/state#" "$f"
	sed -i '/^  flavor: elasticsearch$/d' "$f"
	export P2O_T_MEILI_KEY=$MEILI_MASTER_KEY
}

# meili_docs INDEX : every document of the index, one JSON array, read
# in pages
meili_docs() {
	MEILI_MASTER_KEY=$MEILI_MASTER_KEY python3 - "$MEILI_URL" "$1" <<'PY'
import json, os, sys, urllib.request
url, index = sys.argv[1:3]
key = os.environ["MEILI_MASTER_KEY"]
out, off = [], 0
while True:
    req = urllib.request.Request("%s/indexes/%s/documents/fetch" % (url, index),
        data=json.dumps({"offset": off, "limit": 10000}).encode(),
        headers={"Authorization": "Bearer " + key,
                 "Content-Type": "application/json"})
    try:
        page = json.load(urllib.request.urlopen(req, timeout=60))
    except urllib.error.HTTPError as e:
        if e.code == 404:
            break
        raise
    out += page["results"]
    off += len(page["results"])
    if not page["results"] or off >= page["total"]:
        break
json.dump({"results": out}, sys.stdout)
PY
}

# meili_compare TABLE INDEX : the index holds exactly the table's rows by
# content (row_to_json of each row, keyed by id; the primary key attribute
# pg2osync_id must equal the id)
meili_compare() {
	psql_q -c "select coalesce(json_agg(row_to_json(t)),'[]') from $1 t" \
		> "$T/cmp.src" || return 2
	meili_docs "$2" > "$T/cmp.dst" || return 2
	python3 - "$T/cmp.src" "$T/cmp.dst" <<'PY'
import json, sys
src = {str(r["id"]): r for r in json.load(open(sys.argv[1]))}
dst = json.load(open(sys.argv[2]))
got = {}
for d in dst.get("results", []):
    d = dict(d)
    got[str(d.pop("pg2osync_id"))] = d
bad = 0
for k in sorted(set(src) | set(got), key=lambda k: (len(k), k)):
    if src.get(k) != got.get(k):
        if bad < 20:
            print("# id %s: table %s, index %s" % (k, src.get(k), got.get(k)))
        bad += 1
if bad:
    print("# %d of %d ids differ (table %d rows, index %d documents)"
          % (bad, len(set(src) | set(got)), len(src), len(got)))
sys.exit(1 if bad else 0)
PY
}
# meili_wait_equal TABLE INDEX SECONDS : meili_compare, until it holds or
# the time is up (then its report)
meili_wait_equal() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		meili_compare "$1" "$2" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	meili_compare "$1" "$2"
}
