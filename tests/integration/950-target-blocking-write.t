#!/usr/bin/env bash
# Meilisearch, against the contract server, which can hold a task in
# "processing" on demand as a real server cannot: the verbs' blocking
# write of documents (lib/target.c, target_write_all, driven directly by
# tests/helper/target-write; verify --repair and reconcile --delete reach
# it on the real server in 947) goes through the module's task procedure:
# additions and deletes land, it returns only once their tasks succeeded
# (a task held in "processing" holds it), and a task that fails refuses
# the document its error names while the other writes are sent again and
# land.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

TW=${P2O_BIN:-$TOP/build/bin}/../tests/target-write
S=p2o_meiliw
IX=${S}_w
meili_contract_start 30; ok $? "contract server up"
mkmeili "$T/cfg.yaml" $S $S w

# a write a line: index, id, version and document (- a delete), by tabs
w() { printf '%s\t%s\t%s\t%s\n' "$@"; }
{ w $IX a 1 '{"n":1}'; w $IX b 1 '{"n":2}'; w $IX c 1 '{"n":3}'; w $IX b 2 -; } > "$T/w1"
"$TW" -c "$T/cfg.yaml" < "$T/w1" > "$T/o1" 2>&1; rc=$?
sed 's/^/#   /' "$T/o1"
ok $([ $rc = 0 ] && [ "$(grep -c ': ok ' "$T/o1")" = 4 ]; echo $?) "three additions and a delete: each ok, exit $rc"
got=$(meili_get "/indexes/$IX/documents?limit=100" | jq -c '[.results[] | .pg2osync_id] | sort')
ok $([ "$got" = '["a","c"]' ]; echo $?) "the index holds a and c, b deleted after it was added: $got"
n=$(awk '/^requests/ {print $2}' "$T/o1")
ok $([ "${n:-0}" -ge 4 ]; echo $?) "two tasks, each enqueued and polled: $n requests"

# held in processing: the write does not return until the task ends
meili_post "/_contract/hold?at=processing" >/dev/null
w $IX d 1 '{"n":4}' | "$TW" -c "$T/cfg.yaml" > "$T/o2" 2>&1 &
TWP=$!
cleanup_add $TWP
held() { [ "$(meili_tasks processing)" -ge 1 ]; }
wait_for 10 held; ok $? "its task is processing"
sleep 1
kill -0 $TWP 2>/dev/null; ok $? "and the write is still waiting for it"
meili_post /_contract/release >/dev/null
wait $TWP; rc=$?
ok $([ $rc = 0 ] && grep -q "^$IX/d: ok" "$T/o2"; echo $?) "released: it returns, written, exit $rc"

# a failed task refuses the document its error names; the others are
# sent again
{ w $IX e 1 '{"n":5}'; w $IX 'bad id' 1 '{"n":6}'; w ${IX}_other f 1 '{"n":7}'; } > "$T/w3"
"$TW" -c "$T/cfg.yaml" < "$T/w3" > "$T/o3" 2>&1; rc=$?
sed 's/^/#   /' "$T/o3"
ok $([ $rc = 0 ] && grep -q "^$IX/e: ok" "$T/o3" &&
	grep -q "^$IX/bad id: reject invalid_document_id" "$T/o3" &&
	grep -q "^${IX}_other/f: ok" "$T/o3"; echo $?) \
	"a task failing on one id refuses that document with the task's code; the other of its task and the next task are taken"
meili_get "/indexes/${IX}_other/documents/f" | jq -e '.n == 7' >/dev/null
ok $? "the write after the failed task landed"
done_testing
