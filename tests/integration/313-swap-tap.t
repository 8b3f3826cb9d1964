#!/usr/bin/env bash
# The supervisor's fourth use: one stage replaced by a program of the
# user's (a jq filter that knows nothing of the control channel) still gets
# positions acknowledged only once stored; and a tapped boundary gives a
# frames file that replays through shaper | writer to an identical index,
# or, where a tap fell behind and dropped frames, a file whose gap frame
# makes its replay stop and say so (312-tap-gap.t forces that case).
. "$(dirname "$0")/../lib.sh"

S=p2o_swap
drop_slot $S; os_drop ${S}_swapped; os_drop ${S}_tapped; os_drop replay_tapped
psql_q -c "drop table if exists swapped, tapped;
	create table swapped (id int primary key, title text);
	create table tapped (id int primary key, title text, n numeric)"

# --- a shaper that is one jq filter between two seds ---------------------
cat > "$T/jq-shaper" <<EOF
#!/bin/sh
# event frames in, operation frames out, for table public.swapped only
sed -u 's/^[0-9]* //' |
jq -c --unbuffered '
  if .k == "row" and .rel == "public.swapped" then
    if .op == "d" then {k: "delete", index: "${S}_swapped", id: (.old.id | tostring), v: .v}
    else {k: "index", index: "${S}_swapped", id: (.new.id | tostring), v: .v,
          doc: (.new | .title |= ascii_upcase)} end
  elif .k == "commit" or .k == "pos" then .
  else empty end' |
LC_ALL=C awk '{ printf "%d %s\n", length(\$0) + 1, \$0; fflush() }'
EOF
chmod +x "$T/jq-shaper"
mkconfig "$T/swap.yaml" $S $S swapped
pg2osync-supervise -c "$T/swap.yaml" --stage shaper="$T/jq-shaper" > "$T/swap.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/swap.log"; st=$?
ok $st "the pipeline is up with a jq filter as its shaper"
[ $st = 0 ] || tail -n 30 "$T/swap.log" | sed 's/^/#   /'
psql_q -c "insert into swapped select g, 't' || g from generate_series(1, 300) g;
	update swapped set title = 'x' || id where id % 2 = 0; delete from swapped where id % 5 = 0"
check "the jq shaper's operations land" -- wait_equal swapped ${S}_swapped 30 \
	"json_build_object('id',id,'title',upper(title))"
target=$(psql_q -c "select pg_current_wal_lsn()")
reached() {
	local ck; ck=$(ckpt_lsn "$T/swap.yaml")
	[ -n "$ck" ] && [ "$(lsn_num "$ck")" -ge "$(lsn_num "$target")" ]
}
wait_for 30 reached
ok $? "the checkpoint follows the stream ($(ckpt_lsn "$T/swap.yaml"))"
kill -TERM $SUP; wait $SUP; st=$?
ok $([ $st = 0 ]; echo $?) "SIGTERM drains (exit $st)"
ck=$(ckpt_lsn "$T/swap.yaml"); sl=$(slot_confirmed $S)
ok $([ -n "$ck" ] && [ "$(lsn_num "$sl")" -le "$(lsn_num "$ck")" ]; echo $?) \
	"the slot ($sl) was never confirmed past the stored checkpoint ($ck)"
ok $([ "$(lsn_num "$sl")" -eq "$(lsn_num "$ck")" ]; echo $?) \
	"and after the drain it is confirmed to exactly the checkpoint"
drop_slot $S

# --- taps on both boundaries: rotation, then a replay at a desk ---------
mkconfig "$T/tap.yaml" $S $S tapped
sed "s/index: ${S}_tapped/index: replay_tapped/" "$T/tap.yaml" > "$T/replay.yaml"
SEL="json_build_object('id',id,'title',title,'n',n::text)"
pg2osync-supervise -c "$T/tap.yaml" --tap events="$T/small.frames" \
	--tap ops="$T/smallops.frames" --tap-max 64K > "$T/tap.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/tap.log"
ok $? "the pipeline is up with two taps"
psql_q -c "insert into tapped select g, 't' || g, g * 1.25 from generate_series(1, 2000) g"
check "the tapped pipeline indexes the table" -- wait_equal tapped ${S}_tapped 30 "$SEL"
kill -TERM $SUP; wait $SUP
ok $? "drained"
for f in small smallops; do
	ok $([ -f "$T/$f.frames.1" ]; echo $?) "a 64 KiB tap rotates ($f: $(stat -c %s "$T/$f.frames.1" "$T/$f.frames" 2>/dev/null | tr '\n' ' ')bytes)"
