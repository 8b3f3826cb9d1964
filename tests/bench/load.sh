#!/usr/bin/env bash
# The initial load under the supervisor, measured: 1,000,000 narrow rows
# (BENCH_LOAD_ROWS) loaded beside the stream at write_concurrency 1, 2 and
# 4, each beside the ceiling — the same documents sent through plain _bulk
# over as many connections, measured in this run. Also the peak resident
# memory of every process summed, and the CPU seconds all of them used per
# 1,000,000 rows. Sourced by run.sh inside its servers (tests/lib.sh is
# loaded, $T is the scratch directory).
N=${BENCH_LOAD_ROWS:-1000000}
B=${BENCH_BATCH:-1000}
S=p2o_lbench
psql_q -c "drop table if exists lbench; create table lbench (id int primary key, name text, qty int, price numeric(10,2), flag boolean)"
psql_q -c "insert into lbench select g, 'item ' || g, g % 1000, (g % 10000) / 100.0, g % 3 = 0 from generate_series(1, $N) g; analyze lbench"

reset_stream() {
	drop_slot $S
	os_drop ${S}_lbench
	curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fload%2Fpublic.lbench" >/dev/null 2>&1 || true
}
reset_stream
BATCH_SIZE=$B METRICS_PORT=$(free_port) mkconfig "$T/lb.yaml" $S $S lbench

# the documents the pipeline writes, for the ceiling
loader -c "$T/lb.yaml" > "$T/copy.frames" 2> "$T/loader.err"
shaper -c "$T/lb.yaml" --load-fd 4 4< "$T/copy.frames" < /dev/null > "$T/lops.frames"
echo "initial load of $N rows: $(grep -c '"k":"index"' "$T/lops.frames") documents, $(stat -c %s "$T/lops.frames") bytes of operations"
python3 tests/bench/raw_bulk.py "$OS_URL" lbench_raw "$T/lops.frames" "$B" 4 > /dev/null

# peak RSS of each process of the run, summed; sampled twice a second
sample_rss() {
	local pat=$1 out=$2
	declare -A peak
	while kill -0 "$3" 2>/dev/null; do
		for p in $(pgrep -f -- "$pat"); do
			# the time(1) wrapper is not the pipeline's
			[ "$(cat /proc/$p/comm 2>/dev/null)" = time ] && continue
			r=$(rss_kb "$p")
			[ "${r:-0}" -gt "${peak[$p]:-0}" ] && peak[$p]=$r
		done
		t=0; for p in "${!peak[@]}"; do t=$((t + peak[$p])); done
		echo "$t ${#peak[@]}" > "$out"
		sleep 0.5
	done
}

echo "write_concurrency  raw _bulk docs/s  initial load rows/s  of raw  peak RSS (all)  CPU s per 1M rows"
for c in 1 2 4; do
	r1=$(python3 tests/bench/raw_bulk.py "$OS_URL" lbench_raw "$T/lops.frames" "$B" $c)
	r2=$(python3 tests/bench/raw_bulk.py "$OS_URL" lbench_raw "$T/lops.frames" "$B" $c)
	raw=$(( r1 > r2 ? r1 : r2 ))
	reset_stream
	sed "s/^engine:\$/engine:\n  write_concurrency: $c/" "$T/lb.yaml" > "$T/lb$c.yaml"
	start=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o "$T/lb$c.time" pg2osync-supervise -c "$T/lb$c.yaml" > "$T/lb$c.log" 2>&1 &
	SUP=$!
	sample_rss "$T/lb$c.yaml" "$T/lb$c.rss" "$SUP" &
	RS=$!
	for i in $(seq 6000); do
		grep -q "'loader' finished: every table is loaded" "$T/lb$c.log" && break
		sleep 0.1
	done
	end=$(date +%s.%N)
	# the supervisor is time(1)'s child: a TERM sent to time(1) as well
	# (its command line names the same file) would kill it before it
	# wrote its numbers, and the read below would fail
	pkill -TERM -P $SUP 2>/dev/null
	wait $SUP || true
	wait $RS 2>/dev/null || true
	read -r u s < "$T/lb$c.time"
	read -r rss nproc < "$T/lb$c.rss"
	rate=$(python3 -c "print(round($N/($end-$start)))")
	printf "%17d  %16d  %19d  %5d%%  %9d MB (%d)  %17s\n" $c $raw $rate \
		"$(python3 -c "print(round(100*$rate/$raw))")" $((rss / 1024)) "$nproc" \
		"$(python3 -c "print(round(($u+$s)*1000000/$N, 1))")"
	n=$(os_count ${S}_lbench)
	[ "$n" = "$N" ] || echo "  (the index holds $n documents, not $N: see $T/lb$c.log)"
done
reset_stream
