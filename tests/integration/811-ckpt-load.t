#!/usr/bin/env bash
# ckpt serve and the initial load's state: which tables still need their
# load (a checkpoint alone never says a load finished), the progress of
# each stored behind the writer's marks, and the index settings a load
# suspends — recorded before the first suspension, restored at its end,
# and restored at the next start when a load ended without it.
. "$(dirname "$0")/../lib.sh"

S=p2o_ckload
drop_slot $S
for t in la lb; do os_drop ${S}_$t; curl -sS -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fload%2Fpublic.$t" >/dev/null 2>&1; done
psql_q -c "drop table if exists la, lb; create table la (id int primary key); create table lb (id int primary key)"
mkconfig "$T/cfg.yaml" $S $S la lb
# lb exists before the load with a refresh interval of its own
curl -sS -XPUT "$OS_URL/${S}_lb" -H 'Content-Type: application/json' \
	-d '{"settings":{"index":{"refresh_interval":"7s","number_of_replicas":0}}}' >/dev/null

frame() { printf '%d %s\n' $((${#1} + 1)) "$1"; }
# serve FRAMES...: the replies of one ckpt serve, prefixes stripped
serve() {
	local f
	for f in "$@"; do frame "$f"; done | ckpt -c "$T/cfg.yaml" serve 2>>"$T/serve.err" | sed -E 's/^[0-9]+ //'
}
setting() {	# setting INDEX NAME -> its own value, or "null"
	curl -s "$OS_URL/$1/_settings?flat_settings=true" | jq -r --arg i "$1" --arg n "index.$2" '.[$i].settings[$n] // "null"'
}

out=$(serve '{"k":"get"}')
load=$(echo "$out" | jq -c 'select(.k == "load")')
check "a first start lists both tables, from the start" -- \
	test "$load" = '{"k":"load","tables":[{"table":"public.la"},{"table":"public.lb"}]}'
ok $([ "$(setting ${S}_la refresh_interval)" = -1 ]; echo $?) "la: created and suspended ($(setting ${S}_la refresh_interval))"
ok $([ "$(setting ${S}_lb refresh_interval)" = -1 ] && [ "$(setting ${S}_lb number_of_replicas)" = 0 ]; echo $?) \
	"lb: its own 7s suspended"

out=$(serve '{"k":"marked","id":"public.lb#1","table":"public.lb","progress":{"ranges_done":1,"bounds":["x"]}}')
check "a mark is confirmed once its progress is stored" -- \
	test "$out" = '{"k":"confirm","id":"public.lb#1"}'
out=$(serve '{"k":"get"}')
load=$(echo "$out" | jq -c 'select(.k == "load")')
check "an interrupted load resumes with its progress" -- \
	test "$load" = '{"k":"load","tables":[{"table":"public.la"},{"table":"public.lb","progress":{"ranges_done":1,"bounds":["x"]}}]}'
ok $([ "$(setting ${S}_lb refresh_interval)" = -1 ]; echo $?) \
	"still suspended: the originals were not read again from the suspended index"

out=$(serve '{"k":"marked","id":"public.lb#2","table":"public.lb","progress":{"ranges_done":2},"done":true}')
check "the last mark is confirmed" -- test "$out" = '{"k":"confirm","id":"public.lb#2"}'
ok $([ "$(setting ${S}_lb refresh_interval)" = 7s ] && [ "$(setting ${S}_lb number_of_replicas)" = 0 ]; echo $?) \
	"the load's end restores lb's own settings ($(setting ${S}_lb refresh_interval))"
out=$(serve '{"k":"get"}')
check "a finished table is not loaded again" -- \
	test "$(echo "$out" | jq -c 'select(.k == "load")')" = '{"k":"load","tables":[{"table":"public.la"}]}'

# a load whose end was stored but whose restore was not (a crash between
# the two): the next start restores
doc="$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fload%2Fpublic.la"
curl -s "$doc" | jq -c '._source | .done = true | .restored = false' > "$T/doc.json"
curl -sS -XPUT "$doc?refresh=true" -H 'Content-Type: application/json' -d @"$T/doc.json" >/dev/null
ok $([ "$(setting ${S}_la refresh_interval)" = -1 ]; echo $?) "la is still suspended"
out=$(serve '{"k":"get"}')
check "la is done" -- test "$(echo "$out" | jq -c 'select(.k == "load")')" = '{"k":"load","tables":[]}'
ok $([ "$(setting ${S}_la refresh_interval)" = null ] && [ "$(setting ${S}_la number_of_replicas)" = 1 ]; echo $?) \
	"and its settings are back to what it was created with ($(setting ${S}_la refresh_interval), $(setting ${S}_la number_of_replicas))"

# an index deleted behind the pipeline's back holds none of what the
# progress says: the table is loaded again, from the start
os_drop ${S}_lb
out=$(serve '{"k":"get"}')
check "a finished table whose index is gone is loaded again from the start" -- \
	test "$(echo "$out" | jq -c 'select(.k == "load")')" = '{"k":"load","tables":[{"table":"public.lb"}]}'
ok $([ "$(setting ${S}_lb refresh_interval)" = -1 ]; echo $?) "into a new index, suspended"
grep -q "loading it again from the start" "$T/serve.err"
ok $? "and the log says why"

serve '{"k":"marked","id":"x#1","table":"public.nosuch","progress":{}}' >/dev/null
grep -q "no sync section" "$T/serve.err"
ok $? "a mark for a table the configuration does not name is refused"
sed "s/publication: $S/publication: other/" "$T/cfg.yaml" > "$T/foreign.yaml"
frame '{"k":"get"}' | ckpt -c "$T/foreign.yaml" serve > /dev/null 2>"$T/foreign.err"; st=$?
ok $([ $st = 66 ]; echo $?) "progress of another stream is refused with 66 (got $st)"
for t in la lb; do curl -sS -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fload%2Fpublic.$t" >/dev/null; done
drop_slot $S
done_testing
