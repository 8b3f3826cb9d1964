#!/usr/bin/env bash
# The core scenarios on one PostgreSQL server, whichever version
# tests/servers/run-with.sh --pg[=VERSION] started (the compatibility lane
# runs it on 17 and 18; it passes on 15 too). Each TAP line's description
# starts with the scenario it belongs to, as the README's compatibility
# table names them (tests/compat/table.sh reads them):
#   load: 20,000 rows (every 50th with a 12 kB TOASTed body) loaded while
#     a client upserts and deletes across them the whole time;
#   crud: inserts, updates and deletes of every mapped type (numeric as
#     text, arrays, jsonb, timestamptz, bytea, float8, bool; pgvector's
#     vector where the server has the extension);
#   key change: a primary key update moves the document;
#   toast: an update of another column keeps a 12 kB unchanged TOAST
#     value, whole;
#   truncate: the index is emptied, and rows after it land;
#   kill -9: every process of the pipeline killed three times under a
#     client's writes, each time brought back;
#   equal: after each scenario the index equals the table by content, and
#     a drain at the end exits 0 with the slot not past the checkpoint.
. "$(dirname "$0")/../lib.sh"

export PGOPTIONS="$PGOPTIONS -c TimeZone=UTC"
SUPER=(psql -X -q -At -v ON_ERROR_STOP=1 -h "$P2O_SERVERS_DIR/pg" -U postgres -d "$PGDATABASE")
V=$(psql_q -c "show server_version" | cut -d' ' -f1)
diag "compat: PostgreSQL $V"

S=p2o_compat
IX=${S}_items
drop_slot $S
drop_loads $S items
os_drop $IX
vec=
"${SUPER[@]}" -c "create extension if not exists vector" >/dev/null 2>&1 && vec=1
psql_q <<SQL
drop table if exists items;
create table items (id int primary key, title text, price numeric(20,4), body text,
	tags text[], meta jsonb, flag boolean, score float8, at timestamptz, raw bytea
	${vec:+, emb vector(3)});
alter table items alter column body set storage external;
insert into items (id, title, price, body, tags, meta, flag, score, at, raw)
	select g, 'row ' || g, g / 7.0,
		case when g % 50 = 0 then repeat(md5(g::text), 400) else 'b' || g end,
		array['t' || g % 5, null], jsonb_build_object('g', g, 'odd', g % 2 = 1),
		g % 3 = 0, g / 3.0, '2024-01-01'::timestamptz + g * interval '1 minute',
		decode(md5(g::text), 'hex')
	from generate_series(1, 20000) g;
SQL
ok $? "load: 20,000 rows on PostgreSQL $V${vec:+ (pgvector $("${SUPER[@]}" -c "select extversion from pg_extension where extname = 'vector'"))}"
# each row as the pipeline documents it (capture-pg/README.md, the type
# mapping): numeric as text, timestamptz in ISO 8601 with Z, bytea base64
SEL="json_build_object('id',id,'title',title,'price',price::text,'body',body,'tags',tags,'meta',meta,
	'flag',flag,'score',score,'at',replace(replace(at::text,' ','T'),'+00','Z'),
	'raw',replace(encode(raw,'base64'),E'\n','')${vec:+,'emb',emb::text})"

METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S items
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/sup.log"
ok $? "load: the pipeline is up, loading"
pg_writer items 21000
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 300 load_done
ok $? "load: the load finished beside a client's writes ($(pg_writer_count) statements so far)"
pg_writer_stop
check "load: the index equals the table" -- wait_equal items $IX 120 "$SEL"

psql_q <<SQL
insert into items values (30001, 'every type', 123456789012345.1234, 'b', '{"a b","q\"x",NULL}',
	'{"k":[1,2],"o":{"n":null},"s":"é\t"}', true, 12345.678e3, '2024-02-29 13:14:15.123456+00', '\x00ff10'
	${vec:+, '[1,2.5,-3]'}),
	(30002, null, 'NaN', null, '{}', '[]', false, -0.5, null, null${vec:+, null});
update items set title = 'updated', tags = '{x}', meta = meta || '{"u":1}' where id between 10 and 20;
delete from items where id between 100 and 110;
SQL
check "crud: inserts, updates and deletes of every type land" -- wait_equal items $IX 30 "$SEL"
got=$(os_get "/$IX/_doc/30001" | jq -c '._source | [.price, .raw, .at, .tags]')
ok $([ "$got" = '["123456789012345.1234","AP8Q","2024-02-29T13:14:15.123456Z",["a b","q\"x",null]]' ]; echo $?) \
	"crud: numeric, bytea, timestamptz and a text array as documented ($got)"

psql_q -c "update items set id = 40000 where id = 30001"
check "key change: the document moves" -- wait_equal items $IX 30 "$SEL"
ok $([ "$(os_get "/$IX/_doc/30001" | jq -r .found)" = false ]; echo $?) "key change: the old id is gone"

psql_q -c "update items set title = 'toast kept' where id = 500"
check "toast: an update of another column keeps the 12 kB value" -- wait_equal items $IX 30 "$SEL"
len=$(os_get "/$IX/_doc/500" | jq -r '._source.body | length')
ok $([ "$len" = 12800 ]; echo $?) "toast: the body is whole in the document ($len characters)"

psql_q -c "truncate items"
# the clear is a delete by query, which a busy node takes its time over
check "truncate: the index is emptied" -- wait_equal items $IX 90 "$SEL"
psql_q -c "insert into items (id, title, body) select g, 'after ' || g, repeat('x', g) from generate_series(1, 3000) g"
check "truncate: rows after it land" -- wait_equal items $IX 30 "$SEL"

pg_writer items 4000
sleep 1
kill_rounds 3
ok $([ $KILL_UP = 3 ]; echo $?) "kill -9: every process killed 3 times under writes, the pipeline back each time ($KILL_UP)"
n=$(pg_writer_count)
pg_writer_stop
ok $([ "$n" -gt 50 ]; echo $?) "kill -9: the client wrote meanwhile ($n statements)"
check "kill -9: the index equals the table" -- wait_equal items $IX 120 "$SEL"

kill -TERM $SUP
wait $SUP; st=$?
ok $st "equal: SIGTERM drains, exit 0 (got $st)"
ck=$(ckpt_lsn "$T/cfg.yaml"); sl=$(slot_confirmed $S)
ok $([ -n "$ck" ] && [ "$(lsn_num "$sl")" -le "$(lsn_num "$ck")" ]; echo $?) "equal: the slot ($sl) is not past the checkpoint ($ck)"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v 'TOAST' "$T/sup.log" | tail -n 40 | sed 's/^/#   /'; }
drop_slot $S
done_testing
