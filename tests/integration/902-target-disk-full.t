#!/usr/bin/env bash
# The target's disk full, as the node itself sees it: the disk watermarks
# are set so that the node's own disk monitor finds the flood stage
# exceeded, and the node puts the read-only-allow-delete block on every
# index, the documents' and the checkpoint's (.pg2osync_meta), answering
# each write 429 cluster_block_exception. A client keeps writing. The
# pipeline must say why it is waiting, keep the slot behind the stored
# checkpoint, and once the disk has room again (the node lifts the block
# itself) catch up by itself: the index equals the table, nothing lost,
# the checkpoint moves again, the drain exits 0.
# Fails when: a blocked write is taken as written, the checkpoint or the
# slot moves past what the target holds, or the pipeline stops for good.
. "$(dirname "$0")/../lib.sh"

S=p2o_diskfull
drop_slot $S; os_drop ${S}_df; os_drop ${S}_probe
psql_q -c "drop table if exists df; create table df (id int primary key, v int not null, note text)"
wm() {	# wm LOW HIGH FLOOD | wm null: the node's disk watermarks (free bytes)
	local body
	if [ "$1" = null ]; then
		body='{"transient":{"cluster.routing.allocation.disk.threshold_enabled":null,"cluster.routing.allocation.disk.watermark.low":null,"cluster.routing.allocation.disk.watermark.high":null,"cluster.routing.allocation.disk.watermark.flood_stage":null,"cluster.info.update.interval":null}}'
	else
		body='{"transient":{"cluster.routing.allocation.disk.threshold_enabled":true,"cluster.routing.allocation.disk.watermark.low":"'$1'","cluster.routing.allocation.disk.watermark.high":"'$2'","cluster.routing.allocation.disk.watermark.flood_stage":"'$3'","cluster.info.update.interval":"10s"}}'
	fi
	curl -sf -XPUT "$OS_URL/_cluster/settings" -H 'Content-Type: application/json' -d "$body" >/dev/null
}
# whatever happens, the next test finds a node with room and no block
restore() {
	wm null
	# past the flood stage the node also blocks creating indices, in a
	# persistent cluster setting that can outlive the test
	curl -s -XPUT "$OS_URL/_cluster/settings" -H 'Content-Type: application/json' \
		-d '{"persistent":{"cluster.blocks.create_index":null}}' >/dev/null 2>&1
	curl -s -XPUT "$OS_URL/_all/_settings" -H 'Content-Type: application/json' \
		-d '{"index.blocks.read_only_allow_delete":null}' >/dev/null 2>&1
	os_drop ${S}_probe
}
trap 'restore; _cleanup' EXIT
probe_blocked() {
	curl -s -XPUT "$OS_URL/${S}_probe/_doc/1" -H 'Content-Type: application/json' -d '{"a":1}' |
		grep -q 'flood-stage watermark'
}
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S df
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up"
SEL="json_build_object('id',id,'v',v,'note',note)"
psql_q -c "insert into df select g, 0, 'first' from generate_series(1, 500) g"
check "first rows land" -- wait_equal df ${S}_df 30 "$SEL"
curl -s -XPUT "$OS_URL/${S}_probe/_doc/1" -H 'Content-Type: application/json' -d '{"a":1}' >/dev/null

cat > "$T/load.sql" <<'SQL'
\set id random(1, 3000)
insert into df values (:id, 1, md5(random()::text)) on conflict (id) do update set v = df.v + 1, note = md5(random()::text);
\set d random(1, 3000)
delete from df where id = :d and v % 4 = 0;
SQL
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -n 1)
"$PGBENCH" -n -c 1 -R 100 -T 3600 -f "$T/load.sql" > "$T/load.log" 2>&1 &
LOAD=$!; cleanup_add $LOAD

# more free bytes demanded than any disk has: the flood stage is exceeded
wm 1000tb 999tb 998tb
wait_for 60 probe_blocked
ok $? "the node blocks writes: its disk is past the flood-stage watermark"
sleep 6
wait_for 30 grep -q 'flood-stage watermark' "$T/sup.log"
ok $? "the log says why writes wait: $(grep -m1 'flood-stage' "$T/sup.log" | cut -c1-200)"
ck_blocked=$(ckpt_lsn "$T/cfg.yaml")
sl=$(slot_confirmed $S)
ok $([ -n "$ck_blocked" ] && [ "$(lsn_num "$sl")" -le "$(lsn_num "$ck_blocked")" ]; echo $?) \
	"the slot ($sl) is not past the stored checkpoint ($ck_blocked) while the disk is full"
kill -0 $SUP 2>/dev/null; ok $? "the supervisor waits, it has not given up"

# room again: the node's monitor lifts the block by itself
wm 3b 2b 1b
wait_for 90 bash -c "! curl -s -XPUT '$OS_URL/${S}_probe/_doc/1' -H 'Content-Type: application/json' -d '{\"a\":1}' | grep -q flood-stage"
ok $? "the node lifts the block once the disk has room"
wm null
sleep 3
kill $LOAD; wait $LOAD 2>/dev/null
check "everything written while the disk was full lands" -- wait_equal df ${S}_df 180 "$SEL"
wait_for 30 bash -c "[ \"\$(ckpt -c '$T/cfg.yaml' get 2>/dev/null | jq -r '.text // empty')\" != '$ck_blocked' ]"
ok $? "the checkpoint moves again ($ck_blocked -> $(ckpt_lsn "$T/cfg.yaml"))"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
