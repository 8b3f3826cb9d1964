#!/usr/bin/env bash
# The loader on MariaDB, stand-alone and under a stand-in supervisor
# (tests/helper/loader-supervisor.py): a copy row holds the document the
# stream sends for the same row, byte for byte, on every kind of column;
# a key of five typed columns with awkward values is read exactly once
# across many chunks; marks are confirmed one by one and nothing is read
# past a mark before its confirmation; a load resumes exactly after the
# last key its progress recorded; copies are versioned by the checkpoint's
# generation base plus the coordinate; the refusals with their exit codes.
# Run under tests/servers/run-with.sh --mariadb.
. "$(dirname "$0")/../mysql-lib.sh"

SUP=(python3 "$TOP/tests/helper/loader-supervisor.py")
my_sql "DROP TABLE IF EXISTS t68_types, t68_comp, t68_res, t68_enum;
CREATE TABLE t68_types (id int PRIMARY KEY, name varchar(20),
	price decimal(10,2), neg decimal(30,10), f float, d double,
	e enum('a','b''c'), s set('x','y','z'), b bit(12), vb varbinary(8),
	bin binary(4), dtm datetime(6), dt0 datetime, ts timestamp(3) NULL,
	j json, big bigint unsigned, small smallint, l1 varchar(10) CHARACTER SET latin1,
	c char(5), y year, t time(2), dd date, bl blob, tx text, mt mediumtext,
	ti tinyint, u8 tinyint unsigned) DEFAULT CHARSET=utf8mb4"
ok $? "a table of every kind of column"
my_config "$T/types.yaml" t68 t68_types

cap_start "$T/cap.log" "$T/stream.frames" -c "$T/types.yaml"
ok $? "capture-mysql streams the table"
my_raw "SET sql_mode = ''; INSERT INTO t68_types VALUES
(1, 'lamp', 12.50, -12345678901234567890.0123456789, 0.1, 0.1, 'b''c', 'x,z',
	b'101010101010', x'00ff', x'01020304', '2024-02-29 13:14:15.123456',
	'1999-12-31 23:59:59', '2024-02-29 13:14:15.123',
	'{\"a\": [1, 2.5, \"s\\\\n\"], \"b\": {\"c\": null}, \"u\": \"\\\\u00e9\"}',
	18446744073709551615, -32768, 'caf\\xe9 ok', 'ab ', 2024, '-838:59:59.00',
	'2024-02-29', x'00010203ff', 'tab\there\nnl \"dq\" \\\\ back é日😀',
	REPEAT('m', 3000), -128, 255),
(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL),
(3, '', 0.00, 0, -1.5e-30, 1e300, '', '', b'0', '', x'00000000',
	'1000-01-01 00:00:00', '9999-12-31 23:59:59', '1970-01-01 00:00:01',
	'[]', 0, 32767, '', '', 1901, '00:00:00', '1000-01-01', '', '', '', 0, 0),
(4, 'zero dates', 99999999.99, 1, 3.4e38, -0.0, 'a', 'x,y,z', b'111111111111',
	x'ffffffffffffffff', 'abcd', '0000-00-00 00:00:00', '2038-01-19 03:14:07',
	NULL, '{\"n\": 1e2, \"f\": -0.5, \"big\": 12345678901234567890}', 1, 0,
	'\\xfc', '  x', 0, '12:00:00.5', '0000-00-00', NULL, 'ü', NULL, 1, 1)" 2> "$T/insert.err"
ok $? "four rows of awkward values inserted $(grep ERROR "$T/insert.err")"
wait_frames 30 "$T/stream.frames" '.k=="row"' 4
ok $? "the stream carries them"
cap_stop

loader -c "$T/types.yaml" > "$T/copy.frames" 2> "$T/loader.log"
ok $? "the loader reads the same rows"
python3 "$TOP/tests/helper/copy-vs-stream.py" "$T/stream.frames" "$T/copy.frames" 4 > "$T/cmp.out" 2>&1
ok $? "each copy row's key and \"new\" are the stream's, byte for byte: $(tail -n 1 "$T/cmp.out")"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/cmp.out" | head -n 20

# a key of five typed columns holding quotes, backslashes, collations,
# bytes, fractions, negative numbers
my_raw "CREATE TABLE t68_comp (tenant varchar(20), day date, n decimal(6,2),
	raw varbinary(4), at datetime(3), note text,
	PRIMARY KEY (tenant, day, n, raw, at)) DEFAULT CHARSET=utf8mb4;
