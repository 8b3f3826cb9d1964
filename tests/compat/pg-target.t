#!/usr/bin/env bash
# pg.t's core scenarios with a PostgreSQL table as the target
# (target.flavor: postgres, issue 37): the source table streams into a
# table of another database on the same server, whose embedding column is
# pgvector's vector where the server has the extension (the lane's 17 and
# 18 do; bookworm's 15 does not, and then the column is real[]). The
# TAP descriptions start with pg.t's scenario names (tests/compat/table.sh
# makes the README's row of them):
#   load: 20,000 rows (every 50th with a 12 kB TOASTed body) loaded while a
#     client upserts and deletes across them the whole time;
#   crud: every mapped type, the vector among them; nearest: a
#     nearest-neighbour query on the target table returns the row the same
#     query finds in the source;
#   key change, toast, truncate, kill -9 (three times under writes), equal
#     (a drain, the slot not past the checkpoint), as in pg.t; and an
#     upsert and a delete older than the stored rows, sent late, lose.
# The target table equals the source table by content after each: the
# same rendering of a row on both sides, less the target's _version.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"

export PGOPTIONS="$PGOPTIONS -c TimeZone=UTC"
SUPER=(psql -X -q -At -v ON_ERROR_STOP=1 -h "$P2O_SERVERS_DIR/pg" -U postgres)
V=$(psql_q -c "show server_version" | cut -d' ' -f1)
S=p2o_compat_pgt
DB=p2o_compat_pgt

drop_slot $S
"${SUPER[@]}" -d "$PGDATABASE" -c "drop database if exists $DB" -c "create database $DB owner $PGUSER"
vec=
# the source's column is a vector too, where the server has pgvector
"${SUPER[@]}" -d "$PGDATABASE" -c "create extension if not exists vector" >/dev/null 2>&1 &&
	"${SUPER[@]}" -d "$DB" -c "create extension vector" >/dev/null 2>&1 && vec=1
if [ -n "$vec" ]; then
	pgv=$("${SUPER[@]}" -d "$DB" -c "select extversion from pg_extension where extname = 'vector'")
	# the row of the README's table: the server, and what it wrote into
	diag "compat: PostgreSQL $V into a pgvector table"
	diag "target: database $DB on the same server, pgvector $pgv"
	VT="vector(3)"
else
	diag "compat: PostgreSQL $V into a table"
	diag "target: database $DB on the same server, no pgvector: the embedding is real[]"
	VT="real[]"
fi
export P2O_PGT_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$DB"
READ_URL="postgres://$PGUSER@$PGHOST:$PGPORT/$DB"

psql_q <<SQL
drop table if exists items;
create table items (id int primary key, title text, price numeric(20,4), body text,
	tags text[], meta jsonb, flag boolean, score float8, at timestamptz, raw bytea, emb $VT);
alter table items alter column body set storage external;
insert into items (id, title, price, body, tags, meta, flag, score, at, raw)
	select g, 'row ' || g, g / 7.0,
		case when g % 50 = 0 then repeat(md5(g::text), 400) else 'b' || g end,
		array['t' || g % 5, null], jsonb_build_object('g', g, 'odd', g % 2 = 1),
		g % 3 = 0, g / 3.0, '2024-01-01'::timestamptz + g * interval '1 minute',
		decode(md5(g::text), 'hex')
	from generate_series(1, 20000) g;
SQL
ok $? "load: 20,000 rows on PostgreSQL $V${vec:+ (pgvector $pgv)}"
# the target table: the document's fields as columns, bytea's base64 as
# text (capture-pg/README.md, the type mapping), the rest of the same types
cat > "$T/items.sql" <<SQL
CREATE TABLE items (id int PRIMARY KEY, title text, price numeric(20,4), body text,
	tags text[], meta jsonb, flag boolean, score float8, at timestamptz, raw text,
	emb $VT, _version bigint NOT NULL);
SQL
# a row rendered alike on both sides (the source's bytea as its base64)
row() { echo "json_build_object('id',id,'title',title,'price',price::text,'body',body,'tags',tags,
	'meta',meta,'flag',flag,'score',score,'at',at,'raw',$1,'emb',emb::text)"; }
tcompare() {
	psql_q -c "select coalesce(json_agg($(row "replace(encode(raw,'base64'),E'\n','')")), '[]') from items t" \
		> "$T/cmp.src" || return 2
	python3 "$TOP/tests/compare.py" --table "$READ_URL" items "$T/cmp.src" "$(row raw)"
}
tequal() {	# tequal SECONDS: the target table equals the source's, by content
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		tcompare >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	tcompare
}
tq() { psql_q -d "$READ_URL" "$@"; }

METRICS_PORT=$(free_port)
cat > "$T/cfg.yaml" <<YAML
source:
  url_env: P2O_TEST_URL
  slot_name: $S
  publication: $S
target:
  flavor: postgres
  url_env: P2O_PGT_URL
sync:
  items:
    table: public.items
    index: items
    mapping_file: items.sql
engine:
  checkpoint_interval_ms: 200
metrics:
  bind: 127.0.0.1:$METRICS_PORT
YAML
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/sup.log"
ok $? "load: the pipeline is up, loading into $DB.items"
pg_writer items 21000
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 300 load_done
ok $? "load: the load finished beside a client's writes ($(pg_writer_count) statements so far)"
pg_writer_stop
check "load: the target table equals the source" -- tequal 120