done
shaper -c "$T/tap.yaml" < "$T/small.frames.1" > /dev/null
ok $? "a rotated file starts and ends on frame boundaries: it replays on its own"
drop_slot $S; os_drop ${S}_tapped
# the second run starts from an empty table: all it writes comes from
# the stream, and its (empty) load leaves only a mark among the ops
psql_q -c "truncate tapped"

pg2osync-supervise -c "$T/tap.yaml" --tap events="$T/all.frames" \
	--tap ops="$T/allops.frames" > "$T/tap2.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/tap2.log"
ok $? "a second tapped run starts from a fresh slot"
# its load of the empty table reads nothing only if it reads before the
# inserts below: rows it copied would be operations the events tap never
# saw (a slow start, as under a sanitizer, let it read them)
wait_for 60 grep -q "'loader' finished: every table is loaded" "$T/tap2.log"
ok $? "and its load of the empty table is done before anything is written"
psql_q -c "insert into tapped select g, 't' || g, g * 1.25 from generate_series(1, 2000) g"
psql_q -c "update tapped set title = 'u' || id where id % 3 = 0; delete from tapped where id % 7 = 0;
	update tapped set id = id + 10000 where id = 11"
psql_q -c "insert into tapped values (20001, 'late', 1); update tapped set title = 'again' where id < 100;
	delete from tapped where id between 100 and 150"
psql_q -c "truncate tapped"
psql_q -c "insert into tapped select g, 'after ' || g, g from generate_series(1, 500) g;
	update tapped set n = n * 2 where id % 4 = 0"
check "changes with a truncate inside land" -- wait_equal tapped ${S}_tapped 30 "$SEL"
kill -TERM $SUP; wait $SUP
ok $? "drained"
# A tap drops copies rather than slow the pipeline, and marks where in its
# file (a gap frame): a replay of such a file must say so, and the exact
# comparisons below then have nothing exact to compare. A file without a
# gap is the whole stream, and must compare exactly.
gap_in() { sed -E 's/^[0-9]+ //' "$1" | grep -q '^{"k":"gap"'; }
if gap_in "$T/all.frames" || gap_in "$T/allops.frames"; then
	diag "a tap fell behind and dropped frames: $(grep -h "were not copied" "$T/tap2.log")"
	env -u P2O_TEST_URL shaper -c "$T/tap.yaml" < "$T/all.frames" > "$T/reshaped.frames" 2> "$T/reshape.err"
	st=$?
	if gap_in "$T/all.frames"; then
		ok $([ $st = 65 ] && grep -q "a gap: the tap that wrote this stream dropped" "$T/reshape.err"; echo $?) \
			"the events tap dropped frames: its replay stops at the gap, exit 65 ($st)"
	else
		ok $st "the events tap is whole: it replays through the shaper"
	fi
	why="a tap dropped frames under load (a gap frame in its file says where), which is no bug"
	skip "the ops tap holds exactly what the shaper makes of the events tap: $why"
	skip "the events tap replays through shaper | writer: $why"
	skip "the replayed index equals the table: $why"
	skip "identical: ids, versions and sources: $why"
else
	# at a desk: the shaper needs neither the source's secret nor the target's
	env -u P2O_TEST_URL shaper -c "$T/tap.yaml" < "$T/all.frames" > "$T/reshaped.frames"
	ok $? "the events tap replays through the shaper without the source's url in the environment"
	grep -v '"k":"mark"' "$T/allops.frames" > "$T/streamops.frames"
	cmp -s "$T/reshaped.frames" "$T/streamops.frames"
	ok $? "the ops tap holds exactly what the shaper makes of the events tap (and the load's mark)"
	[ $_tap_fail = 0 ] || diff "$T/reshaped.frames" "$T/streamops.frames" | head -n 10 | sed 's/^/#   /'
	shaper -c "$T/replay.yaml" < "$T/all.frames" | writer -c "$T/replay.yaml"
	ok $? "the events tap replays through shaper | writer"
	check "the replayed index equals the table" -- compare tapped replay_tapped "$SEL"
	a=$(curl -s -XPOST "$OS_URL/${S}_tapped/_refresh" >/dev/null; curl -s "$OS_URL/${S}_tapped/_search?size=1000&sort=_id" | jq -c '[.hits.hits[] | [._id, ._version, ._source]]')
	b=$(curl -s -XPOST "$OS_URL/replay_tapped/_refresh" >/dev/null; curl -s "$OS_URL/replay_tapped/_search?size=1000&sort=_id" | jq -c '[.hits.hits[] | [._id, ._version, ._source]]')
	ok $([ -n "$a" ] && [ "$a" = "$b" ]; echo $?) "identical: ids, versions and sources"
fi
drop_slot $S
done_testing
