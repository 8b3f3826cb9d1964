#!/usr/bin/env bash
# The stages work in a plain shell pipeline, and a captured frames file
# replayed through shaper | writer gives the identical index.
. "$(dirname "$0")/../lib.sh"

S=p2o_adhoc
drop_slot $S; os_drop ${S}_adhoc; os_drop replay_adhoc
psql_q -c "drop table if exists adhoc; create table adhoc (id int primary key, name text, n numeric, j jsonb)"
mkconfig "$T/cfg.yaml" $S $S adhoc
# the same sync, into another index, for the replay
sed "s/index: ${S}_adhoc/index: replay_adhoc/" "$T/cfg.yaml" > "$T/replay.yaml"

capture-pg -c "$T/cfg.yaml" 2>"$T/cap.err" | tee "$T/s.frames" | shaper -c "$T/cfg.yaml" 2>"$T/sh.err" | writer -c "$T/cfg.yaml" 2>"$T/wr.err" &
wait_for 30 slot_active $S
ok $? "ad-hoc pipeline connected"
psql_q <<'SQL'
insert into adhoc select g, 'n' || g, g * 1.5, jsonb_build_object('g', g) from generate_series(1, 500) g;
update adhoc set name = 'changed' where id % 3 = 0;
delete from adhoc where id % 7 = 0;
update adhoc set id = id + 1000 where id = 5;
SQL
SEL="json_build_object('id',id,'name',name,'n',n::text,'j',j)"
check "capture-pg | shaper | writer indexes the table" -- wait_equal adhoc ${S}_adhoc 30 "$SEL"
sleep 1
pkill -TERM -f "capture-pg -c $T/cfg.yaml"
wait
ok $(grep -c '"k":"row"' "$T/s.frames" | awk '{exit !($1 >= 500)}'; echo $?) "frames file captured ($(wc -l < "$T/s.frames") frames)"
sed -E 's/^[0-9]+ //' "$T/s.frames" | jq -e . > /dev/null
ok $? "stripping the length prefixes leaves NDJSON jq reads"

shaper -c "$T/replay.yaml" < "$T/s.frames" | writer -c "$T/replay.yaml"
ok $? "replay through shaper | writer exits 0"
check "replayed index equals the table" -- compare adhoc replay_adhoc "$SEL"
a=$(curl -s -XPOST "$OS_URL/${S}_adhoc/_refresh" >/dev/null; curl -s "$OS_URL/${S}_adhoc/_search?size=1000&sort=_id" | jq -c '[.hits.hits[] | [._id, ._version, ._source]]')
b=$(curl -s -XPOST "$OS_URL/replay_adhoc/_refresh" >/dev/null; curl -s "$OS_URL/replay_adhoc/_search?size=1000&sort=_id" | jq -c '[.hits.hits[] | [._id, ._version, ._source]]')
ok $([ -n "$a" ] && [ "$a" = "$b" ]; echo $?) "replayed index is identical: ids, versions and sources"

# a torn frames file: the writer stops at the tear, exit 65, with the offset
head -c $(( $(stat -c %s "$T/s.frames") - 7 )) "$T/s.frames" > "$T/torn.frames"
shaper -c "$T/replay.yaml" < "$T/torn.frames" > /dev/null 2> "$T/torn.err"
st=$?
ok $([ $st = 65 ]; echo $?) "a torn stream ends the shaper with exit 65 (got $st)"
grep -q 'truncated frame' "$T/torn.err"; ok $? "and says where: $(head -c 200 "$T/torn.err")"
[ $_tap_fail -gt 0 ] && for f in cap sh wr; do diag "$f.err:"; tail -n 15 "$T/$f.err" | sed 's/^/#   /'; done
drop_slot $S
done_testing
