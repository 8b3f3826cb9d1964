#!/usr/bin/env bash
# The loader under a stand-in supervisor (tests/helper/loader-supervisor.py,
# fd 3 as a socketpair): marks confirmed one by one, the next wave read
# while a mark is confirmed but no mark written before its table's one
# before it is confirmed, the next tables' marks written meanwhile, stats;
# resuming from the progress a mark
# carried, at the range after it; fd 3 closing early; and every refusal
# with its exit code.
. "$(dirname "$0")/../lib.sh"

S=ld_res
SUP=(python3 "$TOP/tests/helper/loader-supervisor.py")
SUPER=(psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d "$PGDATABASE")
trap '"${SUPER[@]}" -c "drop role if exists ld_limited" >/dev/null 2>&1; _cleanup' EXIT
drop_slot $S
psql_q <<'SQL'
drop table if exists ld_res, ld_nokey, ld_s1, ld_s2, ld_s3;
create table ld_res (id int primary key, v text);
insert into ld_res select g, 'v' || g from generate_series(1, 60000) g;
analyze ld_res;
create table ld_nokey (id int, v text);
SQL
mkconfig "$T/cfg.yaml" $S $S ld_res
psql_q -c "select pg_create_logical_replication_slot('$S', 'pgoutput')" > /dev/null
ids() { sed -E 's/^[0-9]+ //' "$1" | jq -r 'select(.k == "row") | .new.id'; }

# a first run: every mark confirmed after a pause during which the next
# wave's rows may arrive, but no mark (the helper fails when one does)
"${SUP[@]}" --table public.ld_res --frames "$T/a.frames" --marks "$T/a.marks" \
	--stats "$T/a.stats" --hold 0.3 -- loader -c "$T/cfg.yaml" --range-rows 5000 2> "$T/a.err"
ok $? "supervised: the load ends with exit 0, no mark written before the last one was confirmed"
overlap=$(sed -n 's/^loader-supervisor: \([0-9]*\) row frames arrived while a mark waited.*/\1/p' "$T/a.err")
ok $([ "${overlap:-0}" -gt 0 ]; echo $?) "the next wave was read while a mark was confirmed (${overlap:-0} rows meanwhile)"

of=$(head -n 1 "$T/a.marks" | jq .progress.of)
ok $([ "$of" -ge 8 ] && [ "$(wc -l < "$T/a.marks")" = "$of" ]; echo $?) "one mark per range: $(wc -l < "$T/a.marks") of $of"
ok $(jq -s -e '[.[].progress.done] == [range(1; length + 1)] and (.[-1].done == true) and ([.[:-1][].done] | all(. == null))' "$T/a.marks" > /dev/null; echo $?) \
	"marks count the ranges done; only the last says the table is done"
ok $(tail -n 1 "$T/a.stats" | jq -e --argjson of "$of" '.tool == "loader" and .counters.load_rows["public.ld_res"] == 60000 and .counters.load_ranges_done["public.ld_res"] == $of and .counters.load_ranges["public.ld_res"] == $of and .counters.load_rows_estimate["public.ld_res"] > 0 and .counters.load_wal_paused == 0' > /dev/null; echo $?) \
	"the last stats: rows, estimate, ranges done and cut, per table"

# resume from the progress of mark 3
sed -n 3p "$T/a.marks" | jq -c .progress > "$T/p3.json"
before=$(jq .rows "$T/p3.json")
"${SUP[@]}" --table "public.ld_res=$T/p3.json" --frames "$T/b.frames" --marks "$T/b.marks" \
	-- loader -c "$T/cfg.yaml" --range-rows 1000 2> "$T/b.err"
ok $? "resumed load ends with exit 0"
grep -q "resuming 'public.ld_res' at range 4 of $of" "$T/b.err"
ok $? "it says where it resumes: $(grep -m1 resuming "$T/b.err")"
ok $([ "$(head -n 1 "$T/b.marks" | jq -r .id)" = "public.ld_res#4" ]; echo $?) "its first mark is range 4's"
ok $([ "$(wc -l < "$T/b.marks")" = $((of - 3)) ]; echo $?) "and it reads the $((of - 3)) ranges left, cut as stored (not by --range-rows)"
awk '/"id":"public.ld_res#3"/ {exit} {print}' "$T/a.frames" > "$T/a3.frames"
n=$(ids "$T/b.frames" | wc -l)
ok $([ "$n" = $((60000 - before)) ]; echo $?) "it reads the rows after range 3: $n = 60000 - $before"
cat <(ids "$T/a3.frames") <(ids "$T/b.frames") | sort -n > "$T/union"
ok $(seq 60000 | cmp -s - "$T/union"; echo $?) "the first three ranges and the rest are every row exactly once"

# the last mark's progress: nothing left to read, the mark again
tail -n 1 "$T/a.marks" | jq -c .progress > "$T/pdone.json"
"${SUP[@]}" --table "public.ld_res=$T/pdone.json" --frames "$T/c.frames" --marks "$T/c.marks" \
	-- loader -c "$T/cfg.yaml" 2> "$T/c.err"
ok $([ $? = 0 ] && [ "$(grep -c '"k":"row"' "$T/c.frames")" = 0 ] && jq -e '.done == true' "$T/c.marks" > /dev/null; echo $?) \
	"a finished table: no row, its last mark again"
# progress cut on another key: the table is loaded from the start
jq -c '.types = ["text"]' "$T/p3.json" > "$T/pother.json"
"${SUP[@]}" --table "public.ld_res=$T/pother.json" --frames "$T/d.frames" \
	-- loader -c "$T/cfg.yaml" 2> "$T/d.err"
