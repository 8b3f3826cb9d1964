#!/usr/bin/env bash
# What a copy row holds: the document the stream sends for the same row,
# byte for byte (capture-pg stand-alone captures the inserts, the loader
# stand-alone reads the same rows); every row of a table with a key of
# three columns and awkward values exactly once; a partitioned table read
# through its root; a parent table with the rows of the tables inheriting
# from it (the stream files their changes under it too), in its columns.
. "$(dirname "$0")/../lib.sh"

S=ld_rows
drop_slot $S
psql_q <<'SQL'
drop table if exists ld_types, ld_comp, ld_part, ld_child, ld_parent, ld_fkey, ld_tkey;
drop type if exists ld_mood;
drop domain if exists ld_posint;
create type ld_mood as enum ('sad', 'ok', 'happy');
create domain ld_posint as int check (value > 0);
create table ld_types (
	id int primary key, t text, vc varchar(20), bp char(5), i2 smallint,
	i8 bigint, f4 real, f8 double precision, num numeric, num2 numeric(10,2),
	b bool, raw bytea, j json, jb jsonb, u uuid, ts timestamp,
	tstz timestamptz, d date, tm time, tmtz timetz, iv interval, ia int[],
	ta text[], na numeric[], tsa timestamptz[], ba bytea[], ja jsonb[],
	m2 int[], mood ld_mood, pos ld_posint, ip inet, x xml, r int4range,
	dropme text, gen int generated always as (id * 2) stored, last text);
alter table ld_types drop column dropme;
SQL
ok $? "a table of every kind of column, a dropped one and a generated one"
mkconfig "$T/cfg.yaml" $S $S ld_types

capture-pg -c "$T/cfg.yaml" > "$T/stream.frames" 2> "$T/cap.err" &
cap=$!
wait_for 30 slot_active $S
ok $? "capture-pg streams the table"
psql_q <<'SQL'
insert into ld_types (id, t, vc, bp, i2, i8, f4, f8, num, num2, b, raw, j, jb,
	u, ts, tstz, d, tm, tmtz, iv, ia, ta, na, tsa, ba, ja, m2, mood, pos, ip,
	x, r, last) values
(1, 'plain', 'vc', 'ab', 1, 9223372036854775807, 1.5, 3.141592653589793,
	12.50, 7.25, true, '\x00ff10', '{"a": 1}', '{"b": [1, 2]}',
	'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2026-11-30 08:00:00.5',
	'2026-11-30 08:00:00.123456+05:30', '2026-11-30', '08:00:00.25',
	'08:00:00+02', '1 day 2 hours', '{1,2,NULL}', '{"a b","q\"x",NULL}',
	'{1.5,NaN}', '{"2026-01-01 00:00:00+00"}', '{"\\x00ff"}',
	'{"{\"k\": 1}"}', '{{1,2},{3,4}}', 'happy', 7, '10.0.0.1/8',
	'<a>x</a>', '[1,5)', 'last'),
