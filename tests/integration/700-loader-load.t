#!/usr/bin/env bash
# The loader stand-alone: a 200,000-row table of many column types (and a
# 12 kB out-of-line text on some rows), cut into ranges, through
# shaper --load-fd | writer, gives an index equal to the table by content.
. "$(dirname "$0")/../lib.sh"

S=ld_load
drop_slot $S; os_drop ${S}_ld_big
psql_q <<'SQL'
drop table if exists ld_big;
create table ld_big (
	id bigint primary key, name text, price numeric(14,4), big numeric,
	raw bytea, doc jsonb, meta json, tags text[], nums int[],
	at timestamptz, day date, local timestamp, flag boolean, score float8,
	body text);
insert into ld_big
select g, 'name ' || g || E' \t"q"\\ ' || chr(1000 + g % 500),
	(g * 1.2345)::numeric(14,4), (10::numeric ^ 30 + g) * (case when g % 2 = 0 then -1 else 1 end),
	decode(md5(g::text), 'hex'), jsonb_build_object('g', g, 'even', g % 2 = 0, 'l', jsonb_build_array(g, -g)),
	json_build_object('n', g)::json, array['t' || g % 7, null, 'a b'], array[g, -g],
	timestamptz '2026-01-01 00:00:00+00' + g * interval '1.5 seconds', date '2026-01-01' + g % 365,
	timestamp '2026-01-01 12:00:00' + g * interval '1 millisecond', g % 3 = 0, g / 7.0,
	case when g % 100 = 0 then (select string_agg(md5(g::text || i::text), '') from generate_series(1, 375) i)
	     when g % 5 = 0 then null else 'short ' || g end
from generate_series(1, 200000) g;
analyze ld_big;
SQL
ok $? "a 200,000-row table"
toasted=$(psql_q -c "select count(*) from ld_big where pg_column_size(body) > 2000")
ok $([ "$toasted" -ge 1000 ]; echo $?) "with $toasted 12 kB text values stored out of line"
mkconfig "$T/cfg.yaml" $S $S ld_big

# The shaper ends at EOF on its stdin even while its load fd is open: its
# stdin stays open until the index holds every row.
mkfifo "$T/hold"
( shaper -c "$T/cfg.yaml" --load-fd 4 \
	4< <(loader -c "$T/cfg.yaml" --range-rows 20000 2>"$T/loader.err" | tee "$T/load.frames"; echo "${PIPESTATUS[0]}" > "$T/loader.rc") \
	< "$T/hold" 2>"$T/shaper.err" | writer -c "$T/cfg.yaml" 2>"$T/writer.err" ) &
pipe=$!
exec {hold}>"$T/hold"
for i in $(seq 240); do
	[ -s "$T/loader.rc" ] && [ "$(os_count ${S}_ld_big)" = 200000 ] && break
	kill -0 $pipe 2>/dev/null || break
	sleep 1
done
exec {hold}>&-
wait $pipe
ok $([ "$(cat "$T/loader.rc" 2>/dev/null)" = 0 ]; echo $?) "the loader exits 0"
marks=$(grep -c '"k":"mark"' "$T/load.frames")
ok $([ "$marks" -ge 8 ] && [ "$marks" -le 12 ]; echo $?) "cut into about 10 ranges of 20,000 rows: $marks marks"
ok $(grep '"k":"mark"' "$T/load.frames" | tail -n 1 | grep -q '"done":true'; echo $?) "the last mark says the table is done"
ok $([ "$(grep -c '"k":"row"' "$T/load.frames")" = 200000 ]; echo $?) "200,000 copy rows"
ok $(! grep -q '"pos"' "$T/load.frames"; echo $?) "none carries a position"

export PGOPTIONS="$PGOPTIONS -c TimeZone=UTC"
SEL="json_build_object('id', id, 'name', name, 'price', price::text, 'big', big::text,
	'raw', replace(encode(raw, 'base64'), E'\n', ''), 'doc', doc, 'meta', meta, 'tags', tags,
	'nums', nums, 'at', replace(replace(at::text, ' ', 'T'), '+00', 'Z'), 'day', day::text,
	'local', replace(local::text, ' ', 'T'), 'flag', flag, 'score', score, 'body', body)"
check "the index equals the table by content" -- compare ld_big ${S}_ld_big "$SEL"

# a reader that is slow to start: the loader blocks on stdout instead of
# holding the table (125 MB of frames) in memory
/usr/bin/time -f %M -o "$T/rss" loader -c "$T/cfg.yaml" --range-rows 20000 2>/dev/null |
	{ sleep 2; cat > /dev/null; }
rss=$(tail -n 1 "$T/rss")
ok $([ "$rss" -lt 65536 ]; echo $?) "memory stays bounded behind a slow reader: max RSS $rss kB"

grep -q "replication slot '$S' does not exist: loading without watching its WAL" "$T/loader.err"
ok $? "stand-alone without a slot: a warning, and the load goes on"
grep -q "range 10 of" "$T/loader.err"
ok $? "a log line per range when stderr is not a terminal"

if [ $_tap_fail -gt 0 ]; then
	for f in loader shaper writer; do diag "$f.err:"; tail -n 15 "$T/$f.err" | sed 's/^/#   /'; done
fi
os_drop ${S}_ld_big
done_testing
