#!/usr/bin/env bash
# Qdrant, against the contract server (no Qdrant server can be had here:
# tests/helper/qdrant-contract.py follows Qdrant's REST API v1.12.x): a
# collection made from the section's mapping file (named vectors); the
# initial load and streaming CRUD from PostgreSQL end with the points
# equal to the table - payload the row, vectors the row's _vectors, point
# id the UUIDv5 of the document id, kept in the payload as pg2osync_id; a
# key change moves the point; every write was sent with wait=true; the
# checkpoint is a point of the pg2osync_state collection; truncate clears
# the collection and rows after it land. Config load refuses, at its
# file:line, write_concurrency 2 and a mapping file with an unnamed vector.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/qdrant-lib.sh"

S=p2o_qdrant
drop_slot $S
psql_q -c "drop table if exists qstream; create table qstream (id int primary key, title text, n int, _vectors jsonb);
	alter table qstream replica identity full"
# rows there before the start come through the initial load
psql_q -c "insert into qstream select g, 'loaded ' || g, g, jsonb_build_object('emb', jsonb_build_array(g, 0.5, -1)) from generate_series(1001, 1020) g"
qdrant_start; ok $? "$QDRANT_KIND up"
METRICS_PORT=$(free_port)
mkqdrant "$T/cfg.yaml" $S $S qstream
printf '{"vectors":{"emb":{"size":3,"distance":"Cosine"}}}\n' > "$T/qstream.json"
sed -i "s#^    index: ${S}_qstream\$#&\n    mapping_file: $T/qstream.json#" "$T/cfg.yaml"

# refusals at load, each at its file:line
cp "$T/cfg.yaml" "$T/bad1.yaml"
sed -i 's/^engine:$/engine:\n  write_concurrency: 2/' "$T/bad1.yaml"
line=$(grep -n 'write_concurrency: 2' "$T/bad1.yaml" | cut -d: -f1)
pg2osync validate -c "$T/bad1.yaml" > "$T/bad1.out" 2>&1; rc=$?
ok $([ $rc = 1 ] && grep -q "^FAIL  configuration: $T/bad1.yaml:$line: 'engine.write_concurrency' needs concurrent writes, which target 'qdrant' does not offer" "$T/bad1.out"; echo $?) \
	"write_concurrency 2 is refused at load, at its line $line (exit $rc: $(head -c 300 "$T/bad1.out"))"
printf '{"vectors":{"size":3,"distance":"Cosine"}}\n' > "$T/unnamed.json"
sed "s#$T/qstream.json#$T/unnamed.json#" "$T/cfg.yaml" > "$T/bad2.yaml"
line=$(grep -n 'mapping_file:' "$T/bad2.yaml" | cut -d: -f1)
pg2osync validate -c "$T/bad2.yaml" > "$T/bad2.out" 2>&1; rc=$?
ok $([ $rc = 1 ] && grep -q "^FAIL  configuration: $T/bad2.yaml:$line: 'sync.qstream.mapping_file' '$T/unnamed.json' must name its vectors" "$T/bad2.out"; echo $?) \
	"a mapping file with one unnamed vector is refused at its line $line (exit $rc: $(head -c 300 "$T/bad2.out"))"

pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/healthz"; ok $? "pipeline up"

psql_q -c "insert into qstream select g, 'row ' || g, g * 10, jsonb_build_object('emb', jsonb_build_array(g, 1, 0.25)) from generate_series(1, 50) g"
psql_q -c "update qstream set title = 'changed', n = n + 1 where id % 3 = 0"
psql_q -c "update qstream set _vectors = '{\"emb\":[0, 0, 1]}' where id % 4 = 0"
psql_q -c "delete from qstream where id % 5 = 0"
psql_q -c "insert into qstream values (100, null, null, null)"
check "loaded rows, streamed inserts, updates and deletes equal the collection (payload, vectors, point ids)" -- \
	qdrant_wait_equal qstream ${S}_qstream 60
qdrant_get "/collections/${S}_qstream" | jq -e '.result.config.params.vectors.emb.size == 3' > /dev/null
ok $? "the collection was made from the mapping file's named vectors"
pg2osync validate -c "$T/cfg.yaml" > "$T/v1.out" 2>&1; rc=$?
ok $([ $rc = 0 ] && grep -q "^ok .*target: index '${S}_qstream' maps the fields of its mapping_file as the file does" "$T/v1.out"; echo $?) \
	"validate passes: the collection's vectors are the file's (exit $rc)"
printf '{"vectors":{"emb":{"size":4,"distance":"Cosine"},"img":{"size":2,"distance":"Dot"}}}\n' > "$T/other.json"
sed "s#$T/qstream.json#$T/other.json#" "$T/cfg.yaml" > "$T/other.yaml"
pg2osync validate -c "$T/other.yaml" > "$T/v2.out" 2>&1; rc=$?
ok $([ $rc = 1 ] && grep -q "^FAIL .*contradicts 'sync.qstream.mapping_file': vector 'emb' has size 3, the file 4; vector 'img' is not in the collection" "$T/v2.out"; echo $?) \
	"validate fails a mapping file whose vectors the existing collection does not have: $(grep contradicts "$T/v2.out" | cut -c1-250) (exit $rc)"
psql_q -c "update qstream set id = id + 500 where id in (1, 2)"
check "a key change moves the point: the old id's point gone, the new one's there" -- \
	qdrant_wait_equal qstream ${S}_qstream 60
ok $([ "$(qdrant_stat writes_without_wait)" = 0 ] && [ "$(qdrant_stat writes)" -gt 0 ]; echo $?) \
	"every one of $(qdrant_stat writes) write requests was sent with wait=true"
wait_for 10 test -n "$(ckpt_lsn "$T/cfg.yaml")"
ok $? "a checkpoint is stored and read back ($(ckpt_lsn "$T/cfg.yaml"))"
n=$(qdrant_post "/collections/pg2osync_state/points/count" '{"exact":true}' | jq -r .result.count)
ok $([ "${n:-0}" -ge 1 ]; echo $?) "it is a point of collection pg2osync_state ($n points)"

psql_q -c "truncate qstream"
psql_q -c "insert into qstream values (1, 'after truncate', 1, '{\"emb\":[1,2,3]}')"
check "truncate clears the collection, and rows after it land" -- \
	qdrant_wait_equal qstream ${S}_qstream 60
diag "requests: $(qdrant_get /_contract/stats | jq -c .result.paths)"
P2O_T_QDRANT_KEY=not-the-key ckpt -c "$T/cfg.yaml" get > "$T/wrongkey.out" 2>&1; rc=$?
ok $([ $rc = 77 ]; echo $?) "a wrong API key is refused with exit 77: $(head -c 200 "$T/wrongkey.out")"
ok $(! grep -qF "$QDRANT_API_KEY" "$T/sup.log" "$T/wrongkey.out"; echo $?) "the API key is in no log"

[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v " info: " "$T/sup.log" | tail -n 30 | sed "s/^/#   /"; }
kill -TERM $SUP; wait $SUP
ok $? "the pipeline stops cleanly"
drop_slot $S
done_testing
