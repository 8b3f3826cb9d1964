#!/usr/bin/env bash
# Run every libFuzzer target for N seconds (default 30) from its corpus in
# tests/fuzz/corpus/<target>/ (new finds are kept there, in a scratch copy
# under build-fuzz so the checkout stays clean). Prints TAP: one test per
# target, failing on any crash, leak, timeout or sanitizer report.
set -u
cd "$(dirname "$0")/../.."
secs=${1:-${FUZZ_SECONDS:-30}}
# undefined behaviour is a finding, not a warning to run past
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
n=0; fail=0
for f in build-fuzz/fuzz/fuzz-*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	n=$((n + 1))
	work=build-fuzz/corpus/$name
	mkdir -p "$work"
	[ -d "tests/fuzz/corpus/$name" ] && cp -n "tests/fuzz/corpus/$name"/* "$work"/ 2>/dev/null
	dict=
	[ -f "tests/fuzz/$name.dict" ] && dict=-dict=tests/fuzz/$name.dict
	if "$f" $dict -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		"$work" > "build-fuzz/$name.log" 2>&1; then
		execs=$(grep -m1 'stat::number_of_executed_units' "build-fuzz/$name.log" | awk '{print $2}')
		echo "ok $n - $name: ${execs:-?} executions in ${secs}s, no crash"
	else
		fail=$((fail + 1))
		echo "not ok $n - $name crashed"
		grep -E 'ERROR|SUMMARY|Test unit written' "build-fuzz/$name.log" | head -n 10 | sed 's/^/#   /'
	fi
done
echo "1..$n"
[ $fail -eq 0 ]
