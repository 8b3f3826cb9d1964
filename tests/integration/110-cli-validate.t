#!/usr/bin/env bash
# pg2osync validate on PostgreSQL: a good configuration passes and leaves
# no slot, publication or index behind; one run lists every failure, each
# on its own line (a table without a key, a column the filter names that
# does not exist, a filter the server cannot compile, an index name the
# target refuses writes to, a missing ingest pipeline, an existing index
# mapping a field otherwise than its mapping file); a wrong password and
# an unreachable target; a second server with wal_level = replica; and
# setup-sql's script, run by psql as the superuser on that fresh server,
# makes validate pass for a role that owns nothing, placing an append-only
# table in <publication>_append when a table under it has no replica
# identity; a publication without the table a collection reads fails.
# Run under tests/servers/run-with.sh --pg --os.
. "$(dirname "$0")/../lib.sh"

# what the servers hold that validate could create: slots, publications,
# indices (hidden ones included)
snapshot() {
	{
		psql_q -c "select 'slot ' || slot_name from pg_replication_slots order by 1"
		psql_q -c "select 'pub ' || pubname from pg_publication order by 1"
		curl -sS --max-time 30 "$OS_URL/_cat/indices?h=index&expand_wildcards=all" | sed 's/^/index /' | sort
	} > "$1"
}
# lines OUT PATTERN: how many lines of OUT match
lines() { grep -cE "$2" "$1"; }

for s in t11 t11b; do drop_slot $s; done
psql_q -c "drop table if exists t11_ok, t11_nokey, t11_col, t11_cmp, t11_al, t11_pipe;
	create table t11_ok (id int primary key, name text, status text);
	create table t11_nokey (a int, b text);
	create table t11_col (id int primary key, name text);
	create table t11_cmp (id int primary key, name text);
	alter table t11_cmp replica identity full;
	create table t11_al (id int primary key);
	create table t11_pipe (id int primary key);
	drop table if exists t11_map; create table t11_map (id int primary key, v text)" || exit 1
for i in t11_ok t11_a1 t11_a2 t11_map; do os_drop $i; done

mkhead "$T/good.yaml" t11
cat >> "$T/good.yaml" <<EOF
sync:
  ok:
    table: public.t11_ok
    index: t11_ok
    where: "id >= 0"
EOF
snapshot "$T/before"
pg2osync validate -c "$T/good.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 0 ] && tail -1 "$T/out" | grep -qx 'all checks passed'; echo $?) "a good configuration: exit 0, 'all checks passed' (exit $st)"
[ $st = 0 ] || sed 's/^/#   /' "$T/out"
ok $(! grep -q '^FAIL' "$T/out"; echo $?) "... and no line FAIL"
grep -q "^ok .*slot 't11' does not exist yet; role 'p2o' may create it" "$T/out"
ok $? "... the slot is not there, and the role may create it"
snapshot "$T/after"
diff "$T/before" "$T/after" > "$T/diff"
ok $? "no slot, publication or index was created"
sed 's/^/#   /' "$T/diff"
ok $(! grep -qE "slot t11$|pub t11$|index t11_ok$" "$T/after"; echo $?) "... slot 't11', publication 't11', index 't11_ok' do not exist"

# an index that exists maps 'v' otherwise than the section's mapping file
curl -sS -XPUT "$OS_URL/t11_map" -H 'content-type: application/json' \
	-d '{"mappings":{"properties":{"v":{"type":"keyword"},"id":{"type":"long"}}}}' > /dev/null
echo '{"properties":{"v":{"type":"long"},"id":{"type":"long"}}}' > "$T/t11_map.json"
# the target refuses writes to an alias over two indices with no write index
curl -sS -XPUT "$OS_URL/t11_a1" > /dev/null
curl -sS -XPUT "$OS_URL/t11_a2" > /dev/null
curl -sS -XPOST "$OS_URL/_aliases" -H 'content-type: application/json' \
	-d '{"actions":[{"add":{"index":"t11_a1","alias":"t11_alias"}},{"add":{"index":"t11_a2","alias":"t11_alias"}}]}' > /dev/null
mkhead "$T/bad.yaml" t11
cat >> "$T/bad.yaml" <<EOF
sync:
  nokey:
    table: public.t11_nokey
    index: t11_nokey
  col:
    table: public.t11_col
    index: t11_col
    where: "nosuch = 1"
  cmp:
    table: public.t11_cmp
    index: t11_cmp
    where: "name > 5"
  al:
    table: public.t11_al
    index: t11_alias
  pipe:
    table: public.t11_pipe
    index: t11_pipe
    pipeline: t11-no-such-pipeline
  map:
    table: public.t11_map
    index: t11_map
    mapping_file: t11_map.json
