# tests/meili-lib.sh - helpers for the Meilisearch target's tests (source
# after tests/lib.sh). There is no Meilisearch server on these machines:
# the target is tested against tests/helper/meili-contract.py, a server
# on loopback that behaves as Meilisearch's documented API says.

# no OpenSearch is needed: the shared helpers that clean its state find
# nothing listening there
: "${OS_URL:=http://127.0.0.1:9}"

# meili_start [DELAY_MS] : the contract server on a free port, MEILI_URL
meili_start() {
	MEILI_PORT=$(free_port)
	MEILI_URL=http://127.0.0.1:$MEILI_PORT
	python3 "$TOP/tests/helper/meili-contract.py" $MEILI_PORT ${1:-30} \
		2> "$T/meili.log" &
	cleanup_add $!
	wait_for 10 curl -sf "$MEILI_URL/health"
}
# with MEILI_MASTER_KEY set the server wants it: the tests' own requests
# carry it from a curl config file, never an argv
meili_curl() {
	if [ -n "${MEILI_MASTER_KEY:-}" ]; then
		printf 'header = "Authorization: Bearer %s"\n' "$MEILI_MASTER_KEY" > "$T/meili.curl"
		curl -sS --max-time 30 -K "$T/meili.curl" "$@"
	else
		curl -sS --max-time 30 "$@"
	fi
}
meili_get() { meili_curl "$MEILI_URL$1"; }
meili_post() { meili_curl -XPOST "$MEILI_URL$1"; }
# meili_tasks STATUS : how many tasks are in that status
meili_tasks() { meili_get /_contract/state | jq -r ".$1"; }

# mkmeili FILE SLOT PREFIX TABLE... : mkconfig's configuration written to
# the contract server, its state in $T/state
mkmeili() {
	local f=$1
	mkconfig "$@"
	sed -i "s#^  url: .*#  url: $MEILI_URL\n  flavor: meilisearch\n  state_dir: $T/state#" "$f"
	sed -i '/^  flavor: elasticsearch$/d' "$f"
}

# meili_compare TABLE INDEX : the index holds exactly the table's rows by
# content (row_to_json of each row, keyed by id; the primary key attribute
# pg2osync_id must equal the id)
meili_compare() {
	psql_q -c "select coalesce(json_agg(row_to_json(t)),'[]') from $1 t" \
		> "$T/cmp.src" || return 2
	meili_get "/indexes/$2/documents?limit=100000" > "$T/cmp.dst" || return 2
	python3 - "$T/cmp.src" "$T/cmp.dst" <<'PY'
import json, sys
src = {str(r["id"]): r for r in json.load(open(sys.argv[1]))}
dst = json.load(open(sys.argv[2]))
got = {}
for d in dst.get("results", []):
    d = dict(d)
    got[str(d.pop("pg2osync_id"))] = d
bad = 0
for k in sorted(set(src) | set(got)):
    if src.get(k) != got.get(k):
        print("# id %s: table %s, index %s" % (k, src.get(k), got.get(k)))
        bad += 1
sys.exit(1 if bad else 0)
PY
}
meili_wait_equal() {
	local i
	for ((i = 0; i < $3 * 4; i++)); do
		meili_compare "$1" "$2" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	meili_compare "$1" "$2"
}
