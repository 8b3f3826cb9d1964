#!/usr/bin/env bash
# A SIGHUP must never change what the documents already written are
# without a word. On a running supervised pipeline, rows streaming every
# 0.1 s: a section's id changed, then its where: each reload refused, the
# log line naming the file, the key's line, the key and the remedy
# (pg2osync verify --repair for that section), nothing cycled, a later
# insert still indexed, and pg2osync verify on the running file finds no
# difference. Then the remedy the refusal named, carried out as it says:
# the supervisor restarted on the file with both changes, the named
# command run; pg2osync verify on the new file finds no difference (every
# document under its new id, none of a row the filter leaves out). On
# MariaDB (when the test runs with --mariadb): a section's columns
# changed, refused with pg2osync resnapshot as the remedy, which,
# carried out, leaves verify nothing to find.
# Fails when: a reload takes such a change (the old code applied both:
# the documents under the old ids stayed beside the new ones), the line
# or the remedy is wrong, the stream stops, or the remedy leaves a
# difference. Run under tests/servers/run-with.sh --pg --os [--mariadb].
. "$(dirname "$0")/../mysql-lib.sh"

S=p2o_reload_id
drop_slot $S; os_drop ${S}_ri; drop_loads $S ri
psql_q -c "drop table if exists ri;
	create table ri (id int primary key, grp int, v text);
	insert into ri select g, g % 3, 'old ' || g from generate_series(1, 3000) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S ri
cp "$T/cfg.yaml" "$T/run.yaml"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "every table is loaded" "$T/sup.log"
ok $? "the pipeline is up with table ri"
reloads() { metrics_text | awk -v r="$1" '$1 == "pg2osync_config_reloads_total{result=\"" r "\"}" {print $2}'; }
SEL="json_build_object('id',id,'grp',grp,'v',v)"

# rows arrive every 0.1 s through both refusals
( i=10001; while :; do psql_q -c "insert into ri values ($i, $i % 3, 'r$i')" >/dev/null 2>&1; i=$((i + 1)); sleep 0.1; done ) &
FEED=$!; cleanup_add $FEED
sleep 1

# with_key FILE KEY-LINE: run.yaml with KEY-LINE after the section's index
with_key() { sed "/^    index: ${S}_ri\$/a\\$2" "$T/run.yaml" > "$1"; }
line_of() { grep -n -F -- "$2" "$1" | head -n1 | cut -d: -f1; }
refusal() { grep "reload refused" "$T/sup.log" | sed -n "${1}p"; }
# hup N: SIGHUP, and wait for the Nth refusal
hup() {
	kill -HUP $SUP
	wait_for 60 bash -c "[ \$(grep -c 'reload refused' '$T/sup.log') -ge $1 ]"
}

# 1. the id
with_key "$T/cfg.yaml" '    id: "ri-{id}"'
L=$(line_of "$T/cfg.yaml" 'id: "ri-{id}"')
hup 1
ok $? "a changed id: the reload is refused"
R=$(refusal 1)
diag "$R"
ok $(echo "$R" | grep -qF "$T/cfg.yaml:$L: sync.ri.id changed: the documents already written keep their old ids"; echo $?) \
	"... naming the file, the line ($L) and the key"
ok $(echo "$R" | grep -qF "restart pg2osync-supervise on this file, then run 'pg2osync verify -c $T/cfg.yaml --table ri --repair'"; echo $?) \
	"... and the remedy: verify --repair of the section"
psql_q -c "insert into ri values (900001, 1, 'after the id')"
wait_for 30 bash -c "curl -s '$OS_URL/${S}_ri/_doc/900001' | jq -e .found"
ok $? "the pipeline streams on, under the old ids"

# 2. the filter
with_key "$T/cfg.yaml" "    where: \"grp <> 2\""
L=$(line_of "$T/cfg.yaml" 'where: "grp <> 2"')
hup 2
ok $? "a changed where: the reload is refused"
R=$(refusal 2)
diag "$R"
ok $(echo "$R" | grep -qF "$T/cfg.yaml:$L: sync.ri.where changed: the documents of rows the new filter leaves out would stay" &&
	echo "$R" | grep -qF "'pg2osync verify -c $T/cfg.yaml --table ri --repair'"; echo $?) \
	"... naming the file, the line ($L), the key and the remedy"
psql_q -c "insert into ri values (900002, 2, 'after the where')"
wait_for 30 bash -c "curl -s '$OS_URL/${S}_ri/_doc/900002' | jq -e .found"
ok $? "the pipeline streams on, without the filter"
ok $([ "$(reloads refused)" = 2 ] && [ -z "$(reloads applied)" -o "$(reloads applied)" = 0 ]; echo $?) \
	"counted: refused $(reloads refused), applied $(reloads applied)"
ok $(! grep -q "reload: draining\|reload applied" "$T/sup.log"; echo $?) "nothing was cycled or applied"
ok $(kill -0 $SUP 2>/dev/null; echo $?) "the supervisor runs on"

kill $FEED 2>/dev/null; wait $FEED 2>/dev/null
check "every row, inserted through both refusals, is indexed" -- wait_equal ri ${S}_ri 60 "$SEL"
pg2osync verify -c "$T/run.yaml" > "$T/verify.run" 2>&1
st=$?
ok $([ $st = 0 ]; echo $?) "pg2osync verify on the running file finds no difference (exit $st: $(tail -n1 "$T/verify.run"))"
[ $st = 0 ] || sed 's/^/#   /' "$T/verify.run" | tail -n 5

