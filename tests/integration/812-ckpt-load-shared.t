#!/usr/bin/env bash
# ckpt serve with 50 sync sections writing one index: the load plan reads
# the 50 progress documents in one request and writes them in one, and
# suspends the shared index once; a mark is stored without a read first;
# the index is restored once, by the last section to finish, and not
# before; 1,100 sections, more than ckpt holds at once, each end done and
# restored, and a forget reaches every one. Requests are
# counted by the node itself (_nodes/usage: the REST actions it served),
# not by a stand-in.
. "$(dirname "$0")/../lib.sh"

# setup CONFIG SLOT INDEX REFRESH PREFIX N WIDTH: N tables PREFIX<n> (n
# WIDTH digits wide), each a sync section of CONFIG writing INDEX, which
# exists before the load with a refresh interval of its own
setup() {
	local cfg=$1 slot=$2 ix=$3 refresh=$4 p=$5 n=$6 wd=$7 t
	psql_q -c "do \$\$ begin for i in 1..$n loop
		execute format('drop table if exists $p%s', lpad(i::text, $wd, '0'));
		execute format('create table $p%s (id int primary key)', lpad(i::text, $wd, '0'));
		end loop; end \$\$"
	mkhead "$cfg" $slot
	{
		echo "sync:"
		for t in $(seq -f "$p%0${wd}g" 1 $n); do
			printf '  %s:\n    table: public.%s\n    index: %s\n    id: "%s-{id}"\n' $t $t $ix $t
		done
	} >> "$cfg"
	curl -sS -XPUT "$OS_URL/$ix" -H 'Content-Type: application/json' \
		-d "{\"settings\":{\"index\":{\"refresh_interval\":\"$refresh\",\"number_of_replicas\":0}}}" >/dev/null
}

S=p2o_ckshared
N=50
IX=${S}_all
tabs=$(seq -f 's%02g' 1 $N)
drop_slot $S
os_drop $IX
drop_loads $S $tabs
setup "$T/cfg.yaml" $S $IX 7s s $N 2