ok $([ $? = 0 ] && [ "$(grep -c '"k":"row"' "$T/d.frames")" = 60000 ] && grep -q "loading it from the start" "$T/d.err"; echo $?) \
	"progress for another key: a warning, and the whole table"

# fd 3 closing while a mark waits
"${SUP[@]}" --table public.ld_res --close-after 2 -- loader -c "$T/cfg.yaml" --range-rows 5000 > /dev/null 2> "$T/e.err"
st=$?
ok $([ $st = 75 ]; echo $?) "fd 3 closing before a confirmation: exit 75 (got $st)"
grep -q "control fd 3 closed before mark 'public.ld_res#2' was confirmed" "$T/e.err"
ok $? "and says so: $(grep error "$T/e.err")"
"${SUP[@]}" --table public.ld_res --wrong-confirm -- loader -c "$T/cfg.yaml" --range-rows 5000 > /dev/null 2> "$T/f.err"
st=$?
ok $([ $st = 65 ] && grep -q "a confirmation of mark 'public.ld_res#1x' while mark 'public.ld_res#1' waits" "$T/f.err"; echo $?) \
	"a confirmation of another mark: exit 65 (got $st)"

# several tables: marks of the next tables are written while a mark waits
# for its confirmation (ckpt stores those that arrive together in one
# request), a table's own next mark never is
psql_q -c "drop table if exists ld_s1, ld_s2, ld_s3" \
	-c "create table ld_s1 (id int primary key)" -c "insert into ld_s1 values (1), (2)" \
	-c "create table ld_s2 (id int primary key)" -c "insert into ld_s2 values (3)" \
	-c "create table ld_s3 (id int primary key)"
mkconfig "$T/small.yaml" $S $S ld_res ld_s1 ld_s2 ld_s3
psql_q -c "select pg_create_logical_replication_slot('$S', 'pgoutput')" > /dev/null 2>&1
"${SUP[@]}" --table public.ld_s1 --table public.ld_s2 --table public.ld_s3 --table public.ld_res \
	--frames "$T/g.frames" --marks "$T/g.marks" --hold 0.5 \
	-- loader -c "$T/small.yaml" --range-rows 5000 2> "$T/g.err"
ok $? "several tables: exit 0, no table's mark written before its last one was confirmed"
others=$(sed -n 's/^loader-supervisor: \([0-9]*\) marks arrived while another table.*/\1/p' "$T/g.err")
ok $([ "${others:-0}" -ge 2 ]; echo $?) "the next tables' marks were written while a mark waited (${others:-0})"
ok $([ "$(grep -c '"k":"row"' "$T/g.frames")" = 60003 ] &&
	[ "$(jq -s -c '[.[] | select(.done == true) | .table]' "$T/g.marks")" = '["public.ld_s1","public.ld_s2","public.ld_s3","public.ld_res"]' ]; echo $?) \
	"every row, and each table's last mark in the order of the load"

# refusals
refused() {	# refused CODE MESSAGE DESCRIPTION -- COMMAND...
	local code=$1 msg=$2 what=$3 st; shift 3; [ "$1" = -- ] && shift
	"$@" > /dev/null 2> "$T/r.err"
	st=$?
	ok $([ $st = "$code" ] && grep -q -- "$msg" "$T/r.err"; echo $?) "$what: exit $code (got $st: $(tail -n 1 "$T/r.err"))"
}
psql_q -c "select pg_drop_replication_slot('$S')" > /dev/null
refused 69 "replication slot '$S' does not exist: the slot must exist before the load" \
	"supervised without the slot" -- "${SUP[@]}" --table public.ld_res -- loader -c "$T/cfg.yaml"
mkconfig "$T/missing.yaml" $S $S ld_gone
refused 69 "table 'public.ld_gone' does not exist" "a missing table" -- loader -c "$T/missing.yaml"
mkconfig "$T/nokey.yaml" $S $S ld_nokey
refused 69 "table 'public.ld_nokey' has no primary key" "a table without a key" -- loader -c "$T/nokey.yaml"
"${SUPER[@]}" -c "drop role if exists ld_limited" -c "create role ld_limited login password 'ld-limited-pw'" \
	-c "grant select (id) on ld_res to ld_limited" > /dev/null
LIMITED="postgres://ld_limited:ld-limited-pw@$PGHOST:$PGPORT/$PGDATABASE"
refused 69 "may not read column 'v' of table 'public.ld_res'" "a column the role may not read" \
	-- env P2O_TEST_URL="$LIMITED" loader -c "$T/cfg.yaml"
refused 77 "authentication failed" "a wrong password" \
	-- env P2O_TEST_URL="postgres://$PGUSER:wrong@$PGHOST:$PGPORT/$PGDATABASE" loader -c "$T/cfg.yaml"
ok $(! grep -q wrong "$T/r.err"; echo $?) "and the password is not in the message"
refused 75 "could not open" "nothing listening" \
	-- env P2O_TEST_URL="postgres://$PGUSER:x@127.0.0.1:$(free_port)/$PGDATABASE" loader -c "$T/cfg.yaml"
printf 'source:\n  url_env: P2O_TEST_URL\n  slot: x\n' > "$T/bad.yaml"
refused 78 "unknown key 'source.slot'" "an invalid configuration" -- loader -c "$T/bad.yaml"
refused 64 "not a number" "a bad --range-rows" -- loader -c "$T/cfg.yaml" --range-rows 0

[ $_tap_fail -gt 0 ] && for f in a b c d e f g; do diag "$f.err:"; tail -n 8 "$T/$f.err" | sed 's/^/#   /'; done
done_testing
