#!/usr/bin/env bash
# tests/helper/valgrind-bin.sh DIR LOGDIR [BUILD]: a P2O_BIN directory of
# wrappers that exec each program of BUILD/bin (default build/bin) under
# valgrind memcheck, one log per process in LOGDIR, exit 99 on any memory
# error. Run integration tests with P2O_BIN=DIR, then read the summary:
#   tests/helper/valgrind-bin.sh /tmp/vgbin /tmp/vglog
#   P2O_BIN=/tmp/vgbin prove tests/integration/300-stream.t
#   grep -L 'ERROR SUMMARY: 0 errors' /tmp/vglog/*.log
# The supervisor under valgrind finds its stages through PATH (lib.sh puts
# P2O_BIN first), so every stage it starts runs under valgrind too.
# Leaks are not checked: stages end by signals in these tests.
set -eu
[ $# -ge 2 ] || { echo "usage: valgrind-bin.sh DIR LOGDIR [BUILD]" >&2; exit 64; }
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$1 logs=$2 build=${3:-$top/build}
command -v valgrind >/dev/null || { . "$top/tests/servers/lib.sh"; p2o_apt_ensure valgrind; }
mkdir -p "$dir" "$logs"
for p in "$build"/bin/*; do
	n=$(basename "$p")
	cat > "$dir/$n" <<W
#!/bin/sh
exec valgrind --tool=memcheck --error-exitcode=99 --leak-check=no --trace-children=no \\
	--log-file="$logs/%p.$n.log" "$p" "\$@"
W
	chmod +x "$dir/$n"
done
