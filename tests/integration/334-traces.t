#!/usr/bin/env bash
# Traces read back from a real collector: Jaeger v1.75.0 (tests/servers/
# jaeger.sh; the one run-with.sh --jaeger started, or one of the test's
# own), fed over OTLP/HTTP by every stage of a pipeline with
# traces.sample_ratio 1. A transaction of two rows streamed: its trace has
# pg2osync.batch as its root (rows 2, its position) and decode, shape,
# write (documents, outcome written) and checkpoint as its children, each
# exported by its own process. /synced with a caller's traceparent: the
# wait is a span under the caller's. Then a pipeline whose collector does
# not listen: every row still arrives, each process warns once however
# many batches it drops.
# Fails when: a span is missing or hangs under another parent, the root
# has a parent, a stage's process name is wrong, the synced span does not
# continue the caller's trace, a row is missing with the collector down,
# or a process warns more than once.
. "$(dirname "$0")/../lib.sh"

S=p2o_traces
drop_slot $S; os_drop ${S}_tr
psql_q -c "drop table if exists tr; create table tr (id int primary key, v text)"
if [ -z "${JAEGER_QUERY_URL:-}" ]; then
	chmod 711 "$T"
	"$TOP/tests/servers/jaeger.sh" start "$T/jaeger" > "$T/jaeger.out" 2>&1 ||
		{ cat "$T/jaeger.out"; echo "Bail out! no Jaeger"; exit 1; }
	. "$T/jaeger/env"
fi
Q=$JAEGER_QUERY_URL
METRICS_PORT=$(free_port)
APORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S tr
cat >> "$T/cfg.yaml" <<EOF
api:
  bind: 127.0.0.1:$APORT
traces:
  endpoint: $JAEGER_OTLP_URL
  sample_ratio: 1
EOF
sup_start
ok $? "a pipeline with traces on is up"
wait_for 60 grep -q "'loader' finished" "$T/sup.log"

psql_q -c "begin; insert into tr values (1, 'one'); insert into tr values (2, 'two'); commit"
wait_for 30 bash -c "[ \"\$(curl -s '$OS_URL/${S}_tr/_count' | jq .count)\" = 2 ]"
ok $? "the transaction is indexed"

# the batch of two rows: its root, and every child, each stage's own
root_of() {	# the trace (JSON) whose pg2osync.batch has rows 2
	curl -s "$Q/api/traces?service=pg2osync&operation=pg2osync.batch&limit=100&lookback=1h" |
		jq -c '[.data[] | select(any(.spans[]; .operationName == "pg2osync.batch" and
			any(.tags[]; .key == "rows" and .value == 2)))] | first // empty'
}
have_all() {
	# not there yet is an empty answer, and jq -e takes no input as true
	root_of > "$T/trace.json" && [ -s "$T/trace.json" ] || return 1
	jq -e '[.spans[].operationName] as $n | all(("pg2osync.batch", "decode", "shape",
		"write", "checkpoint"); . as $o | $n | index($o))' "$T/trace.json"
}
wait_for 30 have_all
ok $? "Jaeger has the batch's trace with its five spans ($(jq -c '[.spans[].operationName]' "$T/trace.json" 2>/dev/null))"
rid=$(jq -r '.spans[] | select(.operationName == "pg2osync.batch") | .spanID' "$T/trace.json")
ok $(jq -e '.spans[] | select(.operationName == "pg2osync.batch") | (.references | length) == 0' \
	"$T/trace.json" >/dev/null; echo $?) "pg2osync.batch is the root"
