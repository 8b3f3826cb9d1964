#!/usr/bin/env bash
# Streaming through the whole supervised pipeline: every kind of change a table
# can see lands in the index, with the values the documentation promises.
. "$(dirname "$0")/../lib.sh"

S=p2o_stream
drop_slot $S
for t in items items_full; do os_drop ${S}_$t; done
psql_q <<'SQL'
drop table if exists items, items_full;
create table items (id int primary key, title text, price numeric(40,10),
	body text, tags text[], meta jsonb, flag boolean, score float8);
alter table items alter column body set storage external;
create table items_full (id int primary key, title text, body text);
alter table items_full alter column body set storage external;
alter table items_full replica identity full;
SQL
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S items items_full
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "supervisor reports healthy"

SEL="json_build_object('id',id,'title',title,'price',price::text,'body',body,'tags',tags,'meta',meta,'flag',flag,'score',score)"
SELF="json_build_object('id',id,'title',title,'body',body)"

psql_q <<'SQL'
insert into items values (1,'lamp',12.5,'b1','{a,b}','{"x":1}',true,1.5),
	(2,'desk',99.99,null,'{}','{"y":[1,2]}',false,null), (3,'chair',0,'b3',null,null,null,-2);
SQL
check "inserts land" -- wait_equal items ${S}_items 30 "$SEL"

psql_q -c "update items set title='lamp 2', tags='{x,\"y z\",NULL}' where id=1; delete from items where id=2"
check "update and delete land" -- wait_equal items ${S}_items 30 "$SEL"

psql_q -c "update items set id=100 where id=1"
check "primary key change moves the document" -- wait_equal items ${S}_items 30 "$SEL"
ok $([ "$(os_get /${S}_items/_doc/1 | jq -r .found)" = false ]; echo $?) "old id is gone after a key change"

psql_q -c "insert into items (id, price) values (4, 123456789012345678901234567890.1234567891)"
wait_equal items ${S}_items 30 "$SEL" >/dev/null
got=$(os_get /${S}_items/_doc/4 | jq -r ._source.price)
ok $([ "$got" = "123456789012345678901234567890.1234567891" ]; echo $?) "numeric keeps every digit ($got)"

# 12 kB out-of-line value, then an update of another column: pgoutput sends
# the value as unchanged-TOAST and the writer must complete it
for t in items items_full; do
	psql_q -c "insert into $t (id, title, body) select 50, 't', string_agg(md5(i::text), '') from generate_series(1, 400) i"
done
psql_q -c "update items set title='toast-kept' where id=50; update items_full set title='toast-kept' where id=50"
check "12 kB TOAST column survives an update of another column" -- wait_equal items ${S}_items 30 "$SEL"
check "same with REPLICA IDENTITY FULL" -- wait_equal items_full ${S}_items_full 30 "$SELF"
len=$(os_get /${S}_items/_doc/50 | jq -r '._source.body | length')
ok $([ "$len" = 12800 ]; echo $?) "toasted body is whole in the document ($len chars)"

psql_q -c "begin; insert into items (id, title) select g, 'bulk ' || g from generate_series(1000, 10999) g; commit;"
check "a 10,000-row transaction lands" -- wait_equal items ${S}_items 60 "$SEL"

psql_q -c "truncate items"
check "truncate empties the index" -- wait_equal items ${S}_items 30 "$SEL"
psql_q -c "insert into items (id, title) values (7, 'after truncate')"
check "rows after a truncate land" -- wait_equal items ${S}_items 30 "$SEL"

m=$(metrics_text)
for name in 'pg2osync_events_total{type="insert"}' pg2osync_position_confirmed pg2osync_batches_total \
	pg2osync_sink_errors_total pg2osync_reconnects_total pg2osync_commit_to_indexed_seconds_count; do
	echo "$m" | grep -qF "$name"; ok $? "metrics expose $name"
done
ins=$(echo "$m" | awk -F' ' '/^pg2osync_events_total\{type="insert"\}/ {print $2}')
ok $([ "${ins%.*}" -ge 10006 ] 2>/dev/null; echo $?) "insert events counted ($ins)"

# no stage carries the password on its command line, and no log line has it
pids=$(pgrep -f "$T/cfg.yaml")
leak=0
for p in $pids; do tr '\0' ' ' < /proc/$p/cmdline | grep -qF "$PGPASSWORD" && leak=1; done
ok $([ -n "$pids" ] && [ $leak = 0 ]; echo $?) "no password on any stage's argv ($(echo $pids | wc -w) processes)"
ok $(! grep -qF "$PGPASSWORD" "$T/sup.log"; echo $?) "no password in the log"

# changes to unpublished tables still move WAL: with nothing to send the
# slot must follow the server's WAL end (through a bare pos frame, stored as
# a checkpoint first) instead of pinning WAL forever
psql_q -c "drop table if exists unpublished; create table unpublished (x int); insert into unpublished select generate_series(1, 1000)"
target=$(psql_q -c "select pg_current_wal_lsn()")
reached() { [ "$(lsn_num "$(slot_confirmed $S)")" -ge "$(lsn_num "$target")" ]; }
wait_for 40 reached
ok $? "an idle slot is confirmed up to the WAL end ($target; slot $(slot_confirmed $S))"

# SIGTERM drains: exit 0, and the slot is confirmed exactly to the checkpoint
kill -TERM $SUP
wait $SUP; st=$?
ok $st "SIGTERM drains and exits 0 (got $st)"
[ $st = 0 ] || tail -n 30 "$T/sup.log" | sed 's/^/#   /'
ck=$(ckpt_lsn "$T/cfg.yaml"); sl=$(slot_confirmed $S)
ok $([ -n "$ck" ] && [ "$(lsn_num $sl)" -le "$(lsn_num $ck)" ]; echo $?) "slot confirmed $sl is not past checkpoint $ck"
ok $([ -n "$ck" ] && [ "$(lsn_num $sl)" -eq "$(lsn_num $ck)" ]; echo $?) "after a drain the slot is confirmed to the checkpoint"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
drop_slot $S
done_testing
