# tests/qdrant-lib.sh - helpers for the Qdrant target's tests (source after
# tests/lib.sh). No Qdrant server can be had where these tests run: they
# run against tests/helper/qdrant-contract.py, a server written from
# Qdrant's REST API reference (v1.12.x), on a free loopback port, with an
# API key of its own; it holds a fault on demand (/_contract/fault). The
# tests ask it only through Qdrant's own routes, but for /_contract.

# no OpenSearch is needed: the shared helpers that clean its state find
# nothing listening there
: "${OS_URL:=http://127.0.0.1:9}"

# qdrant_start : the contract server, QDRANT_URL and QDRANT_API_KEY set
qdrant_start() {
	QDRANT_PORT=$(free_port)
	QDRANT_URL=http://127.0.0.1:$QDRANT_PORT
	QDRANT_API_KEY=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
	QDRANT_KIND="the contract server (tests/helper/qdrant-contract.py, Qdrant's REST API v1.12.x)"
	QDRANT_API_KEY=$QDRANT_API_KEY python3 "$TOP/tests/helper/qdrant-contract.py" \
		$QDRANT_PORT 2> "$T/qdrant.log" &
	cleanup_add $!
	wait_for 10 curl -sf "$QDRANT_URL/healthz"
}
# the tests' own requests carry the key from a curl config file, never an
# argv
qdrant_curl() {
	printf 'header = "api-key: %s"\n' "$QDRANT_API_KEY" > "$T/qdrant.curl"
	curl -sS --max-time 30 -K "$T/qdrant.curl" "$@"
}
qdrant_get() { qdrant_curl "$QDRANT_URL$1"; }
# qdrant_post PATH JSON
qdrant_post() { qdrant_curl -XPOST -H 'Content-Type: application/json' -d "$2" "$QDRANT_URL$1"; }
# qdrant_fault JSON : a fault held by the contract server
qdrant_fault() { qdrant_post /_contract/fault "$1" > /dev/null; }
qdrant_stat() { qdrant_get /_contract/stats | jq -r ".result.$1"; }

# mkqdrant FILE SLOT PREFIX TABLE... : mkconfig's configuration written to
# the contract server, its key from api_key_env (P2O_T_QDRANT_KEY,
# exported)
mkqdrant() {
	local f=$1
	mkconfig "$@"
	sed -i "s#^  url: .*#  url: $QDRANT_URL\n  flavor: qdrant\n  api_key_env: P2O_T_QDRANT_KEY#" "$f"
	sed -i '/^  flavor: elasticsearch$/d' "$f"
	export P2O_T_QDRANT_KEY=$QDRANT_API_KEY
}

# qdrant_points COLLECTION : every point with payload and vectors, one JSON
# array, read with scroll in pages as a client would
qdrant_points() {
	QDRANT_API_KEY=$QDRANT_API_KEY python3 - "$QDRANT_URL" "$1" <<'PY'
import json, os, sys, urllib.request, urllib.error
url, coll = sys.argv[1:3]
key = os.environ["QDRANT_API_KEY"]
out, off = [], None
while True:
    body = {"limit": 1000, "with_payload": True, "with_vector": True}
    if off is not None:
        body["offset"] = off
    req = urllib.request.Request("%s/collections/%s/points/scroll" % (url, coll),
        data=json.dumps(body).encode(),
        headers={"api-key": key, "Content-Type": "application/json"})
    try:
        page = json.load(urllib.request.urlopen(req, timeout=60))["result"]
    except urllib.error.HTTPError as e:
        if e.code == 404:
            break
        raise
    out += page["points"]
    off = page["next_page_offset"]
    if off is None:
        break
json.dump(out, sys.stdout)
PY
}

# qdrant_compare TABLE COLLECTION : the collection holds exactly the
# table's rows by content: each point's payload is its row (row_to_json)
# but for _vectors, with pg2osync_id the id; its vectors are the row's
# _vectors (when the table has that column); its id is the UUIDv5 of the
# document id in the namespace lib/target/qdrant.h fixes
qdrant_compare() {
	psql_q -c "select coalesce(json_agg(row_to_json(t)),'[]') from $1 t" \
		> "$T/cmp.src" || return 2
	qdrant_points "$2" > "$T/cmp.dst" || return 2
	python3 - "$T/cmp.src" "$T/cmp.dst" <<'PY'
import json, sys, uuid
NS = uuid.uuid5(uuid.NAMESPACE_URL, "pg2osync:qdrant:id")
src = {str(r["id"]): r for r in json.load(open(sys.argv[1]))}
got, bad = {}, 0
for p in json.load(open(sys.argv[2])):
    pl = dict(p["payload"])
    k = str(pl.pop("pg2osync_id"))
    if p["id"] != str(uuid.uuid5(NS, k)):
        print("# id %s: point id %s is not its UUIDv5" % (k, p["id"]))
        bad += 1
    vec = p.get("vector") or {}
    if vec:
        pl["_vectors"] = vec
    got[k] = pl
def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and abs(a - b) < 1e-6
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[x], b[x]) for x in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b
for k in sorted(set(src) | set(got), key=lambda k: (len(k), k)):
    s = src.get(k)
    if s is not None and s.get("_vectors", 0) is None:
        s = dict(s)
        del s["_vectors"]
    if not same(s, got.get(k)):
        if bad < 20:
            print("# id %s: table %s, collection %s" % (k, s, got.get(k)))
        bad += 1
if bad:
    print("# %d of %d ids differ (table %d rows, collection %d points)"
          % (bad, len(set(src) | set(got)), len(src), len(got)))
sys.exit(1 if bad else 0)
PY
}
# qdrant_wait_equal TABLE COLLECTION SECONDS : qdrant_compare, until it
# holds or the time is up (then its report)
qdrant_wait_equal() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		qdrant_compare "$1" "$2" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	qdrant_compare "$1" "$2"
}