# 3. the remedy, as the refusal of the file with both changes says
sed "/^    index: ${S}_ri\$/a\\    id: \"ri-{id}\"\n    where: \"grp <> 2\"" "$T/run.yaml" > "$T/cfg.yaml"
hup 3
R=$(refusal 3)
diag "$R"
ok $(echo "$R" | grep -qF "sync.ri.id changed" && echo "$R" | grep -qF "(also sync.ri.where changed at line"; echo $?) \
	"both changes named in one refusal"
CMD=$(echo "$R" | sed -n "s/.*then run '\(pg2osync verify [^']*\)'.*/\1/p")
ok $([ -n "$CMD" ]; echo $?) "the remedy: $CMD"
kill -TERM $SUP; wait $SUP
sup_start
ok $? "restarted on the new file"
psql_q -c "insert into ri values (900003, 1, 'streamed, new id'), (900004, 2, 'filtered out');
	update ri set v = 'changed' where id in (1, 2)"
wait_for 30 bash -c "curl -s '$OS_URL/${S}_ri/_doc/ri-900003' | jq -e .found"
ok $? "the restarted pipeline writes the new ids"
pg2osync verify -c "$T/cfg.yaml" > "$T/verify.before" 2>&1
st=$?
ok $([ $st = 1 ]; echo $?) "before the remedy, verify on the new file finds the old documents (exit $st: $(tail -n1 "$T/verify.before"))"
[ -n "$CMD" ] && $CMD > "$T/remedy" 2>&1
st=$?
ok $([ $st = 0 ]; echo $?) "the remedy ran (exit $st: $(tail -n1 "$T/remedy"))"
[ $st = 0 ] || sed 's/^/#   /' "$T/remedy" | tail -n 5
pg2osync verify -c "$T/cfg.yaml" > "$T/verify.new" 2>&1
st=$?
ok $([ $st = 0 ]; echo $?) "pg2osync verify on the new file finds no difference (exit $st: $(tail -n1 "$T/verify.new"))"
[ $st = 0 ] || sed 's/^/#   /' "$T/verify.new" | tail -n 5
want=$(psql_q -c "select count(*) from ri where grp <> 2")
got=$(os_count ${S}_ri)
old=$(curl -s "$OS_URL/${S}_ri/_search?size=10000&_source=false" | jq '[.hits.hits[]._id | select(startswith("ri-") | not)] | length')
ok $([ "$got" = "$want" ] && [ "$old" = 0 ]; echo $?) \
	"the index holds the $want rows the filter keeps, each under its new id ($got documents, $old under an old id)"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | grep -v ' loader: \| writer: info' | tail -n 40
drop_slot $S

# ---- MariaDB: a projection, remedied by resnapshot
if [ -z "${MYSQL_HOST:-}" ]; then
	skip "MariaDB: needs --mariadb"
	done_testing; exit
fi
MY_SERVER_ID=4242420322
export MY_SERVER_ID
my_fresh_stream m22
os_drop r22_m22
my_sql "DROP TABLE IF EXISTS m22;
	CREATE TABLE m22 (id int PRIMARY KEY, v varchar(40), w varchar(40));
	INSERT INTO m22 SELECT seq, CONCAT('v', seq), CONCAT('w', seq) FROM seq_1_to_2000"
: > "$T/sup.log"
my_config "$T/cfg.yaml" r22 m22
sup_start
wait_for 60 grep -q "every table is loaded" "$T/sup.log"
ok $? "MariaDB: the pipeline is up with table m22"
sed "/^    index: r22_m22\$/a\\    columns: [id, v]" "$T/cfg.yaml" > "$T/cols.yaml"
cp "$T/cols.yaml" "$T/cfg.yaml"
L=$(line_of "$T/cfg.yaml" 'columns: [id, v]')
hup 1
R=$(refusal 1)
diag "$R"
ok $(echo "$R" | grep -qF "$T/cfg.yaml:$L: sync.m22.columns changed" &&
	echo "$R" | grep -qF "then run 'pg2osync resnapshot -c $T/cfg.yaml --table m22'"; echo $?) \
	"MariaDB: changed columns refused, the line ($L) and resnapshot named"
my_sql "INSERT INTO m22 VALUES (5001, 'v', 'w')"
wait_for 30 bash -c "curl -s '$OS_URL/r22_m22/_doc/5001' | jq -e '._source.w == \"w\"'"
ok $? "MariaDB: the pipeline streams on with the old columns"
CMD=$(echo "$R" | sed -n "s/.*then run '\(pg2osync resnapshot [^']*\)'.*/\1/p")
kill -TERM $SUP; wait $SUP
sup_start
pg2osync verify -c "$T/cfg.yaml" > "$T/verify.before" 2>&1
st=$?
ok $([ $st = 1 ]; echo $?) "MariaDB: before the remedy, verify on the new file finds the old shape (exit $st: $(tail -n1 "$T/verify.before"))"
[ -n "$CMD" ] && $CMD > "$T/remedy" 2>&1
st=$?
ok $([ $st = 0 ]; echo $?) "MariaDB: the remedy ran: $CMD (exit $st)"
pg2osync verify -c "$T/cfg.yaml" > "$T/verify.my" 2>&1
st=$?
ok $([ $st = 0 ]; echo $?) "MariaDB: pg2osync verify on the new file finds no difference (exit $st: $(tail -n1 "$T/verify.my"))"
[ $st = 0 ] || sed 's/^/#   /' "$T/verify.my" | tail -n 5
kill -TERM $SUP; wait $SUP
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 30
done_testing