frame() { printf '%d %s\n' $((${#1} + 1)) "$1"; }
serve() {
	local f
	for f in "$@"; do frame "$f"; done | ckpt -c "${CFG:-$T/cfg.yaml}" serve 2>>"$T/serve.err" | sed -E 's/^[0-9]+ //'
}
setting() {	# setting NAME -> the index's own value, or "null"
	curl -s "$OS_URL/$IX/_settings?flat_settings=true" | jq -r --arg i "$IX" --arg n "index.$1" '.[$i].settings[$n] // "null"'
}
usage() {	# the REST actions the node has served, summed over its nodes
	curl -s "$OS_URL/_nodes/usage" | jq -c '[.nodes[].rest_actions] | add // {}'
}
# used BEFORE AFTER ACTION -> how many more times the node served it
used() { jq -n --argjson a "$1" --argjson b "$2" --arg k "$3" '($b[$k] // 0) - ($a[$k] // 0)'; }

u0=$(usage)
out=$(serve '{"k":"get"}')
u1=$(usage)
n=$(echo "$out" | jq -s '[.[] | select(.k == "load") | .tables[]] | length')
ok $([ "$n" = $N ]; echo $?) "the plan lists the $N tables ($n)"
diag "the plan's requests: $(jq -n -c --argjson a "$u0" --argjson b "$u1" '$b | with_entries(.value -= ($a[.key] // 0)) | with_entries(select(.value > 0))')"
ok $([ "$(used "$u0" "$u1" document_mget_action)" = 1 ]; echo $?) \
	"the $N progress documents are read in one _mget ($(used "$u0" "$u1" document_mget_action))"
ok $([ "$(used "$u0" "$u1" bulk_action)" = 1 ]; echo $?) \
	"and written in one _bulk ($(used "$u0" "$u1" bulk_action))"
# the checkpoint and the sweep marker are the only documents read alone
ok $([ "$(used "$u0" "$u1" document_get_action)" -le 2 ] && [ "$(used "$u0" "$u1" document_index_action)" = 0 ]; echo $?) \
	"no progress document is read or written alone (GET $(used "$u0" "$u1" document_get_action), PUT $(used "$u0" "$u1" document_index_action))"
ok $([ "$(used "$u0" "$u1" update_settings_action)" = 1 ] && [ "$(used "$u0" "$u1" get_settings_action)" = 1 ]; echo $?) \
	"the shared index's settings are read once and suspended once ($(used "$u0" "$u1" get_settings_action), $(used "$u0" "$u1" update_settings_action))"
ok $([ "$(setting refresh_interval)" = -1 ]; echo $?) "the index is suspended ($(setting refresh_interval))"
n=$(curl -s "$OS_URL/.pg2osync_meta/_mget" -H 'Content-Type: application/json' \
	-d "$(jq -n -c --arg s "$S" --arg t "$tabs" '{ids: [$t | split("\n")[] | "postgres:\($s)/load/public.\(.)"]}')" |
	jq '[.docs[] | select(.found and ._source.settings.refresh_interval == "7s")] | length')
ok $([ "$n" = $N ]; echo $?) "every section recorded the index's originals before the suspension ($n)"

# one serve, as the supervisor runs it: the plan, then every table's last
# mark but the last table's
frames=('{"k":"get"}')
for t in $(echo "$tabs" | head -n $((N - 1))); do
	frames+=("{\"k\":\"marked\",\"id\":\"public.$t#1\",\"table\":\"public.$t\",\"progress\":{\"done\":1},\"done\":true}")
done
u2=$(usage)
out=$(serve "${frames[@]}")
u3=$(usage)
ok $([ "$(echo "$out" | jq -s '[.[] | select(.k == "confirm")] | length')" = $((N - 1)) ]; echo $?) "every mark is confirmed"
ok $(echo "$out" | jq -s -e --arg n $((N - 1)) '[.[] | select(.k == "confirm") | .id] == [range(1; ($n | tonumber) + 1) | "public.s\(. | tostring | if length < 2 then "0" + . else . end)#1"]' >/dev/null; echo $?) \
	"in the order the marks arrived"
# the marks arrived together (the loader keeps several tables' open): their
# progress in one write, not one each (the plan's own write aside, and a
# second should ckpt's first read have caught only some of them)
ok $([ "$(used "$u2" "$u3" bulk_action)" -le 3 ]; echo $?) \
	"the $((N - 1)) marks that arrived together are stored in one _bulk ($(used "$u2" "$u3" bulk_action) with the plan's)"
ok $([ "$(used "$u2" "$u3" document_mget_action)" = 1 ] && [ "$(used "$u2" "$u3" document_get_action)" -le 2 ]; echo $?) \
	"a mark is stored without reading its document first (mget $(used "$u2" "$u3" document_mget_action), GET $(used "$u2" "$u3" document_get_action))"
ok $([ "$(used "$u2" "$u3" update_settings_action)" = 1 ]; echo $?) \
	"and no mark restores the index while a section writing it still loads (settings written $(used "$u2" "$u3" update_settings_action) time: the plan's suspension)"
ok $([ "$(setting refresh_interval)" = -1 ]; echo $?) "still suspended ($(setting refresh_interval))"
out=$(serve '{"k":"get"}')
check "the plan names the one table left" -- \
	test "$(echo "$out" | jq -c 'select(.k == "load") | [.tables[].table]')" = "[\"public.s$N\"]"

# the last one, in a serve of its own that made no plan: what is stored
# says it is the last
u4=$(usage)
out=$(serve "{\"k\":\"marked\",\"id\":\"public.s$N#1\",\"table\":\"public.s$N\",\"progress\":{\"done\":1},\"done\":true}")
u5=$(usage)
check "the last mark is confirmed" -- test "$out" = "{\"k\":\"confirm\",\"id\":\"public.s$N#1\"}"
ok $([ "$(setting refresh_interval)" = 7s ] && [ "$(setting number_of_replicas)" = 0 ]; echo $?) \
	"the last section to finish restores the index ($(setting refresh_interval), $(setting number_of_replicas))"
ok $([ "$(used "$u4" "$u5" update_settings_action)" = 1 ]; echo $?) "once ($(used "$u4" "$u5" update_settings_action))"
n=$(curl -s "$OS_URL/.pg2osync_meta/_mget" -H 'Content-Type: application/json' \
	-d "$(jq -n -c --arg s "$S" --arg t "$tabs" '{ids: [$t | split("\n")[] | "postgres:\($s)/load/public.\(.)"]}')" |
	jq '[.docs[] | select(.found and ._source.done and ._source.restored)] | length')
ok $([ "$n" = $N ]; echo $?) "and every section's document says done and restored ($n)"
# an operator's change after the load is not undone by the next start
curl -sS -XPUT "$OS_URL/$IX/_settings" -H 'Content-Type: application/json' \
	-d '{"index":{"refresh_interval":"9s"}}' >/dev/null
out=$(serve '{"k":"get"}')
check "nothing is left to load" -- test "$(echo "$out" | jq -c 'select(.k == "load")')" = '{"k":"load","tables":[]}'
ok $([ "$(setting refresh_interval)" = 9s ]; echo $?) "a finished load leaves the index's settings alone ($(setting refresh_interval))"

# every mark in one serve with its plan: the last of the index, among
# marks stored together, is stored after them and restores the index once
drop_loads $S $tabs
curl -sS -XPUT "$OS_URL/$IX/_settings" -H 'Content-Type: application/json' \
	-d '{"index":{"refresh_interval":"6s"}}' >/dev/null
frames=('{"k":"get"}')
for t in $tabs; do
	frames+=("{\"k\":\"marked\",\"id\":\"public.$t#1\",\"table\":\"public.$t\",\"progress\":{\"done\":1},\"done\":true}")
done
u6=$(usage)
out=$(serve "${frames[@]}")
u7=$(usage)
ok $([ "$(echo "$out" | jq -s '[.[] | select(.k == "confirm")] | length')" = $N ]; echo $?) "all $N marks in one serve: each confirmed"
ok $([ "$(setting refresh_interval)" = 6s ] && [ "$(used "$u6" "$u7" update_settings_action)" = 2 ]; echo $?) \
	"the index suspended by the plan and restored once, by the last ($(setting refresh_interval), settings written $(used "$u6" "$u7" update_settings_action) times)"
n=$(curl -s "$OS_URL/.pg2osync_meta/_mget" -H 'Content-Type: application/json' \
	-d "$(jq -n -c --arg s "$S" --arg t "$tabs" '{ids: [$t | split("\n")[] | "postgres:\($s)/load/public.\(.)"]}')" |
	jq '[.docs[] | select(.found and ._source.done and ._source.restored)] | length')
ok $([ "$n" = $N ]; echo $?) "every section's document says done and restored ($n)"
ok $([ "$(used "$u6" "$u7" bulk_action)" -le 4 ]; echo $?) \
	"in few writes: the plan's, the marks', the last's ($(used "$u6" "$u7" bulk_action))"

drop_loads $S $tabs
os_drop $IX

# more sections writing one index than ckpt reads or writes in one request
# (DOCS_SLICE, 512): the plan reads them in slices, and the last to finish
# reads the others in slices again to mark them restored; each is stored
# done and restored, and a forget reaches every one
S2=p2o_ckshared_big
N2=1100
IX2=${S2}_all
big=$(seq -f 'b%04g' 1 $N2)
meta_drop() {	# every progress document and the sweep marker of S2
	{ echo "$big" | jq -R -c --arg s $S2 '{delete: {_index: ".pg2osync_meta", _id: "postgres:\($s)/load/public.\(.)"}}'
	  jq -n -c --arg s $S2 '{delete: {_index: ".pg2osync_meta", _id: "postgres:\($s)/sweep"}}'; } |
		curl -sS -XPOST "$OS_URL/_bulk?refresh=true" -H 'Content-Type: application/x-ndjson' --data-binary @- >/dev/null
}
big_docs() {	# the progress documents of S2's sections that pass jq's FILTER
	curl -s "$OS_URL/.pg2osync_meta/_mget" -H 'Content-Type: application/json' \
		-d "$(jq -n -c --arg s "$S2" --arg t "$big" '{ids: [$t | split("\n")[] | "postgres:\($s)/load/public.\(.)"]}')" |
		jq "[.docs[] | select(.found and ($1))] | length"
}
meta_drop
os_drop $IX2
setup "$T/big.yaml" $S2 $IX2 5s b $N2 4
frames=('{"k":"get"}')
for t in $big; do
	frames+=("{\"k\":\"marked\",\"id\":\"public.$t#1\",\"table\":\"public.$t\",\"progress\":{\"done\":1},\"done\":true}")
done
u8=$(usage)
out=$(CFG=$T/big.yaml serve "${frames[@]}")
u9=$(usage)
ok $(echo "$out" | jq -s -e --arg n $N2 '[.[] | select(.k == "confirm") | .id] == [range(1; ($n | tonumber) + 1) | "public.b\(. | tostring | ("000" + .)[-4:])#1"]' >/dev/null; echo $?) \
	"$N2 sections' marks in one serve: each confirmed, in order"
ok $(curl -s "$OS_URL/$IX2/_settings?flat_settings=true" | jq -e --arg i "$IX2" '.[$i].settings["index.refresh_interval"] == "5s"' >/dev/null; echo $?) \
	"the index restored by the last"
ok $([ "$(used "$u8" "$u9" update_settings_action)" = 2 ]; echo $?) \
	"suspended once and restored once ($(used "$u8" "$u9" update_settings_action) settings writes)"
n=$(big_docs '._source.done and ._source.restored')
ok $([ "$n" = $N2 ]; echo $?) "every section's document says done and restored ($n of $N2)"
diag "the requests of $N2 sections' load: $(jq -n -c --argjson a "$u8" --argjson b "$u9" '$b | with_entries(.value -= ($a[.key] // 0)) | with_entries(select(.value > 0))')"
out=$(CFG=$T/big.yaml serve '{"k":"get","forget":true}')
n=$(echo "$out" | jq -s '[.[] | select(.k == "load") | .tables[]] | length')
ok $([ "$n" = $N2 ]; echo $?) "after a forget the plan lists the $N2 tables again ($n)"
n=$(big_docs '(._source.done | not) and ._source.progress == null')
ok $([ "$n" = $N2 ]; echo $?) "and every section's progress is forgotten ($n of $N2)"

meta_drop
os_drop $IX2
psql_q -c "do \$\$ begin for i in 1..$N2 loop
	execute format('drop table b%s', lpad(i::text, 4, '0'));
	end loop; end \$\$"
drop_slot $S
done_testing
