#!/usr/bin/env bash
# Golden tests of the loader's copy rows, printed as TAP for prove(1): each
# tests/golden/loader/X.rows (rows as the source returns them) with the
# table of X.table through copy-decode must give exactly X.out; a case
# whose X.out ends in "error N: ..." must exit N. Then the copy rows of
# rows the captures' golden cases insert must carry the same documents as
# the stream's inserts: a loaded row and a streamed row are one document.
helper=copy-decode
. "$(dirname "$0")/golden.bash"
dir=$top/tests/golden/loader
for in in "$dir"/*.table; do
	name=$(basename "$in" .table)
	golden_run "$name" "$dir/$name.out" "$prog" "$in" < "$dir/$name.rows"
done

# NAME.out's documents against the stream's inserts of JQ-selected rows
same_docs() {	# same_docs NAME STREAM.out JQ-FILTER
	local copy stream
	copy=$(sed -E 's/^[0-9]+ //' "$dir/$1.out" | jq -c '.new' | sort)
	stream=$(sed -E 's/^[0-9]+ //' "$2" | jq -c "select(.op == \"i\" $3) | .new" | sort)
	[ -n "$copy" ] && [ "$copy" = "$stream" ]
}
if command -v jq >/dev/null; then
	same_docs types "$top/tests/golden/capture-pg/types.out" "" &&
	    why= || why="the documents differ"
	golden_ok "PostgreSQL: the copy rows of typed are capture-pg's inserts of it" "$why"
	same_docs mysql "$top/tests/golden/capture-mysql/mariadb.out" \
	    "and (.new.id == 1 or .new.id == 2)" && why= || why="the documents differ"
	golden_ok "MariaDB: the copy rows of cz are capture-mysql's inserts of it" "$why"
fi
golden_done
