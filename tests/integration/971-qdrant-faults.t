#!/usr/bin/env bash
# Qdrant faults, on the contract server (tests/helper/qdrant-contract.py,
# Qdrant's REST API v1.12.x; no Qdrant server can be had here), which holds
# them on demand: write requests answered 503 are sent again until taken,
# and the rows land; a write held slow (the server applies it seconds
# late) holds the checkpoint back - the row is not there and the
# checkpoint does not cover it until the write is answered; a document
# Qdrant refuses (a vector of the wrong size) is refused alone, with
# Qdrant's words and its id in the log, while the other rows of its
# request are written (the request is sent again one entry a request).
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/qdrant-lib.sh"

S=p2o_qfault
drop_slot $S
psql_q -c "drop table if exists qfault; create table qfault (id int primary key, title text, _vectors jsonb);
	alter table qfault replica identity full"
qdrant_start; ok $? "$QDRANT_KIND up"
METRICS_PORT=$(free_port)
CKPT_MS=100 mkqdrant "$T/cfg.yaml" $S $S qfault
printf '{"vectors":{"emb":{"size":3,"distance":"Dot"}}}\n' > "$T/qfault.json"
sed -i "s#^    index: ${S}_qfault\$#&\n    mapping_file: $T/qfault.json#" "$T/cfg.yaml"
sup_start; ok $? "pipeline up"
wait_for 30 slot_active $S

qdrant_fault '{"status": 503, "count": 3, "path": "/points/batch"}'
psql_q -c "insert into qfault select g, 'row ' || g, jsonb_build_object('emb', jsonb_build_array(g, 0, 1)) from generate_series(1, 20) g"
check "three write requests answered 503: sent again until taken, the rows land" -- \
	qdrant_wait_equal qfault ${S}_qfault 60
ok $([ "$(qdrant_stat faults_left)" = 0 ]; echo $?) "every 503 was met"
ok $([ "$(log_count "$T/sup.log" "HTTP 503")" -ge 1 ]; echo $?) "and logged ($(grep -m1 'HTTP 503' "$T/sup.log" | cut -c1-200))"

wait_for 10 test -n "$(ckpt_lsn "$T/cfg.yaml")"
before=$(ckpt_lsn "$T/cfg.yaml")
qdrant_fault '{"delay_ms": 8000, "count": 1, "path": "/points/batch"}'
psql_q -c "insert into qfault values (100, 'slow', '{\"emb\":[1,1,1]}')"
L=$(psql_q -c "select pg_current_wal_lsn()")
sleep 2
# the row first, then the checkpoint (ckpt under ASan takes a while to
# start): both well inside the 8 s the write is held
n=$(qdrant_points ${S}_qfault | jq '[.[] | select(.payload.pg2osync_id == "100")] | length')
held=$(ckpt_lsn "$T/cfg.yaml")
ok $([ "$n" = 0 ] && [ "$(lsn_num "$held")" -lt "$(lsn_num "$L")" ]; echo $?) \
	"a write held slow: the row is not there yet ($n points of it) and the checkpoint ($held, was $before) does not cover it ($L)"
check "once the slow write is answered the row is there" -- qdrant_wait_equal qfault ${S}_qfault 30
wait_for 10 test "$(ckpt_lsn "$T/cfg.yaml")" != "$held"
ok $? "and the checkpoint moves on ($(ckpt_lsn "$T/cfg.yaml"))"

psql_q -c "begin;
	insert into qfault values (201, 'good', '{\"emb\":[2,0,1]}');
	insert into qfault values (202, 'wrong size', '{\"emb\":[1,2]}');
	insert into qfault values (203, 'good too', '{\"emb\":[3,0,1]}');
	commit"
wait_for 30 grep -q "expected dim: 3, got 2" "$T/sup.log"
ok $? "the refusal is logged with Qdrant's words: $(grep -m1 'expected dim' "$T/sup.log" | cut -c1-300)"
ok $(grep 'expected dim' "$T/sup.log" | grep -q "202"; echo $?) "naming the document refused"
wait_for 30 test "$(qdrant_points ${S}_qfault | jq '[.[] | select(.payload.pg2osync_id == "201" or .payload.pg2osync_id == "203")] | length')" = 2
ok $? "the other rows of its request are written"
ok $([ "$(qdrant_points ${S}_qfault | jq '[.[] | select(.payload.pg2osync_id == "202")] | length')" = 0 ]; echo $?) \
	"and the refused one is not"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v " info: " "$T/sup.log" | tail -n 30 | sed "s/^/#   /"; diag "contract server log:"; tail -n 40 "$T/qdrant.log" | sed "s/^/#   /"; }
kill_pipeline
drop_slot $S
done_testing