EOF
snapshot "$T/before"
pg2osync validate -c "$T/bad.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 1 ]; echo $?) "six problems: exit 1 (got $st)"
sed 's/^/#   /' "$T/out"
ok $([ "$(lines "$T/out" "^FAIL  table 'public.t11_nokey' has no primary key")" = 1 ]; echo $?) "a table without a key: one line"
ok $([ "$(lines "$T/out" "^FAIL  table 'public.t11_col': 'sync.col.where' names column 'nosuch'")" = 1 ]; echo $?) "a column the filter names that does not exist: one line"
ok $([ "$(lines "$T/out" "^FAIL  table 'public.t11_cmp': 'sync.cmp.where' does not compile on the server.*operator does not exist: text > integer")" = 1 ]; echo $?) "a filter the server cannot compile: one line, in the server's words"
ok $([ "$(lines "$T/out" "^FAIL  target: index name 't11_alias' is an alias of 2 indices and none is its write index")" = 1 ]; echo $?) "an index name the target refuses writes to: one line"
ok $([ "$(lines "$T/out" "^FAIL  target: ingest pipeline 't11-no-such-pipeline' .* does not exist")" = 1 ]; echo $?) "a missing ingest pipeline: one line"
ok $([ "$(lines "$T/out" "^FAIL  target: index 't11_map' exists with a mapping that contradicts 'sync.map.mapping_file': field 'v' is mapped as 'keyword', the mapping file says 'long'")" = 1 ]; echo $?) "an existing index's mapping against the mapping file: one line"
ok $([ "$(lines "$T/out" '^FAIL')" = 6 ]; echo $?) "exactly those six failures, all in one run"
tail -1 "$T/out" | grep -qE '^6 of [0-9]+ checks failed'
ok $? "... and the closing line counts them"
snapshot "$T/after"
diff "$T/before" "$T/after" > "$T/diff"
ok $? "the failing run created nothing either"

# a wrong password and an unreachable target, in one run
export P2O_T11_BADPW="postgres://$PGUSER:not-the-password@$PGHOST:$PGPORT/$PGDATABASE"
sed -e 's/url_env: P2O_TEST_URL/url_env: P2O_T11_BADPW/' \
	-e "s#url: $OS_URL#url: http://127.0.0.1:$(free_port)#" "$T/good.yaml" > "$T/pw.yaml"
pg2osync validate -c "$T/pw.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 1 ]; echo $?) "wrong password, target down: exit 1"
ok $([ "$(lines "$T/out" '^FAIL  source: .*authentication failed')" = 1 ]; echo $?) "the wrong password: one line"
ok $([ "$(lines "$T/out" '^FAIL  target: http://127.0.0.1:[0-9]+ is unreachable')" = 1 ]; echo $?) "the unreachable target: one line"
ok $(! grep -q 'not-the-password' "$T/out"; echo $?) "the password is in no line"

# a publication made by hand without the table a collection reads: the
# capture refuses it at its start, so validate says so
psql_q -c "drop table if exists t11_c, t11_o; create table t11_c (id int primary key);
	create table t11_o (id int primary key, c_id int); alter table t11_o replica identity full;
	drop publication if exists t11n; create publication t11n for table t11_c" || exit 1
mkhead "$T/nest.yaml" t11n
cat >> "$T/nest.yaml" <<EOF
sync:
  c:
    table: public.t11_c
    index: t11_c
    children:
      - table: public.t11_o
        field: orders
        foreign_key: c_id
EOF
pg2osync validate -c "$T/nest.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 1 ] && [ "$(lines "$T/out" "^FAIL  publication 't11n' does not include table 'public.t11_o', which a collection reads")" = 1 ] &&
	[ "$(lines "$T/out" '^FAIL')" = 1 ]; echo $?) "a publication without the table a collection reads: exit 1, one line (exit $st)"
grep '^FAIL' "$T/out" | sed 's/^/#   /'
psql_q -c "drop publication t11n; drop table t11_c, t11_o"