INSERT INTO t68_comp
SELECT t.v, '2026-01-01' + INTERVAL d.seq DAY, n.seq / 4, r.v,
	'2026-01-01 00:00:00.5' + INTERVAL d.seq SECOND, 'x'
FROM (SELECT '' v UNION SELECT ' x' UNION SELECT 'O''Brien' UNION SELECT 'back\\\\slash'
	UNION SELECT '日本' UNION SELECT 'tab\there' UNION SELECT 'Ünïcode'
	UNION SELECT '\"dq\"' UNION SELECT 'zz') t,
	seq_0_to_5 d, seq_0_to_4 n,
	(SELECT x'' v UNION SELECT x'00' UNION SELECT x'27' UNION SELECT x'ff5c') r"
ok $? "a table keyed on (varchar, date, decimal, varbinary, datetime(3))"
want=$(my_sql "SELECT COUNT(*) FROM t68_comp")
my_config "$T/comp.yaml" t68 t68_comp
loader -c "$T/comp.yaml" --range-rows 97 > "$T/comp.frames" 2> "$T/comp.log"
ok $? "it loads in chunks of 97"
marks=$(grep -c '"k":"mark"' "$T/comp.frames")
ok $([ "$marks" = $((want / 97 + 1)) ]; echo $?) "one mark per chunk: $marks for $want rows"
frames "$T/comp.frames" | jq -c 'select(.k == "row") | [.new.tenant, .new.day, .new.n, .new.raw, .new.at]' | sort > "$T/comp.keys"
my_raw "SELECT JSON_ARRAY(tenant, DATE_FORMAT(day, '%Y-%m-%d'), CAST(n AS char), TO_BASE64(raw),
	DATE_FORMAT(at, '%Y-%m-%dT%H:%i:%s.%f')) FROM t68_comp" | jq -c '.[4] |= .[:23] | .' | sort > "$T/comp.want"
ok $(cmp -s "$T/comp.keys" "$T/comp.want"; echo $?) "every row exactly once ($(wc -l < "$T/comp.keys") of $(wc -l < "$T/comp.want"))"
[ $_tap_fail -gt 0 ] && diff "$T/comp.keys" "$T/comp.want" | head -n 5 | sed 's/^/#   /'
grep '"k":"mark"' "$T/comp.frames" | head -n 1 | grep -q '"key":\["tenant","day","n","raw","at"\],"types":\["varchar(20)","date","decimal(6,2)","varbinary(4)","datetime(3)"\]'
ok $? "the progress names the key and its column types"

# under the stand-in supervisor: one mark per chunk, each confirmed
# before the next chunk is read; then resumed from the third mark
my_sql "CREATE TABLE t68_res (id bigint PRIMARY KEY, v varchar(10));
INSERT INTO t68_res SELECT seq, CONCAT('v', seq) FROM seq_1_to_20000"
my_config "$T/res.yaml" t68 t68_res
"${SUP[@]}" --table p2o.t68_res --frames "$T/a.frames" --marks "$T/a.marks" \
	--stats "$T/a.stats" --hold 0.2 -- loader -c "$T/res.yaml" --range-rows 3000 2> "$T/a.log"
ok $? "supervised: exit 0, each chunk read only after the last mark was confirmed"
ok $([ "$(wc -l < "$T/a.marks")" = 7 ] &&
	jq -s -e '[.[].progress.chunks] == [1,2,3,4,5,6,7] and .[-1].done == true and .[-1].progress.finished == true and ([.[:-1][].done] | all(. == null))' "$T/a.marks" > /dev/null; echo $?) \
	"seven marks count the chunks; only the last says the table is done"
ok $(tail -n 1 "$T/a.stats" | jq -e '.counters.load_rows["p2o.t68_res"] == 20000 and .counters.load_ranges_done["p2o.t68_res"] == 7 and .counters.load_ranges["p2o.t68_res"] == 7' > /dev/null; echo $?) \
	"the last stats: rows and chunks"
sed -n 3p "$T/a.marks" | jq -c .progress > "$T/p3.json"
ok $(jq -e '.rows == 9000 and .after_hex == ["39303030"]' "$T/p3.json" > /dev/null; echo $?) \
	"the third mark's progress: 9000 rows, after key 9000 ($(cat "$T/p3.json"))"
