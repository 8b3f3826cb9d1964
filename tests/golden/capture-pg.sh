#!/usr/bin/env bash
# Golden tests of capture-pg's decoder, printed as TAP for prove(1): each
# tests/golden/capture-pg/X.msgs (real pgoutput messages recorded by
# record.sh from X.sql) through pgo-decode must give exactly X.out; a case
# whose X.out ends in "error N: ..." must exit N.
helper=pgo-decode
. "$(dirname "$0")/golden.bash"
dir=$top/tests/golden/capture-pg
for in in "$dir"/*.msgs; do
	name=$(basename "$in" .msgs)
	golden_run "$name" "$dir/$name.out" "$prog" < "$in"
done
golden_done