psql_q <<SQL
insert into items values (30001, 'every type', 123456789012345.1234, 'b', '{"a b","q\"x",NULL}',
	'{"k":[1,2],"o":{"n":null},"s":"é\t"}', true, 12345.678e3, '2024-02-29 13:14:15.123456+00', '\x00ff10',
	array[1,2.5,-3]::real[]::$VT),
	(30002, null, 'NaN', null, '{}', '[]', false, -0.5, null, null, null),
	(30003, 'y', 1, 'b', null, null, null, null, null, null, array[0,1,0]::real[]::$VT);
update items set title = 'updated', tags = '{x}', meta = meta || '{"u":1}' where id between 10 and 20;
-- vectors around the two above, none of them near: every component 1 to 7
update items set emb = array[id % 7 + 1, id % 5 + 1, id % 3 + 1]::real[]::$VT where id between 1000 and 1100;
delete from items where id between 100 and 110;
SQL
check "crud: inserts, updates and deletes of every type land" -- tequal 30
got=$(tq -c "select row(price, raw, at, tags, emb::text) from items where id = 30001")
want='(123456789012345.1234,AP8Q,"2024-02-29 13:14:15.123456+00","{""a b"",""q\\""x"",NULL}","{1,2.5,-3}")'
[ -n "$vec" ] && want=${want/\{1,2.5,-3\}/[1,2.5,-3]}
ok $([ "$got" = "$want" ]; echo $?) "crud: numeric, bytea, timestamptz, a text array and the vector as typed ($got)"
if [ -n "$vec" ]; then
	# the expected row is 30001; the source answers the same query
	q="select id from items where emb is not null order by emb <-> '[0.9,2.4,-2.8]' limit 1"
	nn=$(tq -c "$q") src=$(psql_q -c "$q")
	ok $([ "$nn" = 30001 ] && [ "$src" = 30001 ]; echo $?) \
		"nearest: ORDER BY emb <-> '[0.9,2.4,-2.8]' LIMIT 1 on the target is row 30001 (got '$nn', the source '$src')"
	q="select id from items where emb is not null order by emb <=> '[0,5,0]' limit 1"
	nn=$(tq -c "$q")
	ok $([ "$nn" = 30003 ]; echo $?) "nearest: by cosine distance [0,5,0] is row 30003 (got '$nn')"
else
	skip "nearest: no pgvector on PostgreSQL $V"
	skip "nearest: no pgvector on PostgreSQL $V"
fi

psql_q -c "update items set id = 40000 where id = 30001"
check "key change: the row moves" -- tequal 30
ok $([ "$(tq -c "select count(*) from items where id = 30001")" = 0 ]; echo $?) "key change: the old id is gone"

psql_q -c "update items set title = 'toast kept' where id = 500"
check "toast: an update of another column keeps the 12 kB value" -- tequal 30
len=$(tq -c "select length(body) from items where id = 500")
ok $([ "$len" = 12800 ]; echo $?) "toast: the body is whole in the target ($len characters)"

psql_q -c "truncate items"
check "truncate: the target table is emptied" -- tequal 60
psql_q -c "insert into items (id, title, body) select g, 'after ' || g, repeat('x', g) from generate_series(1, 3000) g"
check "truncate: rows after it land" -- tequal 30

pg_writer items 4000
sleep 1
kill_rounds 3
ok $([ $KILL_UP = 3 ]; echo $?) "kill -9: every process killed 3 times under writes, the pipeline back each time ($KILL_UP)"
n=$(pg_writer_count)
pg_writer_stop
ok $([ "$n" -gt 50 ]; echo $?) "kill -9: the client wrote meanwhile ($n statements)"
check "kill -9: the target table equals the source" -- tequal 120

kill -TERM $SUP
wait $SUP; st=$?
ok $st "equal: SIGTERM drains, exit 0 (got $st)"
ck=$(ckpt_lsn "$T/cfg.yaml"); sl=$(slot_confirmed $S)
ok $([ -n "$ck" ] && [ "$(lsn_num "$sl")" -le "$(lsn_num "$ck")" ]; echo $?) "equal: the slot ($sl) is not past the checkpoint ($ck)"
# a write that reaches the table late, older than the row it holds (a
# copy the shaper's tombstones did not drop, a replay), loses to it: the
# target's upsert and delete are guarded by _version. The scenarios above
# never send one (the shaper drops stale copies, a replay is in order):
# the writes are sent here directly, by the verbs' blocking write
a=$(psql_q -c "select min(id) from items") b=$(psql_q -c "select max(id) from items")
printf 'items\t%s\t1\t{"id":%s,"title":"stale"}\nitems\t%s\t1\t-\n' "$a" "$a" "$b" |
	"$P2O_BIN/../tests/target-write" -c "$T/cfg.yaml" > "$T/tw.out" 2>&1
check "equal: an upsert and a delete at version 1, sent late, lose to the stored rows ($(grep '^items/' "$T/tw.out" | tr '\n' ' '))" -- tcompare
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v 'TOAST' "$T/sup.log" | tail -n 40 | sed 's/^/#   /'; }
drop_slot $S
"${SUPER[@]}" -d "$PGDATABASE" -c "drop database if exists $DB" >/dev/null 2>&1
done_testing