"${SUP[@]}" --table "p2o.t68_res=$T/p3.json" --frames "$T/b.frames" --marks "$T/b.marks" \
	-- loader -c "$T/res.yaml" --range-rows 5000 2> "$T/b.log"
ok $? "resumed load ends with exit 0"
grep -q "resuming 'p2o.t68_res' after chunk 3 (9000 rows loaded)" "$T/b.log"
ok $? "it says where it resumes: $(grep -m1 resuming "$T/b.log")"
ids=$(frames "$T/b.frames" | jq -r 'select(.k == "row") | .new.id')
ok $([ "$(echo "$ids" | head -n 1)" = 9001 ] && [ "$(echo "$ids" | wc -l)" = 11000 ] &&
	[ "$(echo "$ids" | sort -un | wc -l)" = 11000 ]; echo $?) "it reads exactly the 11000 rows after key 9000"
ok $(tail -n 1 "$T/b.marks" | jq -e '.progress.chunks == 6 and .progress.rows == 20000 and .done' > /dev/null; echo $?) \
	"its last mark counts every chunk and row"
"${SUP[@]}" --table "p2o.t68_res=$(f=$T/done.json; tail -n 1 "$T/b.marks" | jq -c .progress > "$f"; echo "$f")" \
	--frames "$T/c.frames" -- loader -c "$T/res.yaml" 2> "$T/c.log"
ok $([ $? = 0 ] && [ "$(grep -c '"k":"row"' "$T/c.frames")" = 0 ] && [ "$(grep -c '"k":"mark"' "$T/c.frames")" = 1 ]; echo $?) \
	"a finished table: its last mark again, no row"

# versions: the coordinate read for the chunk, plus the generation base
# the stored checkpoint implies (its position less its text's coordinate)
read -r file off <<< "$(my_sql "SHOW MASTER STATUS" | awk '{print $1, $2}')"
idx=$((10#${file##*.}))
coord=$(( (idx << 32) | off ))
base=$((1 << 40))
"${SUP[@]}" --table p2o.t68_res --checkpoint "$((base + coord))=$file:$off" --frames "$T/v.frames" \
	-- loader -c "$T/res.yaml" 2> "$T/v.log"
ok $? "a load frame with a checkpoint"
v=$(frames "$T/v.frames" | jq -r 'select(.k == "row") | .v' | sort -u)
ok $([ "$(echo "$v" | wc -l)" = 1 ] && [ "$v" -ge $((base + coord)) ] && [ "$v" -lt $((base + ((idx + 1) << 32))) ]; echo $?) \
	"copies are versioned base + coordinate: $v >= $base + $coord"
"${SUP[@]}" --table p2o.t68_res --checkpoint "5=$file:$off" -- loader -c "$T/res.yaml" > /dev/null 2> "$T/v2.log"
ok $([ $? = 66 ] && grep -q "disagrees with itself" "$T/v2.log"; echo $?) \
	"a checkpoint below its own coordinate: exit 66"

# refusals
sed 's/^source:$/source:\n  load_workers: 2/' "$T/res.yaml" > "$T/w2.yaml"
loader -c "$T/w2.yaml" > /dev/null 2> "$T/w2.log"
ok $([ $? = 78 ] && grep -q "w2.yaml:2: 'source.load_workers' above 1 applies only to a postgresql source" "$T/w2.log"; echo $?) "load_workers 2 on MySQL: exit 78 ($(tail -n 1 "$T/w2.log"))"
my_sql "CREATE TABLE t68_enum (e enum('b','a') PRIMARY KEY)"
my_config "$T/enum.yaml" t68 t68_enum
loader -c "$T/enum.yaml" > /dev/null 2> "$T/enum.log"
ok $([ $? = 69 ] && grep -q "key column 'e' is enum('b','a')" "$T/enum.log"; echo $?) "an enum key: exit 69"
my_config "$T/missing.yaml" t68 t68_missing
loader -c "$T/missing.yaml" > /dev/null 2> "$T/missing.log"
ok $([ $? = 69 ] && grep -q "'p2o.t68_missing'" "$T/missing.log"; echo $?) "a missing table: exit 69"
ok $(! grep -qF "$MYSQL_PWD" "$T"/*.log; echo $?) "no password in any log"

if [ $_tap_fail -gt 0 ]; then
	for f in cap loader comp a b v; do diag "$f.log:"; tail -n 6 "$T/$f.log" | sed 's/^/#   /'; done
fi
done_testing
