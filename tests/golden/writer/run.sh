#!/usr/bin/env bash
# Golden tests of the writer's requests, printed as TAP for prove(1):
#
#   prove tests/golden/writer/run.sh        (from the top of the tree)
#
# For each tests/golden/writer/X.in (operation frames), writer-requests -c
# config.yaml < X.in prints every request the writer would make (method,
# path, body), each answered at once as a healthy node would, and what the
# writer would report; that must be exactly X.out, with exit 0 or the code
# in X.rc, and when X.err exists its line must appear in what was logged.
# The shaper's runner does the comparing. WRITER_REQUESTS=path picks
# another build of the helper (P2O_BIN=build-san/bin picks the
# sanitizer build's).
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${P2O_BIN:-$top/build/bin}
GOLDEN_DIR=$top/tests/golden/writer \
GOLDEN_PROG=${WRITER_REQUESTS:-$(dirname "$bin")/tests/writer-requests} \
	exec "$top/tests/golden/run.sh"
