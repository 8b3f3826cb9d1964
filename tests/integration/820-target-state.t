#!/usr/bin/env bash
# The target layer against a live node: ckpt's state index made by the one
# creation path (first writers racing all store, "already exists" being
# as good as created, and the largest position stays), made again when it
# vanishes between two writes, hidden and mapped as before; and the
# writer's probe naming the node it found.
. "$(dirname "$0")/../lib.sh"

S=p2o_tstate
drop_slot $S
psql_q -c "drop table if exists tstate; create table tstate (id int primary key)"
mkconfig "$T/cfg.yaml" $S $S tstate
meta() { os_get "/.pg2osync_meta/_settings?flat_settings=true" | jq -r ".[\".pg2osync_meta\"].settings[\"$1\"]"; }

os_drop .pg2osync_meta
pids=()
for i in 1 2 3 4 5; do
	ckpt -c "$T/cfg.yaml" put --pos $((4096 * i)) --text "0/$(printf %X $((4096 * i)))" 2>>"$T/put.err" &
	pids+=($!)
done
st=0
for p in "${pids[@]}"; do wait "$p" || st=1; done
ok $st "five first writers at once all store ($(grep -c 'created index' "$T/put.err") created the index)"
check "the largest of them stays" -- test "$(ckpt_lsn "$T/cfg.yaml")" = 0/5000
check "the state index is hidden" -- test "$(meta index.hidden)" = true
check "with one shard" -- test "$(meta index.number_of_shards)" = 1
os_drop .pg2osync_meta
ckpt -c "$T/cfg.yaml" put --pos 8192 --text 0/2000 2>"$T/put2.err"
ok $? "a write after the index vanished stores ($(head -c 200 "$T/put2.err"))"
check "the index was made again" -- grep -q "created index '.pg2osync_meta'" "$T/put2.err"
check "and holds the checkpoint" -- test "$(ckpt_lsn "$T/cfg.yaml")" = 0/2000
check "hidden again" -- test "$(meta index.hidden)" = true
check "with its own mapping" -- test "$(os_get /.pg2osync_meta/_mapping | jq -r '.[".pg2osync_meta"].mappings.dynamic')" = false

P2O_LOG_LEVEL=debug timeout 60 writer -c "$T/cfg.yaml" < /dev/null 2>"$T/w.err"
ok $? "the writer with nothing to write exits 0"
grep -q "the target is opensearch [0-9]" "$T/w.err"
ok $? "its probe names the node: $(grep -o 'the target is .*' "$T/w.err")"
drop_slot $S
done_testing