(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(3, E'tab\there\nnl\rcr \\ back "dq" ''sq'' \u00e9\u65e5\U0001F600 \x01',
	E'\u00fc', 'xyz  ', -32768, -9223372036854775808, 'NaN', '-Infinity',
	'NaN', -0.01, false,
	(select string_agg(set_byte('\x00'::bytea, 0, g), ''::bytea) from generate_series(0, 255) g),
	E'{\n\t"a" :\t[1,\n 2], "s": "x\\ty"\n}', '{"nested": {"deep": [null, true, "s\\n"]}}',
	'00000000-0000-0000-0000-000000000000', 'infinity', '-infinity',
	'0044-03-15 BC', '23:59:59.999999', '00:00:00-08', '-1 year -2 mons +3 days -04:05:06.5',
	'[0:1]={7,8}', E'{"", "NULL", "with\\\\back"}', '{}', '{}', '{NULL}',
	'{}', '{{NULL,1},{2,NULL}}', 'sad', 2147483647, '::1', '<x/>', 'empty', ''),
(4, '', '', '', 0, 0, '-0', 1e+300, '1234567890123456789012345678901234567890.0123456789',
	0, true, '', 'null', '[]', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
	'2000-01-01 00:00:00', '1970-01-01 00:00:00+00', '2000-02-29', '00:00:00',
	'12:34:56.789+05:30', '0 seconds', '{}', '{}', '{0.000000000000000001}',
	'{"2026-06-01 12:00:00.5+00","infinity"}', '{"\\x"}', '{"null","[]"}',
	'{}', 'ok', 1, '192.168.0.1', '', '(,)', E'\\N');
SQL
ok $? "four rows of awkward values inserted"
for i in $(seq 100); do
	[ "$(grep -c '"k":"commit"' "$T/stream.frames")" -ge 1 ] && break; sleep 0.2
done
kill -TERM $cap; wait $cap

loader -c "$T/cfg.yaml" > "$T/copy.frames" 2> "$T/loader.err"
ok $? "the loader reads the same rows"
python3 "$TOP/tests/helper/copy-vs-stream.py" "$T/stream.frames" "$T/copy.frames" 4 > "$T/cmp.out" 2>&1
ok $? "each copy row's key and \"new\" are the stream's, byte for byte: $(tail -n 1 "$T/cmp.out")"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/cmp.out" | head -n 20
ok $(grep -q '"gen"\|"dropme"' "$T/copy.frames"; [ $? = 1 ]; echo $?) "no generated or dropped column"
drop_slot $S

# a key of three columns holding quotes, backslashes, separators, unicode
psql_q <<'SQL'
create table ld_comp (tenant text, day date, n numeric, note text,
	primary key (tenant, day, n));
insert into ld_comp
select t, date '2026-01-01' + d, n / 4.0, 'x'
from unnest(array['', ' ', 'O''Brien', E'back\\slash', E'\u65e5\u672c', E'tab\there',
	E'nl\nhere', 'pipe|per%cent', E'\u00dcn\u00efcode', '"dq"', 'zz']) t,
	generate_series(0, 29) d, generate_series(-5, 4) n;
analyze ld_comp;
SQL
mkconfig "$T/comp.yaml" $S $S ld_comp
loader -c "$T/comp.yaml" --range-rows 300 > "$T/comp.frames" 2> "$T/comp.err"
ok $? "a three-column key loads"
marks=$(grep -c '"k":"mark"' "$T/comp.frames")
ok $([ "$marks" -ge 6 ]; echo $?) "in $marks ranges"
sed -E 's/^[0-9]+ //' "$T/comp.frames" | jq -c 'select(.k == "row") | [.new.tenant, .new.day, .new.n]' | sort > "$T/comp.keys"
psql_q -c "select json_build_array(tenant, day::text, n::text) from ld_comp" | jq -c . | sort > "$T/comp.want"
ok $(cmp -s "$T/comp.keys" "$T/comp.want"; echo $?) "every row exactly once ($(wc -l < "$T/comp.keys") of $(wc -l < "$T/comp.want"))"
grep '"k":"mark"' "$T/comp.frames" | head -n 1 | grep -q '"key":\["tenant","day","n"\],"types":\["text","date","numeric"\]'
ok $? "the progress names the key and its types"
# keys whose text must read back exactly: floats, typmods, enums, uuids
psql_q <<'SQL'
drop table if exists ld_fkey, ld_tkey;
create table ld_fkey (f float8 primary key);
insert into ld_fkey select x from (select g / 7.0 + 0.1 + 0.2 as x from generate_series(-300, 300) g
	union select unnest(array['NaN', '-Infinity', 'Infinity', '1e-300', '-0.30000000000000004']::float8[])) s;
create table ld_tkey (code char(3), flags bit(4), v varchar(5), mood ld_mood, u uuid,
	primary key (code, flags, v, mood, u));
insert into ld_tkey select chr(97 + g % 5), (g % 16)::bit(4), 'v' || g % 3,
	(array['sad', 'ok', 'happy'])[1 + g % 3]::ld_mood, md5(g::text)::uuid
from generate_series(1, 600) g;
analyze ld_fkey; analyze ld_tkey;
SQL
mkconfig "$T/keys.yaml" $S $S ld_fkey ld_tkey
loader -c "$T/keys.yaml" --range-rows 60 > "$T/keys.frames" 2> "$T/keys.err"
ok $? "float, char(3), bit(4), varchar(5), enum and uuid keys load"
n=$(sed -E 's/^[0-9]+ //' "$T/keys.frames" | jq -c 'select(.k == "row" and .rel == "public.ld_fkey") | .new.f' | sort -u | wc -l)
ok $([ "$n" = 606 ] && [ "$(grep -c '"rel":"public.ld_fkey"' "$T/keys.frames")" = 606 ] &&
	[ "$(grep -c '"k":"mark","id":"public.ld_fkey' "$T/keys.frames")" -ge 5 ]; echo $?) "a float key: every row once across the ranges ($n)"
n=$(sed -E 's/^[0-9]+ //' "$T/keys.frames" | jq -c 'select(.k == "row" and .rel == "public.ld_tkey") | .new.u' | sort -u | wc -l)
ok $([ "$n" = 600 ] && [ "$(grep -c '"rel":"public.ld_tkey"' "$T/keys.frames")" = 600 ] &&
	grep -q '"types":\["character(3)","bit(4)","character varying(5)","public.ld_mood","uuid"\]' "$T/keys.frames"; echo $?) \
	"a five-column key of typed columns: every row once, cast to the exact types ($n)"

# stderr on a terminal: one line rewritten in place instead of a log line
# per range
script -q -e -c "loader -c '$T/comp.yaml' --range-rows 300 > /dev/null" "$T/tty.out" > /dev/null
ok $([ $? = 0 ] && grep -q $'\rloader: public.ld_comp: 3300 rows (100 %), .* rows/s, done' "$T/tty.out" &&
	! grep -q "range 1 of" "$T/tty.out"; echo $?) "on a terminal: one progress line, rewritten"

# a partitioned table through its root; a parent without its children
psql_q <<'SQL'
create table ld_part (id int primary key, v text) partition by range (id);
create table ld_part_a partition of ld_part for values from (minvalue) to (1000);
create table ld_part_b partition of ld_part for values from (1000) to (2000);
create table ld_part_c partition of ld_part for values from (2000) to (maxvalue);
insert into ld_part select g, 'v' || g from generate_series(1, 3000) g;
analyze ld_part;
create table ld_parent (id int primary key, v text);
create table ld_child (extra int) inherits (ld_parent);
insert into ld_parent select g, 'p' from generate_series(1, 100) g;
insert into ld_child select g, 'c', 1 from generate_series(101, 150) g;
SQL
mkconfig "$T/part.yaml" $S $S ld_part ld_parent
loader -c "$T/part.yaml" --range-rows 500 > "$T/part.frames" 2> "$T/part.err"
ok $? "a partitioned table and an inherited one load"
n=$(sed -E 's/^[0-9]+ //' "$T/part.frames" | jq -r 'select(.k == "row" and .rel == "public.ld_part") | .new.id' | sort -u | wc -l)
ok $([ "$n" = 3000 ] && [ "$(grep -c '"rel":"public.ld_part"' "$T/part.frames")" = 3000 ]; echo $?) "the partitioned table: all 3000 rows once, under its own name ($n)"
n=$(grep -c '"rel":"public.ld_parent"' "$T/part.frames")
x=$(grep '"rel":"public.ld_parent"' "$T/part.frames" | grep -c '"extra"')
ok $([ "$n" = 150 ] && [ "$x" = 0 ]; echo $?) "the parent: its 100 rows and its child's 50, in the parent's columns ($n, $x with the child's own)"

if [ $_tap_fail -gt 0 ]; then
	for f in cap loader comp keys part; do diag "$f.err:"; tail -n 8 "$T/$f.err" | sed 's/^/#   /'; done
fi
done_testing
