#!/usr/bin/env bash
# Each program resolves only the secrets it uses: the captures and the
# loader the source's url, the writer and ckpt the target's password. An
# ops file replays through the writer with no source url in the
# environment, the capture and the loader start with no target password,
# and a program that lacks its own secret is refused (78) naming it.
. "$(dirname "$0")/../lib.sh"

S=p2o_secrets
drop_slot $S; os_drop ${S}_items
psql_q -c "drop table if exists secret_items; create table secret_items (id int primary key, v text);
	insert into secret_items values (1, 'one')"
# the target's password comes from P2O_T_TARGET_PW; a node without the
# security plugin takes any credentials
mkconfig "$T/cfg.yaml" $S $S secret_items
sed -i "s|^  url: $OS_URL|  url: $OS_URL\n  username: sync\n  password_env: P2O_T_TARGET_PW|" "$T/cfg.yaml"
export P2O_T_TARGET_PW=not-a-real-password
grep -q "password_env: P2O_T_TARGET_PW" "$T/cfg.yaml"
ok $? "the configuration names a source secret and a target secret"

printf '%s\n' '{"k":"index","index":"'${S}_items'","id":"1","v":100,"doc":{"id":1,"v":"one"}}' \
	'{"k":"commit","pos":200,"text":"0/C8","n":1}' |
	while IFS= read -r j; do printf '%d %s\n' $((${#j} + 1)) "$j"; done > "$T/ops.frames"
env -u P2O_TEST_URL writer -c "$T/cfg.yaml" < "$T/ops.frames" 2> "$T/writer.err"
ok $? "the writer replays an ops file without the source's url in the environment"
[ "$(os_count ${S}_items)" = 1 ]
ok $? "and the document is in the index"
env -u P2O_T_TARGET_PW writer -c "$T/cfg.yaml" < "$T/ops.frames" 2> "$T/writer2.err"
st=$?
ok $([ $st = 78 ] && grep -q "'target.password_env' names 'P2O_T_TARGET_PW', which is not set" "$T/writer2.err"; echo $?) \
	"without its own secret the writer is refused, exit 78 ($st): $(cat "$T/writer2.err")"

env -u P2O_TEST_URL ckpt -c "$T/cfg.yaml" get > /dev/null 2> "$T/ckpt.err"
ok $? "ckpt reads the checkpoint without the source's url: $(cat "$T/ckpt.err")"

env -u P2O_T_TARGET_PW loader -c "$T/cfg.yaml" > "$T/copy.frames" 2> "$T/loader.err"
ok $? "the loader copies without the target's password: $(tail -n 1 "$T/loader.err")"
[ "$(sed -E 's/^[0-9]+ //' "$T/copy.frames" | jq -r 'select(.k == "row") | .new.v')" = one ]
ok $? "and writes the table's row"
env -u P2O_TEST_URL loader -c "$T/cfg.yaml" > /dev/null 2> "$T/loader2.err"
st=$?
ok $([ $st = 78 ] && grep -q "'source.url_env' names 'P2O_TEST_URL', which is not set" "$T/loader2.err"; echo $?) \
	"without its own secret the loader is refused, exit 78 ($st)"

env -u P2O_T_TARGET_PW capture-pg -c "$T/cfg.yaml" > "$T/events.frames" 2> "$T/capture.err" &
CAP=$!; cleanup_add $CAP
wait_for 60 slot_active $S
ok $? "the capture streams without the target's password"
psql_q -c "insert into secret_items values (2, 'two')"
wait_for 30 grep -q '"v":"two"' "$T/events.frames"
ok $? "and captures a change"
kill -TERM $CAP; wait $CAP
ok $? "SIGTERM: exit 0"
env -u P2O_TEST_URL capture-pg -c "$T/cfg.yaml" > /dev/null 2> "$T/capture2.err"
st=$?
ok $([ $st = 78 ] && grep -q "'source.url_env' names 'P2O_TEST_URL', which is not set" "$T/capture2.err"; echo $?) \
	"without its own secret the capture is refused, exit 78 ($st)"

! grep -qF "$P2O_T_TARGET_PW" "$T"/*.err && ! grep -qF "$PGPASSWORD" "$T"/*.err
ok $? "no log line holds either secret"
drop_slot $S; os_drop ${S}_items
done_testing
