#!/usr/bin/env bash
# A tap whose file cannot keep up drops copies rather than slow the
# pipeline, and says so in the file: the events tap writes into a FIFO
# nobody reads while 10,000 rows stream, so the index still gets every row
# while the tap's file falls behind; the file then holds a gap frame where
# frames are missing, and a replay of it (shaper, shaper | writer) stops
# there with exit 65 naming the gap instead of passing for the stream.
. "$(dirname "$0")/../lib.sh"

S=p2o_tapgap
drop_slot $S; drop_loads $S gap_items; os_drop ${S}_gap_items; os_drop gap_replay
psql_q -c "drop table if exists gap_items; create table gap_items (id int primary key, body text)"
mkconfig "$T/cfg.yaml" $S $S gap_items
sed "s/index: ${S}_gap_items/index: gap_replay/" "$T/cfg.yaml" > "$T/replay.yaml"
mkfifo "$T/events.fifo"
pg2osync-supervise -c "$T/cfg.yaml" --tap events="$T/events.fifo" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/sup.log"
ok $? "the pipeline is up, its events tap writing into a FIFO nobody reads"
wait_for 60 grep -q "'loader' finished" "$T/sup.log"

psql_q -c "insert into gap_items select g, repeat(md5(g::text), 32) from generate_series(1, 10000) g"
check "every row reaches the index though the tap's file is stuck" -- \
	wait_equal gap_items ${S}_gap_items 60 "json_build_object('id',id,'body',body)"
grep -q "tap 'events': '$T/events.fifo' is behind: frames are dropped" "$T/sup.log"
ok $? "the tap says it drops frames from its file"

# the file is read only now; the drain waits for the tap to hand it over
cat "$T/events.fifo" > "$T/events.frames" &
CAT=$!; cleanup_add $CAT
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains (exit 0)"
wait $CAT
grep -qE "tap 'events': [0-9]+ frames \([0-9]+ bytes\) were not copied to '$T/events.fifo'; 1 gap frame there says where" "$T/sup.log"
ok $? "and counts what it dropped: $(grep -o "[0-9]* frames ([0-9]* bytes) were not copied" "$T/sup.log")"
gaps=$(sed -E 's/^[0-9]+ //' "$T/events.frames" | jq -c 'select(.k == "gap")')
ok $([ "$(echo "$gaps" | grep -c '"k":"gap"')" = 1 ]; echo $?) "the file holds a gap frame: $gaps"
rows=$(sed -E 's/^[0-9]+ //' "$T/events.frames" | jq -c 'select(.k == "row")' | wc -l)
dropped=$(echo "$gaps" | jq -r .frames)
ok $([ "$rows" -gt 0 ] && [ "$rows" -lt 10000 ]; echo $?) \
	"with the rows before it ($rows of 10000; $dropped frames missing)"

shaper -c "$T/cfg.yaml" < "$T/events.frames" > "$T/ops.frames" 2> "$T/shaper.err"
ok $([ $? = 65 ]; echo $?) "a replay through the shaper refuses the file as incomplete: exit 65"
grep -q "a gap: the tap that wrote this stream dropped $dropped frames" "$T/shaper.err"
ok $? "naming the gap: $(cat "$T/shaper.err")"
ok $([ "$(sed -E 's/^[0-9]+ //' "$T/ops.frames" | tail -n 1 | jq -r .k)" = gap ]; echo $?) \
	"its output ends with the gap, passed on"
set -o pipefail
shaper -c "$T/replay.yaml" < "$T/events.frames" 2>/dev/null | writer -c "$T/replay.yaml" 2> "$T/writer.err"
st=$?
set +o pipefail
ok $([ $st = 65 ]; echo $?) "shaper | writer: the replay does not pass for complete (exit $st)"
writer -c "$T/replay.yaml" < "$T/ops.frames" 2> "$T/writer2.err"
ok $([ $? = 65 ]; echo $?) "and the writer alone stops at the gap too: $(grep -m1 gap "$T/writer2.err")"
grep -q "a gap: the tap that wrote this stream dropped $dropped frames" "$T/writer.err" &&
	grep -q "a gap: the tap that wrote this stream dropped $dropped frames" "$T/writer2.err" &&
	! grep -q "unknown operation kind" "$T/writer.err" "$T/writer2.err"
ok $? "the writer names the gap and what it dropped, as the shaper does"

# an ops file by hand: a transaction, a gap, a transaction. The first is
# written and its position reported; nothing after the gap is
os_drop gap_ops
frames() { while IFS= read -r j; do printf '%d %s\n' $((${#j} + 1)) "$j"; done; }
printf '%s\n' '{"k":"index","index":"gap_ops","id":"1","v":100,"doc":{"id":1}}' \
	'{"k":"commit","pos":200,"text":"0/C8","n":1}' \
	'{"k":"gap","frames":3,"bytes":210}' \
	'{"k":"index","index":"gap_ops","id":"2","v":300,"doc":{"id":2}}' \
	'{"k":"commit","pos":400,"text":"0/190","n":1}' | frames > "$T/gap-ops.frames"
P2O_LOG_LEVEL=info writer -c "$T/replay.yaml" < "$T/gap-ops.frames" 2> "$T/writer3.err"
st=$?
ok $([ $st = 65 ]; echo $?) "an ops file with a gap: exit 65 ($st)"
grep -q "stdin: offset 115: a gap: the tap that wrote this stream dropped 3 frames (210 bytes) here" "$T/writer3.err"
ok $? "naming where and how much: $(grep -m1 gap "$T/writer3.err")"
ids=$(curl -s -XPOST "$OS_URL/gap_ops/_refresh" >/dev/null; curl -s "$OS_URL/gap_ops/_search?sort=_id" | jq -c '[.hits.hits[]._id]')
ok $([ "$ids" = '["1"]' ]; echo $?) "the transaction before the gap is written, none after it: $ids"
os_drop gap_ops
drop_slot $S
done_testing
