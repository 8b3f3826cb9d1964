#!/usr/bin/env bash
# tests/valgrind.sh TEST...: integration tests with every stage under
# valgrind memcheck (where ASan cannot see: uninitialised reads, and a
# second opinion on leaks), then one line per program of what it found.
# Run under tests/servers/run-with.sh. Not part of the test command: a
# stage under memcheck runs 20-50 times slower, so only tests whose
# waits allow it pass, and the report is what counts.
#   tests/servers/run-with.sh --pg --mariadb --os -- tests/valgrind.sh \
#       tests/integration/300-stream.t ...
set -u
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind.sh: no valgrind (apt-get install valgrind)" >&2; exit 69; }
[ -x build/bin/capture-pg ] || { echo "valgrind.sh: build first (make)" >&2; exit 69; }
W=$(mktemp -d "${P2O_SERVERS_DIR:-/tmp}/vg.XXXXXX")
mkdir -p "$W/bin" "$W/sup" "$W/logs"
# a wrapper per program, on PATH. The supervisor looks for its stages
# beside its own executable first (valgrind shows it the real one), so its
# real binary sits in a directory of its own where each stage is the
# wrapper again
for p in build/bin/*; do
	n=$(basename "$p")
	real=$PWD/$p
	if [ "$n" = pg2osync-supervise ]; then
		cp "$p" "$W/sup/$n"
		real=$W/sup/$n
	fi
	cat > "$W/bin/$n" <<SH
#!/bin/sh
exec valgrind -q --tool=memcheck --error-exitcode=99 --leak-check=full \\
	--errors-for-leak-kinds=definite --track-origins=yes \\
	--log-file="$W/logs/$n.%p.log" "$real" "\$@"
SH
	chmod +x "$W/bin/$n"
	[ "$n" = pg2osync-supervise ] || ln -s "$W/bin/$n" "$W/sup/$n"
done
P2O_BIN=$W/bin prove -v "$@" > "$W/prove.log" 2>&1
st=$?
grep -E '^(not ok|ok [0-9]+ # skip)|^Result|^Files=' "$W/prove.log"
# a log with content is a run that found something (-q prints errors only)
runs=0 bad=0
for n in $(ls build/bin); do
	total=$(ls "$W/logs/$n".*.log 2>/dev/null | wc -l)
	found=$(find "$W/logs" -name "$n.*.log" -size +0 | wc -l)
	runs=$((runs + total)) bad=$((bad + found))
	printf 'valgrind: %-20s %4d runs, %d with errors\n' "$n" "$total" "$found"
done
for f in $(find "$W/logs" -name '*.log' -size +0 | head -5); do
	echo "--- $f"; head -40 "$f"
done
echo "valgrind: $runs runs, $bad with errors; logs in $W/logs"
[ $st = 0 ] && [ $bad = 0 ]
