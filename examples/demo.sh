#!/usr/bin/env bash
# make demo: a throwaway PostgreSQL 15 and OpenSearch 2.19 on loopback, a
# table that already holds rows, pg2osync-supervise loading them beside the
# stream, and a few changes you can watch land.
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

BIN=${P2O_BIN:-$PWD/build/bin}
D=$(mktemp -d "$P2O_SERVERS_DIR/demo.XXXXXX")
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
sql() { echo "postgres> $*"; psql -X -q -v ON_ERROR_STOP=1 -c "$*"; }
# show N [S]: wait (at most S seconds by the clock, 10 by default) until the
# index holds N documents, then list them (the demo's own rows have ids below
# 1000, the loaded ones above). The count is polled without a refresh: the
# index refreshes itself every second, and a refresh forced every few hundred
# ms while a truncate deletes every document made that delete longer
show() {
	local end=$((SECONDS + ${2:-10})) q='{"query":{"range":{"id":{"lt":1000}}}}'
	while [ $SECONDS -lt $end ]; do
		[ "$(curl -s "$OS_URL/products/_count" -H 'Content-Type: application/json' -d "$q" | jq -r '.count // -1')" = "$1" ] && break
		sleep 0.25
	done
	sleep 0.3	# an update keeps the count: give it its moment
	curl -s -XPOST "$OS_URL/products/_refresh" >/dev/null
	echo "opensearch> GET products/_search (id < 1000)"
	curl -s "$OS_URL/products/_search?sort=_id&size=20&version=true" -H 'Content-Type: application/json' -d "$q" |
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

say "a table that already holds 20,000 rows"
sql "create table products (id int primary key, name text, price numeric(12,2), tags text[], cost numeric)"
sql "insert into products select g, 'product ' || g, (g % 1000) + 0.99, array['tag' || (g % 7)], g % 50 from generate_series(1001, 21000) g"

say "starting pg2osync-supervise"
# sed -u: each log line as it comes, not a pipe buffer's worth at the end
"$BIN/pg2osync-supervise" -c "$D/pg2osync.yaml" 2>&1 | sed -u 's/^/  | /' &
# healthy = every stage said hello, and the capture says it only once its
# slot is streaming: from here on every change is captured
for i in $(seq 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done

say "the initial load runs beside the stream"
# pg2osync status reads the load's progress where ckpt records it, the
# same record that tells a restarted pipeline what is left to load
echo "\$ pg2osync status -c $D/pg2osync.yaml   (its load line, each time it changes)"
seen=
for i in $(seq 1200); do
	now=$("$BIN/pg2osync" status -c "$D/pg2osync.yaml" --json 2>/dev/null |
		jq -r '.loads[]? | select(.table == "public.products") | if .of then "\(.state), \(.done) of \(.of) ranges" else .state end')
	[ -n "$now" ] && [ "$now" != "$seen" ] && echo "load        public.products: $now" && seen=$now
	case $now in finished*) break ;; esac
	sleep 0.5
done
case $now in finished*) ;; *) echo "the load has not finished after 10 minutes: its log is above" ;; esac
curl -s -XPOST "$OS_URL/products/_refresh" >/dev/null
echo "opensearch> GET products/_count"
curl -s "$OS_URL/products/_count" | jq -c .
echo "opensearch> GET products/_doc/50000"
curl -s "$OS_URL/products/_doc/50000" | jq -c '{_id, _version, _source}'

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
# a truncate deletes every document of the table at its version: the node
# takes longer for 20,000 documents than for one row
show 0 30
curl -s -XPOST "$OS_URL/products/_refresh" >/dev/null
echo "opensearch> GET products/_count"
curl -s "$OS_URL/products/_count" | jq -c .
say "metrics (http://127.0.0.1:$port/metrics)"
curl -s "http://127.0.0.1:$port/metrics" | grep -E '^pg2osync_(events_total|load_rows_total|load_ranges|position_confirmed|batches_total|commit_to_indexed_seconds_(sum|count))'

if [ -t 0 ] && [ -z "${CI:-}" ]; then
	say "still running on port $PGPORT (user $PGUSER, database $PGDATABASE): change rows and watch curl $OS_URL/products/_search; Ctrl-C ends the demo"
	wait
fi
say "stopping"
pkill -TERM -f "pg2osync-supervise -c $D/pg2osync.yaml" || true
wait || true
