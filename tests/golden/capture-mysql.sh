#!/usr/bin/env bash
# Golden tests of capture-mysql's assembler, printed as TAP for prove(1):
# each tests/golden/capture-mysql/X.tables (the catalogue, and in its
# "# binlog: FILE" line which file of tests/fixtures/mysql it reads)
# through binlog-decode must give exactly X.out; a case whose X.out ends
# in "error N: ..." must exit N.
helper=binlog-decode
. "$(dirname "$0")/golden.bash"
dir=$top/tests/golden/capture-mysql
for in in "$dir"/*.tables; do
	name=$(basename "$in" .tables)
	bin=$top/tests/fixtures/mysql/$(sed -n 's/^# binlog: //p' "$in")
	if [ ! -f "$bin" ]; then
		golden_ok "$name" "no binlog named in $name.tables"
		continue
	fi
	golden_run "$name" "$dir/$name.out" "$prog" "$in" "$bin"
done
golden_done
