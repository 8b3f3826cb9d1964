#!/usr/bin/env bash
# make demo: a throwaway PostgreSQL 15 and OpenSearch 2.19 on loopback, a
# table, pg2osync-supervise syncing it, and a few changes you can watch land.
# Everything lives in a temp dir and is stopped at the end (or on Ctrl-C).
set -eu
cd "$(dirname "$0")/.."
# whatever happens, the pipeline stops before the servers do
trap 'pkill -TERM -f "pg2osync-supervise -c ${D:-/nonexistent}/" 2>/dev/null || true; wait || true' EXIT
if [ "${1:-}" != "--inside" ]; then
	tests/install-deps.sh
	make -s all
	exec tests/servers/run-with.sh --pg --os -- "$0" --inside
fi

BIN=$PWD/build/bin
D=$(mktemp -d "$P2O_SERVERS_DIR/demo.XXXXXX")
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
sql() { echo "postgres> $*"; psql -X -q -v ON_ERROR_STOP=1 -c "$*"; }
# show N: wait (at most 10 s) until the index holds N documents, then list them
show() {
	local i
	for i in $(seq 50); do
		curl -s -XPOST "$OS_URL/products/_refresh" >/dev/null
		[ "$(curl -s "$OS_URL/products/_count" | jq -r '.count // -1')" = "$1" ] && break
		sleep 0.2
	done
	sleep 0.3	# an update keeps the count: give it its moment
	curl -s -XPOST "$OS_URL/products/_refresh" >/dev/null
	echo "opensearch> GET products/_search"
	curl -s "$OS_URL/products/_search?sort=_id&size=20&version=true" |
		jq -c '.hits.hits[]? | {_id, _version, _source}'
}

export DEMO_PG_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$D/pg2osync.yaml" <<YAML
source:
  url_env: DEMO_PG_URL        # the password stays in the environment
  slot_name: demo
  publication: demo
target:
  url: $OS_URL
sync:
  products:
    table: public.products
    index: products
    exclude_columns: [cost]
engine:
  checkpoint_interval_ms: 200
metrics:
  bind: 127.0.0.1:$port
YAML
say "config ($D/pg2osync.yaml)"
cat "$D/pg2osync.yaml"

say "a table"
sql "create table products (id int primary key, name text, price numeric(12,2), tags text[], cost numeric)"

say "starting pg2osync-supervise"
"$BIN/pg2osync-supervise" -c "$D/pg2osync.yaml" 2>&1 | sed 's/^/  | /' &
# healthy = every stage said hello, and the capture says it only once its
# slot is streaming: from here on every change is captured
for i in $(seq 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done

say "insert"
sql "insert into products values (1, 'lamp', 19.90, '{home,light}', 4), (2, 'desk', 149.00, '{office}', 60)"
show 2
say "update"
sql "update products set price = 17.50 where id = 1"
show 2
say "primary key change"
sql "update products set id = 20 where id = 2"
show 2
say "delete"
sql "delete from products where id = 1"
show 1
say "truncate"
sql "truncate products"
show 0
say "metrics (http://127.0.0.1:$port/metrics)"
curl -s "http://127.0.0.1:$port/metrics" | grep -E '^pg2osync_(events_total|position_confirmed|batches_total|commit_to_indexed_seconds_(sum|count))'

if [ -t 0 ] && [ -z "${CI:-}" ]; then
	say "still running on port $PGPORT (user $PGUSER, database $PGDATABASE): change rows and watch curl $OS_URL/products/_search; Ctrl-C ends the demo"
	wait
fi
say "stopping"
pkill -TERM -f "pg2osync-supervise -c $D/pg2osync.yaml" || true
wait || true