# a second server, fresh: setup-sql's script makes validate pass for a role
# that owns nothing; then with wal_level = replica validate says so
chmod 755 "$T"
P2=$T/pg2
"$TOP/tests/servers/pg.sh" start "$P2" || { ok 1 "a second PostgreSQL"; done_testing; exit; }
trap '"$TOP/tests/servers/pg.sh" stop "$P2"; _cleanup' EXIT
P2PORT=$(cat "$P2/port")
as_super() { runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -h "$P2" -p "$P2PORT" -U postgres -d p2o "$@"; }
as_super -c "create schema app;
	create table app.items (id int primary key, status text, body text);
	create table app.log (at timestamptz, what text);
	create table app.hist (id int primary key, at int);
	create table app.hist_old () inherits (app.hist);
	insert into app.items values (1, 'new', 'x')" || exit 1
export P2O_T11_SYNC="postgres://t11sync:t11-pw@127.0.0.1:$P2PORT/p2o"
cat > "$T/p2.yaml" <<EOF
source:
  url_env: P2O_T11_SYNC
  slot_name: t11b
  publication: t11b
target:
  url: $OS_URL
sync:
  items:
    table: app.items
    index: t11b_items
    where: "status <> 'gone'"
  log:
    table: app.log
    index: t11b_log
    append_only: true
  hist:
    table: app.hist
    index: t11b_hist
    append_only: true
EOF
pg2osync validate -c "$T/p2.yaml" > "$T/out" 2>&1
ok $([ $? = 1 ] && grep -q '^FAIL  source: .*authentication failed' "$T/out"; echo $?) "before the script: the role does not exist"
pg2osync setup-sql -c "$T/p2.yaml" > "$T/setup.sql" 2> "$T/err"
ok $? "setup-sql writes the script (connecting nowhere)"
grep -q 't11-pw' "$T/setup.sql"
ok $([ $? = 1 ]; echo $?) "... without the url's password"
grep -q 'CREATE ROLE "t11sync" LOGIN REPLICATION' "$T/setup.sql"
ok $? "... for the url's user"
as_super -f "$T/setup.sql" > "$T/psql.out" 2>&1
ok $? "psql -v ON_ERROR_STOP=1 -f setup.sql as the superuser"
sed 's/^/#   /' "$T/psql.out" | head
as_super -f "$T/setup.sql" > "$T/psql.out" 2>&1
ok $? "... and once more: every statement can run twice"
# the DBA's last step, which no file holds: the role's password
as_super -c "alter role t11sync password 't11-pw'"
pg2osync validate -c "$T/p2.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 0 ] && tail -1 "$T/out" | grep -qx 'all checks passed'; echo $?) "after the script validate passes for the role (exit $st)"
[ $st = 0 ] || sed 's/^/#   /' "$T/out"
ok $([ "$(as_super -At -c "select relreplident from pg_class where oid = 'app.items'::regclass")" = f ]; echo $?) "... app.items got REPLICA IDENTITY FULL (its filter reads status)"
ok $([ "$(as_super -At -c "select string_agg(pubname, ',' order by pubname) from pg_publication")" = "t11b,t11b_append" ]; echo $?) "... the publications exist, the keyless table in t11b_append"
# app.hist has a key, its inheritance child none: the tree goes in
# t11b_append by the capture's rule, which the script applies on the server
ok $([ "$(as_super -At -c "select string_agg(pubname || ':' || tablename, ',' order by tablename) from pg_publication_tables where tablename like 'hist%'")" = "t11b_append:hist,t11b_append:hist_old" ]; echo $?) "... the append-only table whose child has no replica identity in t11b_append"
ok $([ "$(as_super -At -c "select rolsuper::text || rolcreatedb::text from pg_roles where rolname = 't11sync'")" = falsefalse ]; echo $?) "... for a role that is no superuser"

as_super -c "alter system set wal_level = replica" &&
	runuser -u postgres -- "$PG_BIN/pg_ctl" restart -D "$P2/data" -m fast -w -s > /dev/null 2>&1
ok $? "the second server restarted with wal_level = replica"
pg2osync validate -c "$T/p2.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 1 ]; echo $?) "wal_level = replica: exit 1"
ok $([ "$(lines "$T/out" "^FAIL  source: wal_level is 'replica'; logical replication needs wal_level = logical \(ALTER SYSTEM SET wal_level = logical; then restart the server\)")" = 1 ]; echo $?) "... one line naming the setting and the fix"

os_drop t11_a1; os_drop t11_a2; os_drop t11_map
done_testing
