#!/usr/bin/env bash
# ckpt from the shell: put and get, a checkpoint never moving back, and a
# checkpoint of another stream refused (exit 66); the writer's id
# (PG2OSYNC_INSTANCE_ID) recorded in the checkpoint, shown by get and by
# pg2osync status, and an unusable one refused (exit 78).
. "$(dirname "$0")/../lib.sh"

S=p2o_ckpt
drop_slot $S
psql_q -c "drop table if exists ck; create table ck (id int primary key)"
mkconfig "$T/cfg.yaml" $S $S ck
out=$(ckpt -c "$T/cfg.yaml" get 2>"$T/err"); st=$?
ok $([ $st = 0 ] && [ -z "$out" ]; echo $?) "get with nothing stored prints nothing, exit 0 ($(cat "$T/err"))"
ckpt -c "$T/cfg.yaml" put --pos $(lsn_num 0/16B3748) --text 0/16B3748 2>/dev/null
ok $? "put 0/16B3748"
check "get returns it" -- test "$(ckpt_lsn "$T/cfg.yaml")" = 0/16B3748
ckpt -c "$T/cfg.yaml" put --pos 4096 --text 0/1000 2>/dev/null
check "a checkpoint never moves back" -- test "$(ckpt_lsn "$T/cfg.yaml")" = 0/16B3748
# a deleted checkpoint leaves a tombstone with its version: a lower put
# conflicts with it, and must still be stored rather than taken as covered
curl -sS -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S?refresh=true" >/dev/null
ckpt -c "$T/cfg.yaml" put --pos 4096 --text 0/1000 2>/dev/null
check "after a delete a lower checkpoint is stored again, not lost to the tombstone" -- \
	test "$(ckpt_lsn "$T/cfg.yaml")" = 0/1000
PG2OSYNC_INSTANCE_ID=sync-a:17 ckpt -c "$T/cfg.yaml" put --pos $(lsn_num 0/2000000) --text 0/2000000 2>/dev/null
got=$(ckpt -c "$T/cfg.yaml" get 2>/dev/null | jq -r .instance)
ok $([ "$got" = sync-a:17 ]; echo $?) "get names the writer PG2OSYNC_INSTANCE_ID named ($got)"
pg2osync status -c "$T/cfg.yaml" > "$T/status" 2>&1
ok $(grep -q '^checkpoint  0/2000000 (stored .* by sync-a:17)' "$T/status"; echo $?) \
	"status says who stored it: $(grep '^checkpoint' "$T/status")"
got=$(pg2osync status -c "$T/cfg.yaml" --json 2>/dev/null | jq -r .checkpoint.instance)
ok $([ "$got" = sync-a:17 ]; echo $?) "and so does status --json ($got)"
ckpt -c "$T/cfg.yaml" put --pos $(lsn_num 0/2000001) --text 0/2000001 2>/dev/null
got=$(ckpt -c "$T/cfg.yaml" get 2>/dev/null | jq -r .instance)
ok $([ "$got" = "$(hostname)" ]; echo $?) "without it, the host's name ($got)"
PG2OSYNC_INSTANCE_ID='two words' ckpt -c "$T/cfg.yaml" put --pos $(lsn_num 0/2000002) --text 0/2000002 2>"$T/err"; st=$?
ok $([ $st = 78 ] && grep -q PG2OSYNC_INSTANCE_ID "$T/err"; echo $?) \
	"an instance id with a space is refused, exit 78 ($st: $(head -c 160 "$T/err"))"
ckpt -c "$T/cfg.yaml" put --pos junk --text 0/1 2>/dev/null; st=$?
ok $([ $st = 64 ]; echo $?) "a malformed position is refused (exit $st)"
ckpt -c "$T/cfg.yaml" put --pos 4096 2>/dev/null; st=$?
ok $([ $st = 64 ]; echo $?) "a position without its text is refused (exit $st)"
sed "s/publication: $S/publication: other_pub/" "$T/cfg.yaml" > "$T/foreign.yaml"
ckpt -c "$T/foreign.yaml" get > /dev/null 2> "$T/err"; st=$?
ok $([ $st = 66 ]; echo $?) "another publication's checkpoint is refused with 66 (got $st)"
grep -q 'foreign\|belongs' "$T/err"; ok $? "and says why: $(head -c 200 "$T/err")"
timeout 60 pg2osync-supervise -c "$T/foreign.yaml" > "$T/sup.out" 2>&1; st=$?
ok $([ $st = 66 ]; echo $?) "the supervisor stops on it too (got $st)"
drop_slot $S
done_testing
