#!/usr/bin/env bash
# make bench: numbers, not pass/fail. Starts its own PostgreSQL and OpenSearch.
#  1. shaper alone, writer alone on a captured 100,000-row stream
#  2. shaper | writer at write_concurrency 1, 2 and 4, each beside raw _bulk
#     of the same documents over as many connections (the ceiling), and the
#     writer's CPU seconds
#  3. the supervised pipeline: commit→indexed latency (p50/p99) and the
#     resident memory of all stages together
#  4. the initial load of 1,000,000 rows under the supervisor at
#     write_concurrency 1, 2 and 4, beside the raw _bulk ceiling of the
#     same documents (load.sh)
set -eu -o pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" != "--inside" ]; then
	tests/install-deps.sh
	make -s all
	exec tests/servers/run-with.sh --pg --os -- "$0" --inside
fi
. tests/lib.sh
N=${BENCH_ROWS:-100000}
B=${BENCH_BATCH:-1000}

S=p2o_bench
drop_slot $S; os_drop ${S}_bench
psql_q -c "drop table if exists bench; create table bench (id int primary key, name text, price numeric(12,2), qty int, active boolean, note text, score float8, code text, grp int, tag text)"
BATCH_SIZE=$B mkconfig "$T/cfg.yaml" $S $S bench
capture-pg -c "$T/cfg.yaml" > "$T/s.frames" 2> "$T/cap.err" &
CAP=$!
wait_for 30 psql_q -c "select 1 from pg_replication_slots where slot_name = '$S' and active"
psql_q -c "insert into bench select g, 'name ' || g, g + 0.5, g % 100, g % 2 = 0, 'lorem ipsum dolor sit amet', g / 3.0, 'C' || lpad(g::text, 8, '0'), g % 17, 't' || (g % 5) from generate_series(1, $N) g"
for i in $(seq 600); do
	[ "$(grep -c '"k":"commit"' "$T/s.frames")" -ge 1 ] && break; sleep 0.2
done
kill -TERM $CAP; wait $CAP || true
rows=$(grep -c '"k":"row"' "$T/s.frames")
echo "captured stream: $rows row frames, $(stat -c %s "$T/s.frames") bytes"

/usr/bin/time -f "%e %U %S %M" -o "$T/shaper.time" shaper -c "$T/cfg.yaml" < "$T/s.frames" > "$T/ops.frames"
read -r e u s m < "$T/shaper.time"
echo "shaper alone: $(python3 -c "print(round($rows/max($e,0.001)))") events/s (${e}s wall, ${u}s user, max RSS ${m} kB)"

/usr/bin/time -f "%e %U %S %M" -o "$T/writer.time" writer -c "$T/cfg.yaml" < "$T/ops.frames"
read -r e u s m < "$T/writer.time"
echo "writer alone into OpenSearch: $(python3 -c "print(round($rows/max($e,0.001)))") docs/s (${e}s wall, ${u}s user, max RSS ${m} kB)"

# shaper | writer at 1, 2 and 4 bulk requests open at once, each beside the
# ceiling: the same documents through plain _bulk over as many connections
# (after a warm-up, since a cold JVM indexes slower; best of two), measured
# in turn in this run. The writer's CPU is user + system seconds.
# Both create the index with the one mapping dynamic mapping could get
# wrong: requests open at once race to map "score", and a float column's
# whole values would map it as long.
MAPPING='{"mappings":{"properties":{"score":{"type":"double"}}}}'
python3 tests/bench/raw_bulk.py "$OS_URL" bench_raw "$T/ops.frames" "$B" 4 "$MAPPING" > /dev/null
echo "write_concurrency  raw _bulk docs/s  shaper | writer rows/s  of raw  writer CPU s"
for c in 1 2 4; do
	r1=$(python3 tests/bench/raw_bulk.py "$OS_URL" bench_raw "$T/ops.frames" "$B" $c "$MAPPING")
	r2=$(python3 tests/bench/raw_bulk.py "$OS_URL" bench_raw "$T/ops.frames" "$B" $c "$MAPPING")
	raw=$(( r1 > r2 ? r1 : r2 ))
	sed "s/^engine:\$/engine:\n  write_concurrency: $c/" "$T/cfg.yaml" > "$T/cfg$c.yaml"
	os_drop ${S}_bench
	curl -sS --max-time 30 -XPUT -H 'Content-Type: application/json' \
		"$OS_URL/${S}_bench" -d "$MAPPING" > /dev/null
	start=$(date +%s.%N)
	shaper -c "$T/cfg$c.yaml" < "$T/s.frames" |
		/usr/bin/time -f "%U %S" -o "$T/writer$c.time" writer -c "$T/cfg$c.yaml"
	end=$(date +%s.%N)
	read -r u s < "$T/writer$c.time"
	sw=$(python3 -c "print(round($rows/($end-$start)))")
	printf "%17d  %16d  %21d  %5d%%  %12s\n" $c $raw $sw \
		"$(python3 -c "print(round(100*$sw/$raw))")" \
		"$(python3 -c "print(round($u+$s, 2))")"
done
n=$(os_count ${S}_bench); echo "documents indexed: $n"
drop_slot $S

# latency and memory under the supervisor
S=p2o_lat
drop_slot $S; os_drop ${S}_bench
METRICS_PORT=$(free_port) BATCH_SIZE=$B mkconfig "$T/lat.yaml" $S $S bench
port=$(awk '/bind:/ {split($2, a, ":"); print a[2]}' "$T/lat.yaml")
pg2osync-supervise -c "$T/lat.yaml" > "$T/sup.log" 2>&1 &
SUP=$!
wait_for 60 curl -sf "http://127.0.0.1:$port/healthz"
# the table's rows are loaded first: latency is measured on a quiet stream
wait_for 600 grep -q "'loader' finished: every table is loaded" "$T/sup.log"
for i in $(seq 1 400); do echo "update bench set qty = qty + 1 where id = $i;"; echo "select pg_sleep(0.02);"; done | psql_q > /dev/null
sleep 1
curl -s "http://127.0.0.1:$port/metrics" > "$T/metrics"
python3 - "$T/metrics" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for name, what in (("commit_to_sent", "commit -> bulk request sent (the pipeline's own share)"),
                   ("commit_to_indexed", "commit -> indexed (including the target)")):
    b = [(float("inf") if m.group(1) == "+Inf" else float(m.group(1)), float(m.group(2)))
         for m in re.finditer(r'pg2osync_%s_seconds_bucket\{le="([^"]+)"\} (\S+)' % name, text)]
    if not b or not b[-1][1]:
        print(f"{what}: no observations"); continue
    total = b[-1][1]
    q = lambda p: next(le for le, c in b if c >= p * total)
    print(f"{what}, {int(total)} commits: p50 <= {q(0.5)*1000:g} ms, p99 <= {q(0.99)*1000:g} ms (bucket bounds)")
PY
rss=0; pss=0
for p in $(pgrep -f "$T/lat.yaml"); do
	rss=$((rss + $(rss_kb $p)))
	pss=$((pss + $(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup 2>/dev/null || echo 0)))
done
echo "memory of supervisor + ckpt + capture-pg + shaper + writer: RSS $((rss / 1024)) MB summed, PSS $((pss / 1024)) MB (shared library pages counted once)"
kill -TERM $SUP; wait $SUP || true
drop_slot $S

. tests/bench/load.sh
