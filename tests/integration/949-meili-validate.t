#!/usr/bin/env bash
# pg2osync validate and setup-sql on a target that cannot complete a
# document from its stored copy (Meilisearch, a real server): an UPDATE
# that leaves an out-of-line (TOAST) value unchanged sends the row without
# it unless the table's replica identity is FULL, and the pipeline would
# halt there in production. validate fails such a table, naming it, its
# TOAST-able columns and the ALTER - for a partitioned table its
# partitions, which hold the rows - and passes a table of fixed-size
# columns, an append-only one and a FULL one; with an OpenSearch target
# (which completes documents) the same tables pass. setup-sql prints the
# ALTER, decided on the server: its script, run by the superuser, makes
# validate pass.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meili_val
drop_slot $S
as_super() { psql -X -q -At -v ON_ERROR_STOP=1 -h "$P2O_SERVERS_DIR/pg" -U postgres -d "$PGDATABASE" "$@"; }
psql_q -c "drop table if exists mv_doc, mv_num, mv_app, mv_full, mv_part cascade;
	create table mv_doc (id int primary key, body text, meta jsonb, code varchar(10));
	create table mv_num (id int primary key, n bigint, code varchar(10), ts timestamptz);
	create table mv_app (id bigint generated always as identity primary key, body text);
	create table mv_full (id int primary key, body text);
	alter table mv_full replica identity full;
	create table mv_part (id int, body text, primary key (id)) partition by range (id);
	create table mv_part_a partition of mv_part for values from (0) to (100);
	create table mv_part_b partition of mv_part for values from (100) to (200)"
meili_start; ok $? "$MEILI_KIND up"

mkmeili "$T/cfg.yaml" $S $S mv_doc mv_num mv_app mv_full mv_part
sed -i "s#^    index: ${S}_mv_app\$#&\n    append_only: true#" "$T/cfg.yaml"
pg2osync validate -c "$T/cfg.yaml" > "$T/v1" 2>&1; rc=$?
grep -E '^(FAIL|ok) +table' "$T/v1" | sed 's/^/#   /'
ok $([ $rc = 1 ] && grep -q "^FAIL  table 'public.mv_doc': target 'meilisearch' cannot complete a document an UPDATE sends without its unchanged out-of-line (TOAST) values, and columns body, meta can hold such values, so the replica identity of public.mv_doc must be FULL (ALTER TABLE public.mv_doc REPLICA IDENTITY FULL)" "$T/v1"; echo $?) \
	"a table with TOAST-able columns and no REPLICA IDENTITY FULL fails, named with its columns and the ALTER (exit $rc)"
ok $(grep -q "^FAIL  table 'public.mv_part': .*the replica identity of public.mv_part_a, public.mv_part_b must be FULL (ALTER TABLE public.mv_part_a REPLICA IDENTITY FULL; ALTER TABLE public.mv_part_b REPLICA IDENTITY FULL)" "$T/v1"; echo $?) \
	"a partitioned table: its partitions, which hold the rows, are named"
ok $([ "$(grep -c "cannot complete a document" "$T/v1")" = 2 ] &&
	! grep -q "^ok    table 'public.mv_doc'" "$T/v1"; echo $?) \
	"fixed-size columns, an append-only table and a FULL one pass; a failing table has no ok line"

# the same tables on a target that completes documents: no such failure
mkconfig "$T/os.yaml" $S $S mv_doc mv_num mv_full mv_part
pg2osync validate -c "$T/os.yaml" > "$T/v2" 2>&1
ok $(! grep -q "cannot complete a document" "$T/v2"; echo $?) "with an OpenSearch target no table fails for it"

# setup-sql prints the ALTER, decided on the server; run, validate passes
pg2osync setup-sql -c "$T/cfg.yaml" > "$T/setup.sql"; rc=$?
ok $([ $rc = 0 ] && grep -q "Replica identity for target 'meilisearch', which cannot complete a document an UPDATE" "$T/setup.sql" &&
	[ "$(grep -c "EXECUTE pg_catalog.format('ALTER TABLE %s REPLICA IDENTITY FULL', r)" "$T/setup.sql")" = 4 ]; echo $?) \
	"setup-sql prints the ALTER for each section that streams updates (exit $rc)"
pg2osync setup-sql -c "$T/os.yaml" > "$T/os.sql"
ok $(! grep -q "cannot complete a document" "$T/os.sql"; echo $?) "and none for an OpenSearch target"
sed -n '/^-- Replica identity for target/,/^-- 4\./p' "$T/setup.sql" | sed '$d' > "$T/toast.sql"
as_super -f "$T/toast.sql" > "$T/as_super.out" 2>&1; rc=$?
ok $rc "its statements run as the superuser ($(head -c 200 "$T/as_super.out"))"
idents=$(psql_q -c "select string_agg(relname::text || '=' || relreplident::text, ' ' order by relname) from pg_class where relname like 'mv\_%' and relkind in ('r', 'p')")
ok $([ "$idents" = "mv_app=d mv_doc=f mv_full=f mv_num=d mv_part=d mv_part_a=f mv_part_b=f" ]; echo $?) \
	"FULL exactly where it is needed ($idents)"
pg2osync validate -c "$T/cfg.yaml" > "$T/v3" 2>&1
ok $(! grep -q "cannot complete a document" "$T/v3"; echo $?) "then validate passes them: $(grep -c '^FAIL' "$T/v3") failures left ($(grep '^FAIL' "$T/v3" | head -2 | cut -c1-150 | tr '\n' ' '))"
as_super -c "alter table public.mv_doc replica identity default" > /dev/null
drop_slot $S
done_testing
