#!/usr/bin/env bash
# pg2osync reindex of a poll-mode source: its server keeps no slot that
# shows a reader, and with rounds an hour apart the stored checkpoint
# does not move while reindex watches it, so reindex asks the supervisor
# at metrics.bind and is refused while one runs the source; stopped, it
# builds and moves the alias.
# Fails when: reindex builds a fresh index while the poll pipeline runs
# (which would keep every row changed during the build wrong), or refuses
# once nothing runs.
. "$(dirname "$0")/../lib.sh"

S=p2o_preidx IX=p2o_preidx_items A=p2o_preidx_live
drop_slot $S; os_drop "$IX*"; curl -sS -XDELETE "$OS_URL/_alias/$A" >/dev/null 2>&1
curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres-poll:$S?refresh=true" >/dev/null 2>&1
psql_q <<'SQL'
drop table if exists preidx_items;
create table preidx_items (id int primary key, v text, rev bigint not null default 0);
insert into preidx_items (id, v, rev) select g, 'row ' || g, g from generate_series(1, 500) g;
create index on preidx_items (rev, id);
SQL
METRICS_PORT=$(free_port)
cat > "$T/cfg.yaml" <<EOF
source:
  url_env: P2O_TEST_URL
  mode: poll
  poll_column: rev
  poll_interval_secs: 3600
  slot_name: $S
  publication: $S
target:
  url: $OS_URL
$(target_keys)
sync:
  items:
    table: public.preidx_items
    index: $IX
engine:
  checkpoint_interval_ms: 100
metrics:
  bind: 127.0.0.1:$METRICS_PORT
EOF

sup_start; ok $? "the poll pipeline comes up"
wait_for 120 sh -c "[ \$(curl -sS -XPOST '$OS_URL/$IX/_refresh' >/dev/null 2>&1; curl -sS '$OS_URL/$IX/_count' | jq -r '.count // 0') = 500 ]"
ok $? "the first round lands"
wait_for 30 sh -c "ckpt -c '$T/cfg.yaml' get 2>/dev/null | jq -e '.pos > 0' >/dev/null"
ok $? "its checkpoint is stored"

pg2osync reindex -c "$T/cfg.yaml" --table items --alias $A > "$T/r1" 2>&1; rc=$?
sed 's/^/#   /' "$T/r1"
ok $([ $rc = 1 ] && grep -q "the pipeline is streaming (the supervisor at metrics.bind runs it: ready" "$T/r1"; echo $?) \
	"refused while a supervisor runs the poll source (no slot, the checkpoint still): exit $rc"
ok $([ -z "$(curl -sS "$OS_URL/_cat/indices/${IX}-*?h=index")" ]; echo $?) "no fresh index was built"

kill -TERM $SUP; wait $SUP; ok $? "stopped"
pg2osync reindex -c "$T/cfg.yaml" --table items --alias $A > "$T/r2" 2>&1; rc=$?
sed 's/^/#   /' "$T/r2"
ok $([ $rc = 0 ] && [[ "$(curl -sS "$OS_URL/_alias/$A" | jq -r 'keys | join(",")')" =~ ^${IX}-[0-9]+$ ]]; echo $?) \
	"stopped: built, and the alias moved onto it: exit $rc"

os_drop "$IX*"; curl -sS -XDELETE "$OS_URL/_alias/$A" >/dev/null 2>&1
psql_q -c "drop table preidx_items" >/dev/null
done_testing
