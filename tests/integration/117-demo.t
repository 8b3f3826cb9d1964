#!/usr/bin/env bash
# make demo as a newcomer sees it: examples/demo.sh run inside the test's
# servers (what `make demo` runs once it has built and started its own),
# every line it prints stamped with the time it arrived. The initial load's
# end is read apart from the demo, by `pg2osync status` on a file naming
# the same stream, table and index; the demo must be done within 60 s of
# it. Fails when the demo waits on something that never comes (a metric
# series whose name drifted kept it standing for two minutes after a 9 s
# load), shows the index before the load ended, or fails a step.
# Run under tests/servers/run-with.sh --pg --os.
. "$(dirname "$0")/../lib.sh"

BOUND=60
clean() {
	drop_slot demo
	drop_loads demo products
	os_drop products
	psql_q -c "drop table if exists public.products" >/dev/null 2>&1
}
clean

# the demo's stream as a file of the test's own, for status alone
cat > "$T/status.yaml" <<YAML
source:
  url_env: P2O_TEST_URL
  slot_name: demo
  publication: demo
target:
  url: $OS_URL
$(target_keys)
sync:
  products:
    table: public.products
    index: products
YAML
loaded() {
	pg2osync status -c "$T/status.yaml" --json 2>/dev/null |
		jq -e '.loads | length == 1 and all(.state == "finished")' >/dev/null
}
# the moment status first says the load is finished, into $T/loaded
( while ! loaded; do sleep 0.2; done; echo "$EPOCHREALTIME" > "$T/loaded" ) &
WATCH=$!; cleanup_add $WATCH

# stdin not a terminal: the demo does not stay up for a person to play
(cd "$TOP" && P2O_BIN=$P2O_BIN examples/demo.sh --inside < /dev/null 2>&1; echo "exit $?") |
	while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done > "$T/demo.log"
END=$EPOCHREALTIME
st=$(tail -n1 "$T/demo.log" | awk '{print $3}')
ok $([ "$st" = 0 ]; echo $?) "the demo ends with exit 0 (got $st)"

wait_for 10 test -s "$T/loaded"
kill $WATCH 2>/dev/null; wait $WATCH 2>/dev/null
ok $([ -s "$T/loaded" ]; echo $?) "pg2osync status saw the initial load finish"
LOADED=$(cat "$T/loaded" 2>/dev/null || echo "$END")
after=$(awk -v a="$LOADED" -v b="$END" 'BEGIN { printf "%.1f", b - a }')
start=$(head -n1 "$T/demo.log" | awk '{print $1}')
diag "the demo ran $(awk -v a="$start" -v b="$END" 'BEGIN { printf "%.1f", b - a }') s; the load ended at $(awk -v a="$start" -v b="$LOADED" 'BEGIN { printf "%.1f", b - a }') s"
# where the time after the load went: each step's line, from the load's end
awk -v l="$LOADED" '/== / { printf "%s %+.1f s", sep, $1 - l; sep = ","; sub(/^[0-9.]+ /, ""); gsub(/\033\[[0-9]*m|== /, ""); printf " %s", $0 }
	END { print "" }' "$T/demo.log" | sed 's/^/# after the load:/'
ok $(awk -v t="$after" -v m=$BOUND 'BEGIN { exit !(t <= m) }'; echo $?) \
	"the demo is done $after s after the load ended (at most $BOUND s)"

# what the newcomer was shown: the count once the load is over, each step
count=$(grep -A1 'opensearch> GET products/_count' "$T/demo.log" | sed -n 2p | cut -d' ' -f2- | jq -r .count 2>/dev/null)
ok $([ "$count" = 20000 ]; echo $?) "after 'the initial load runs beside the stream' the index holds the 20,000 rows (shown: $count)"
ids() {	# ids STEP: the ids the demo listed after the step's heading
	awk -v s="== $1" 'index($0, s) {on = 1; next} on && /==/ {exit} on' "$T/demo.log" |
		cut -d' ' -f2- | grep '^{"_id"' | jq -r ._id | tr '\n' ' '
}
ok $([ "$(ids insert)" = "1 2 " ] && [ "$(ids 'primary key change')" = "1 20 " ] &&
	[ "$(ids delete)" = "20 " ] && [ -z "$(ids truncate)" ]; echo $?) \
	"each change landed: insert [$(ids insert)], key change [$(ids 'primary key change')], delete [$(ids delete)], truncate [$(ids truncate)]"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/demo.log" | tail -n 60
clean
done_testing
