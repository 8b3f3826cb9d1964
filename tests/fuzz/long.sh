#!/usr/bin/env bash
# tests/fuzz/long.sh [TARGET...] - `make fuzz-long`: run each libFuzzer target
# for a long time from its committed corpus (tests/fuzz/corpus/NAME), then
# merge what it found back into that corpus with -merge=1, so the corpus
# keeps every input that adds coverage and nothing else: it grows with each
# long run and stays small.
#
#   FUZZ_LONG_SECONDS=N  seconds per target (default 3600)
#   FUZZ_LONG_RUNS=N     stop a target after N executions instead (the
#                        seconds still bound it)
#   FUZZ_LONG_JOBS=N     targets run at once (default 1)
#   FUZZ_NICE=N          niceness of the fuzzers (default 15)
#
# Every target runs under nice: a long run must not take the CPU from
# anything else on the machine. A crash, leak, timeout or sanitizer report
# is copied into the corpus as crash-<sha1> (the regression input that
# tests/fuzz/run.sh then replays on every run until it is fixed) and the
# run exits non-zero. One line per target: executions, seconds, corpus
# files before and after the merge. The binaries come from
# `make FUZZ=1 fuzz-bins`.
set -u
cd "$(dirname "$0")/../.."
secs=${FUZZ_LONG_SECONDS:-3600}
runs=${FUZZ_LONG_RUNS:-}
jobs=${FUZZ_LONG_JOBS:-1}
nicen=${FUZZ_NICE:-15}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
out=build-fuzz/long
mkdir -p "$out"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for f in build-fuzz/fuzz/fuzz-*; do [ -x "$f" ] && targets+=("$(basename "$f")"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets: run make FUZZ=1 fuzz-bins" >&2; exit 1; }

one() {	# one NAME: fuzz, merge, report; exit status 1 on a finding
	local name=$1 f=build-fuzz/fuzz/$1 corpus=tests/fuzz/corpus/$1
	local work=$out/$1.work fresh=$out/$1.merged log=$out/$1.log
	local dict=() lim=() st=0 t0 t1 before after execs a
	[ -x "$f" ] || { echo "$name: no binary $f"; return 1; }
	mkdir -p "$corpus" "$work"
	rm -rf "$fresh"; mkdir -p "$fresh"
	[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
	[ -n "$runs" ] && lim=(-runs="$runs")
	before=$(find "$corpus" -type f | wc -l)
	t0=$(date +%s)
	# new inputs go to the scratch dir (first); the corpus is only read
	nice -n "$nicen" "$f" "${dict[@]}" "${lim[@]}" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/$name-" "$work" "$corpus" > "$log" 2>&1 || st=1
	# stopped by a signal (Ctrl-C, kill -INT) is no finding: merge what it found
	grep -q 'libFuzzer: run interrupted' "$log" && st=0
	t1=$(date +%s)
	execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
	# the union, minimised: every input of the old corpus and the new
	# finds that adds a feature, nothing more. Hand-written seeds (any
	# name that is not a sha1) stay as they are; the rest is replaced by
	# the merge's choice. Past FUZZ_CORPUS_MAX files (default 300), the
	# greedy set cover over edges alone (not hit counts) picks a smaller
	# set that still reaches every edge.
	nice -n "$nicen" "$f" -merge=1 -timeout=10 -rss_limit_mb=2048 \
		"$fresh" "$corpus" "$work" >> "$log" 2>&1 || st=1
	if [ "$(find "$fresh" -type f | wc -l)" -gt "${FUZZ_CORPUS_MAX:-300}" ]; then
		rm -rf "$fresh"; mkdir -p "$fresh"
		nice -n "$nicen" "$f" -set_cover_merge=1 -use_counters=0 -timeout=10 -rss_limit_mb=2048 \
			"$fresh" "$corpus" "$work" >> "$log" 2>&1 || st=1
	fi
	if [ "$(find "$fresh" -type f | wc -l)" -gt 0 ]; then
		find "$corpus" -type f -regextype egrep -regex '.*/[0-9a-f]{40}' -delete
		for a in "$corpus"/*; do	# a seed the merge kept under its sha1
			[ -f "$a" ] && rm -f "$fresh/$(sha1sum "$a" | cut -c1-40)"
		done
		cp "$fresh"/* "$corpus"/ 2>/dev/null
	fi
	for a in "$out/$name"-crash-* "$out/$name"-leak-* "$out/$name"-timeout-* "$out/$name"-oom-*; do
		[ -f "$a" ] || continue
		st=1
		cp "$a" "$corpus/crash-$(sha1sum "$a" | cut -c1-40)"
	done
	after=$(find "$corpus" -type f | wc -l)
	if [ $st -eq 0 ]; then
		echo "$name: ${execs:-?} executions in $((t1 - t0)) s, no crash; corpus $before -> $after files"
	else
		echo "$name: FINDING after ${execs:-?} executions in $((t1 - t0)) s (log $log); corpus $before -> $after files"
		grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -n 5 | sed 's/^/    /'
	fi
	return $st
}

fail=0
if [ "$jobs" -le 1 ]; then
	for t in "${targets[@]}"; do one "$t" || fail=1; done
else
	for t in "${targets[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
		one "$t" > "$out/$t.result" 2>&1 &
	done
	wait
	for t in "${targets[@]}"; do
		cat "$out/$t.result"
		grep -q 'FINDING\|no binary' "$out/$t.result" && fail=1
	done
fi
exit $fail