for s in decode shape write checkpoint; do
	ok $(jq -e --arg s $s --arg r "$rid" '[.spans[] | select(.operationName == $s)] | length == 1 and
		(.[0].references | length == 1 and .[0].refType == "CHILD_OF" and .[0].spanID == $r)' \
		"$T/trace.json" >/dev/null; echo $?) "$s is a child of pg2osync.batch"
done
proc_of() {	# the process.executable.name of span $1's process
	jq -r --arg s "$1" '. as $t | .spans[] | select(.operationName == $s) | .processID as $p |
		$t.processes[$p].tags[] | select(.key == "process.executable.name") | .value' "$T/trace.json"
}
ok $([ "$(proc_of pg2osync.batch)/$(proc_of decode)/$(proc_of shape)/$(proc_of write)/$(proc_of checkpoint)" = \
	capture-pg/capture-pg/shaper/writer/pg2osync-supervise ]; echo $?) \
	"each span exported by its own stage ($(proc_of pg2osync.batch)/$(proc_of decode)/$(proc_of shape)/$(proc_of write)/$(proc_of checkpoint))"
ok $(jq -e '(.spans[] | select(.operationName == "pg2osync.batch") | .tags | from_entries) as $t |
	$t.rows == 2 and ($t.bytes > 0) and ($t.position | test("^[0-9A-F]+/[0-9A-F]+$"))' \
	"$T/trace.json" >/dev/null; echo $?) \
	"the root says rows 2, its bytes and its position"
ok $(jq -e '(.spans[] | select(.operationName == "write") | .tags | from_entries) as $t |
	$t.documents == 2 and $t.outcome == "written"' "$T/trace.json" >/dev/null; echo $?) \
	"write says documents 2, outcome written"
ok $(jq -e '(.spans[] | select(.operationName == "pg2osync.batch")) as $r |
	all(.spans[]; .startTime >= $r.startTime and .startTime + .duration <= $r.startTime + $r.duration)' \
	"$T/trace.json" >/dev/null; echo $?) "the root lasts from the transaction's start to its ack"

# /synced continues a caller's trace
tid=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
sid=$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
c=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H "traceparent: 00-$tid-$sid-01" \
	"http://127.0.0.1:$APORT/synced?timeout=20000")
ok $([ "$c" = 200 ]; echo $?) "/synced with a traceparent: 200"
wait_for 20 bash -c "curl -s '$Q/api/traces/$tid' | jq -e '.data[0].spans[] | select(.operationName == \"pg2osync.synced\")'"
ok $? "Jaeger has the synced span in the caller's trace"
ok $(curl -s "$Q/api/traces/$tid" | jq -e --arg p "$sid" '.data[0].spans[] | select(.operationName == "pg2osync.synced") |
	.references[0].spanID == $p' >/dev/null; echo $?) "under the caller's span"
c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -H "traceparent: 00-not-a-trace-01" \
	"http://127.0.0.1:$APORT/synced?timeout=20000")
ok $([ "$c" = 200 ]; echo $?) "a malformed traceparent is ignored: 200"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"

# the collector down: the stream goes on, one warning per process
DEAD=$(free_port)
sed -i "s|  endpoint: $JAEGER_OTLP_URL|  endpoint: http://127.0.0.1:$DEAD|" "$T/cfg.yaml"
: > "$T/sup.log"
sup_start
ok $? "a pipeline whose collector does not listen is up"
for i in $(seq 10 39); do
	psql_q -c "insert into tr values ($i, 'row $i')"
	sleep 0.1
done
wait_for 30 bash -c "[ \"\$(curl -s '$OS_URL/${S}_tr/_count' | jq .count)\" = 32 ]"
ok $? "every row is indexed all the same"
sleep 1
for tool in capture-pg shaper writer pg2osync-supervise; do
	n=$(grep -cE "(^| )$tool: warn: traces: the collector" "$T/sup.log")
	ok $([ "$n" = 1 ]; echo $?) "$tool warned once about the collector ($n)"
done
dropped() {	# dropped STAGE: its count of dropped spans on /metrics
	metrics_text | awk -v s="pg2osync_trace_spans_dropped_total{stage=\"$1\"}" '$1 == s {print $2}'
}
for stage in capture shaper writer supervisor; do
	for i in $(seq 1 100); do
		n=$(dropped $stage)
		[ "${n:-0}" -gt 0 ] && break
		sleep 0.1
	done
	ok $([ "${n:-0}" -gt 0 ]; echo $?) "the $stage's dropped spans are counted on /metrics (${n:-none})"
done
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 40
drop_slot $S
done_testing
