#!/usr/bin/env bash
# pg2osync verify on a table of ROWS rows (default 1,000,000), on a
# PostgreSQL and an OpenSearch node of its own: the table is loaded through
# the pipeline, the pipeline stopped, then verify runs twice on the equal
# index (time, rows per second, requests to the target, peak memory) and
# once after three documents were changed by hand, with --repair.
#   tests/bench/verify.sh [ROWS]
set -eu
cd "$(dirname "$0")/../.."
ROWS=${1:-1000000}
[[ $ROWS =~ ^[0-9]+$ ]] || { echo "usage: $0 [ROWS]" >&2; exit 64; }
if [ -z "${P2O_SERVERS_DIR:-}" ]; then
	make -s all
	exec tests/servers/run-with.sh --pg --os -- "$0" "$ROWS"
fi
export PATH=$PWD/build/bin:$PATH
. tests/lib.sh
S=p2o_vbench
IX=${S}_vb
drop_slot $S; os_drop $IX
psql_q -c "drop table if exists vb; create table vb (id int primary key, name text, n int, at timestamptz);
	insert into vb select g, 'row ' || g, g * 10, '2026-01-01'::timestamptz + g * interval '1 s'
	from generate_series(1, $ROWS) g"
METRICS_PORT=$(free_port)
BATCH_SIZE=5000 mkconfig "$T/cfg.yaml" $S $S vb
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!
start=$SECONDS
until grep -q "'loader' finished" "$T/sup.log"; do sleep 1; done
until [ "$(os_count $IX)" = "$ROWS" ]; do curl -s -XPOST "$OS_URL/$IX/_refresh" >/dev/null; sleep 1; done
echo "loaded $ROWS rows through the pipeline in $((SECONDS - start)) s"
kill -TERM $SUP; wait $SUP || true
for i in 1 2; do
	/usr/bin/time -f "verify: %e s wall, %U s user, %S s sys, %M KiB peak" \
		pg2osync verify -c "$T/cfg.yaml" | tail -1
done
curl -sS -XPUT "$OS_URL/$IX/_doc/5?refresh=true" -H 'content-type: application/json' -d '{"id":5}' >/dev/null
curl -sS -XDELETE "$OS_URL/$IX/_doc/7?refresh=true" >/dev/null
curl -sS -XPUT "$OS_URL/$IX/_doc/0?refresh=true" -H 'content-type: application/json' -d '{"id":0}' >/dev/null
/usr/bin/time -f "verify --repair: %e s wall, %M KiB peak" pg2osync verify -c "$T/cfg.yaml" --repair | tail -4
pg2osync verify -c "$T/cfg.yaml" | tail -1
drop_slot $S; os_drop $IX
psql_q -c "drop table vb"
