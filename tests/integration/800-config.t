#!/usr/bin/env bash
# Bad input at the edges: config errors name file:line:key with exit 78,
# wrong credentials exit 77, a table without a key exits 69, and the
# supervisor stops on each with one clear message instead of restarting.
. "$(dirname "$0")/../lib.sh"

printf 'source:\n  url_env: P2O_TEST_URL\n  slott_name: x\ntarget:\n  url: http://127.0.0.1:1\nsync:\n  a:\n    table: a\n' > "$T/bad.yaml"
pg2osync-supervise -c "$T/bad.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 78 ]; echo $?) "unknown key: exit 78 (got $st)"
grep -q "$T/bad.yaml:3:.*slott_name" "$T/out"; ok $? "message names file:line:key: $(head -n 1 "$T/out")"

printf 'source:\n  url_env: P2O_TEST_URL\ntarget:\n  url: http://127.0.0.1:1\nengine:\n  batch_size: lots\nsync:\n  a:\n    table: a\n' > "$T/bad2.yaml"
pg2osync-supervise -c "$T/bad2.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 78 ] && grep -q "bad2.yaml:6:.*batch_size" "$T/out"; echo $?) "wrong type names file:line:key: $(head -n 1 "$T/out")"

S=p2o_cfg
drop_slot $S
psql_q -c "drop table if exists nokey; create table nokey (a int, b text)"
mkconfig "$T/nokey.yaml" $S $S nokey
timeout 60 pg2osync-supervise -c "$T/nokey.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 69 ]; echo $?) "a table without a key stops the supervisor with 69 (got $st)"
grep -q "nokey" "$T/out"; ok $? "and names the table: $(grep -m1 nokey "$T/out")"
ok $([ "$(grep -c 'restarting' "$T/out")" = 0 ]; echo $?) "without restarting"

psql_q -c "drop table if exists okt; create table okt (id int primary key)"
mkconfig "$T/badpw.yaml" $S $S okt
P2O_TEST_URL="postgres://$PGUSER:wrong-password@$PGHOST:$PGPORT/$PGDATABASE" \
	timeout 60 pg2osync-supervise -c "$T/badpw.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 77 ]; echo $?) "wrong password stops with 77 (got $st)"
ok $(! grep -q 'wrong-password' "$T/out"; echo $?) "and does not print the password: $(grep -m1 -i auth "$T/out")"
# the shaping keys: each refusal at load, with file:line and the reason
shaping_refused() {	# shaping_refused LINE PATTERN DESCRIPTION <<YAML (the sync section)
	local line=$1 pat=$2 what=$3 f="$T/shape.yaml" st
	mkhead "$f" p2o_cfg_shape
	cat >> "$f"
	pg2osync-supervise -c "$f" > "$T/out" 2>&1; st=$?
	ok $([ $st = 78 ] && grep -q "shape.yaml:$line: .*$pat" "$T/out"; echo $?) \
		"$what: 78 ($st), $(head -n 1 "$T/out" | sed 's/.*shape.yaml/shape.yaml/' | cut -c1-150)"
}
# mkhead writes 9 lines: sync is line 10, the section 11, its keys from 12
shaping_refused 14 "'where' takes comparisons" "a filter outside the subset" <<'YAML'
sync:
  a:
    table: a
    id: "x{id}"
    where: "name LIKE 'x%'"
YAML
shaping_refused 16 "may share an index only when each declares 'id'" "two tables in one index without ids" <<'YAML'
sync:
  a:
    table: a
    index: shared
  b:
    table: b
    index: shared
YAML
shaping_refused 14 "'sync.a.id' cannot be combined with 'sync.a.append_only'" "append_only with an id" <<'YAML'
sync:
  a:
    table: a
    append_only: true
    id: "x{id}"
YAML
shaping_refused 14 "must name exactly one operation" "two transforms chained" <<'YAML'
sync:
  a:
    table: a
    transform:
      email: {redact: x, split: ","}
YAML
drop_slot $S
done_testing
