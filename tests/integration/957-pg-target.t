#!/usr/bin/env bash
# A PostgreSQL table as the target (target.flavor: postgres, for pgvector):
# the table is created from the section's DDL (its mapping_file); the
# initial load, streamed inserts, updates, deletes, a key change, an update
# leaving a TOASTed value out (completed from the stored row) and a
# truncate end with the target table equal to the source, row for row; a
# kill -9 under writes replays to the same rows; the checkpoint is kept in
# pg2osync_state; a nearest-neighbour query (embedding <-> '[...]') returns
# the expected row; updates during a load whose copies reach the writer
# after them are filled from the late copies (a NULL column reads back as
# no field); a document with a field the table has no column for is
# refused, naming it, and kept in pg2osync_rejects, which pg2osync rejects
# lists and replays once the column is there; the configuration's refusals
# name file:line; the target url's password is in no argv and no log line.
#
# The target database is p2o_pgt on the source's server (run-with.sh --pg),
# or on the server P2O_PGT_ADMIN_URL names (a superuser url without a
# password, "postgres://postgres@127.0.0.1:PORT": PostgreSQL 17 with
# trixie's pgvector, from the compatibility lane's tree). Without the vector
# extension on the server (bookworm packages no pgvector for 15) the column
# is real[] and the nearest-neighbour query is skipped, saying so.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"

S=p2o_pgt
DB=p2o_pgt
if [ -n "${P2O_PGT_ADMIN_URL:-}" ]; then
	ADMIN="$P2O_PGT_ADMIN_URL/postgres"
	READ_URL="$P2O_PGT_ADMIN_URL/$DB"
	export P2O_PGT_URL=$READ_URL
	OWNER=postgres
else
	# the superuser on the server's socket; the pipeline as p2o, whose
	# password reaches it through url_env only
	ADMIN="postgresql://postgres@/postgres?host=$(dirname "$PG_DATA")"
	READ_URL="postgres://$PGUSER@$PGHOST:$PGPORT/$DB"
	export P2O_PGT_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$DB"
	OWNER=$PGUSER
fi
tq() { psql_q -d "$READ_URL" "$@"; }

psql_q -d "$ADMIN" -c "drop database if exists $DB" -c "create database $DB owner $OWNER"
ok $? "target database $DB"
if [ "$(psql_q -d "$ADMIN" -c "select count(*) from pg_available_extensions where name = 'vector'")" = 1 ]; then
	psql_q -d "$(sed "s,/postgres\(?\|$\),/$DB\1," <<<"$ADMIN")" -c "create extension vector"
	VEC=1 VTYPE="vector(3)" VSEL="(to_jsonb(t) - 'embedding') || jsonb_build_object('embedding', t.embedding::real[])"
	diag "target: PostgreSQL $(tq -c 'show server_version'), pgvector $(tq -c "select extversion from pg_extension where extname = 'vector'")"
else
	VEC=0 VTYPE="real[]" VSEL="row_to_json(t)"
	diag "target: PostgreSQL $(tq -c 'show server_version') without pgvector: the embedding column is real[]"
fi

drop_slot $S
psql_q -c "drop table if exists vitems; create table vitems (id int primary key, name text, n int, embedding real[])"
psql_q -c "insert into vitems select g, 'loaded ' || g, g, array[g, 0, 0]::real[] from generate_series(1001, 1020) g"

cat > "$T/vitems.sql" <<EOF
-- the target table of section vitems: the document id is the key
CREATE TABLE vitems (
    id int PRIMARY KEY,
    name text,
    n int,
    embedding $VTYPE,
    _version bigint NOT NULL
);
EOF
METRICS_PORT=$(free_port)
cfg() {	# cfg FILE [EXTRA-SECTION-KEY...]: the pipeline's configuration
	local f=$1; shift
	{
		echo "source:"
		echo "  url_env: P2O_TEST_URL"
		echo "  slot_name: $S"
		echo "  publication: $S"
		echo "target:"
		echo "  flavor: postgres"
		echo "  url_env: P2O_PGT_URL"
		echo "sync:"
		echo "  vitems:"
		echo "    table: public.vitems"
		echo "    index: vitems"
		echo "    mapping_file: vitems.sql"
		for k; do echo "    $k"; done
		echo "engine:"
		echo "  checkpoint_interval_ms: 200"
		echo "  on_permanent_rejection: quarantine"
		echo "metrics:"
		echo "  bind: 127.0.0.1:$METRICS_PORT"
	} > "$f"
}
cfg "$T/cfg.yaml"
tcompare() {
	psql_q -c "select coalesce(json_agg(row_to_json(t)), '[]') from vitems t" > "$T/cmp.src" || return 2
	python3 "$TOP/tests/compare.py" --table "$READ_URL" vitems "$T/cmp.src" "$VSEL"
}
twait_equal() {	# twait_equal SECONDS
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		tcompare >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	tcompare
}

sup_start; ok $? "pipeline up"
check "the table was created from the section's DDL" -- test "$(tq -c "select to_regclass('vitems') is not null")" = t
check "loaded rows equal the source" -- twait_equal 60

psql_q -c "insert into vitems select g, 'row ' || g, g * 10, array[0, g, 0]::real[] from generate_series(1, 50) g"
psql_q -c "update vitems set name = 'changed', n = n + 1 where id % 3 = 0"
psql_q -c "delete from vitems where id % 5 = 0"
psql_q -c "insert into vitems values (100, null, null, null)"
check "streamed inserts, updates and deletes equal the source" -- twait_equal 60
psql_q -c "update vitems set id = 500 where id = 1"
check "a key change moves the row (old key deleted, new key written)" -- twait_equal 60
# an UPDATE that leaves an out-of-line (TOAST) value unchanged does not
# send it: the writer completes the document from the stored row
psql_q -c "insert into vitems values (700, (select string_agg(md5(g::text), '') from generate_series(1, 400) g), 1, null)"
check "a row with a TOASTed value lands" -- twait_equal 60
psql_q -c "update vitems set n = 2 where id = 700"
check "an update leaving it unchanged keeps it (completed from the stored row)" -- twait_equal 60
check "every row carries the version it was written at" -- test "$(tq -c "select count(*) from vitems where _version is null or _version <= 0")" = 0
wait_for 10 test -n "$(ckpt_lsn "$T/cfg.yaml")"
ok $? "a checkpoint is stored ($(ckpt_lsn "$T/cfg.yaml"))"
check "in table pg2osync_state" -- test "$(tq -c "select count(*) from pg2osync_state where key like '%$S%'")" -ge 1

psql_q -c "truncate vitems"
psql_q -c "insert into vitems values (1, 'after truncate', 1, '{1,2,3}')"
check "truncate clears the table, and rows after it land" -- twait_equal 60

# vectors: the nearest neighbour of a query vector
psql_q -c "insert into vitems values (900, 'x axis', 0, '{1,0,0}'), (901, 'y axis', 0, '{0,1,0}'), (902, 'z axis', 0, '{0,0,1}')"
check "the vectors land" -- twait_equal 60
if [ "$VEC" = 1 ]; then
	nn=$(tq -c "select id from vitems where id >= 900 order by embedding <-> '[0.1, 0.9, 0.2]' limit 1")
	ok $([ "$nn" = 901 ]; echo $?) "the nearest neighbour of [0.1, 0.9, 0.2] is row 901 (got '$nn')"
	nn=$(tq -c "select id from vitems where id >= 900 order by embedding <=> '[0, 0, 5]' limit 1")
	ok $([ "$nn" = 902 ]; echo $?) "by cosine distance, [0, 0, 5] is nearest row 902 (got '$nn')"
else
	skip "no pgvector on the target server: no nearest-neighbour query"
	skip "no pgvector on the target server: no cosine distance"
fi

# kill -9 under writes: the replay after the restart writes the same rows
(
	for i in $(seq 1 15); do
		psql_q -c "insert into vitems select g, 'burst $i', $i, array[$i, g, 1]::real[] from generate_series(2000 + $i * 10, 2009 + $i * 10) g on conflict (id) do update set n = excluded.n;
			update vitems set n = n + 1 where id between 2000 and 2000 + $i * 10;
			delete from vitems where id = 2005 + $i * 10" || exit 1
	done
) &
W=$!
sleep 1
kill_pipeline
ok $([ -z "$(pgrep -f -- "-c $T/cfg.yaml")" ]; echo $?) "the pipeline killed -9 under writes"
wait $W; ok $? "the writes went on to their end"
sup_start; ok $? "pipeline up again"
check "after the replay the table equals the source" -- twait_equal 90

ok $([ "$(argv_secrets "$T/cfg.yaml" "$PGPASSWORD")" = 0 ]; echo $?) "no process of the pipeline has the target password in its argv"

# a field the table has no column for: that document is refused, by name,
# and kept in pg2osync_rejects (every document with the field, a null
# one too, while the table lacks the column); once the column is there, a
# replay writes them
psql_q -c "alter table vitems add column color text"
psql_q -c "insert into vitems values (3000, 'colored', 1, null, 'red')"
wait_for 30 test "$(tq -c "select count(*) from pg2osync_rejects where record->>'reason' like '%field ''color'' is not a column of table ''vitems''%'")" = 1
ok $? "a document with an unknown field is refused, naming it, and kept in pg2osync_rejects: $(tq -c "select record->>'reason' from pg2osync_rejects limit 1" | cut -c1-100)"
check "and is not written" -- test "$(tq -c 'select count(*) from vitems where id = 3000')" = 0
psql_q -c "insert into vitems values (3001, 'after it', 1, null, null)"
wait_for 30 test "$(tq -c 'select count(*) from pg2osync_rejects')" = 2
ok $? "the pipeline goes on: the next document with the field is kept too"
pg2osync rejects -c "$T/cfg.yaml" > "$T/rejects.out" 2>&1
ok $([ $? = 0 ] && grep -q "vitems" "$T/rejects.out"; echo $?) "pg2osync rejects lists it: $(head -n 1 "$T/rejects.out" | cut -c1-120)"
tq -c "alter table vitems add column color text"
pg2osync rejects -c "$T/cfg.yaml" --replay > "$T/replay.out" 2>&1
ok $([ $? = 0 ] && grep -q "replayed 2, still refused 0" "$T/replay.out"; echo $?) "pg2osync rejects --replay once the column is there: $(tail -n 1 "$T/replay.out")"
check "the replayed row is there, and the table equals the source" -- twait_equal 60
check "its record is cleared" -- test "$(tq -c 'select count(*) from pg2osync_rejects')" = 0
psql_q -c "update vitems set color = 'blue' where id = 3001"
check "a column the target gained is written by the running writer" -- twait_equal 60
kill -TERM $SUP; wait $SUP
ok $? "the pipeline stops cleanly"
ok $(! has_secret "$T/sup.log" "$PGPASSWORD"; echo $?) "no log line holds the target password"

# updates during a load, of rows whose copies were read before them but
# reach the writer after them (the loader's output is late, as in 301):
# each update is written without its unchanged TOAST value, which it had
# nothing to complete from, and the late copy's fill puts it back - read
# as a null field, the NULL the update left made the fill a no-op and the
# rows kept NULL (found by tests/compat/pg-target.t's load beside writes)
psql_q -c "drop table if exists tld; create table tld (id int primary key, v int, pad text);
	alter table tld alter column pad set storage external;
	insert into tld select g, 0, (select string_agg(md5(h::text), '') from generate_series(1, 200) h) || g
		from generate_series(1, 3) g"
printf 'CREATE TABLE tld (id int PRIMARY KEY, v int, pad text, _version bigint NOT NULL);\n' > "$T/tld.sql"
cat > "$T/lateload" <<EOF
#!/usr/bin/env bash
exec "$P2O_BIN/loader" "\$@" > >(exec 3>&-; exec python3 "$TOP/tests/helper/delay-frames.py" 8)
EOF
chmod +x "$T/lateload"
drop_slot ${S}_ld
sed -e "s/: $S\$/: ${S}_ld/" -e 's/vitems/tld/g' -e "s/$METRICS_PORT/$(free_port)/" "$T/cfg.yaml" > "$T/ld.yaml"
pg2osync-supervise -c "$T/ld.yaml" --stage loader="$T/lateload" > "$T/ld.log" 2>&1 &
LD=$!; cleanup_add $LD
wait_for 60 grep -q "read as one range\|range 1 of 1 read" "$T/ld.log"
ok $? "late copies: the loader has read the rows (its output is late)"
psql_q -c "update tld set v = 1 where id = 1" -c "update tld set v = 2 where id = 1" -c "update tld set id = 12 where id = 2"
wait_for 60 grep -q "finished: every table is loaded" "$T/ld.log"
ok $? "late copies: the load finishes"
ldcompare() {
	psql_q -c "select coalesce(json_agg(row_to_json(t)), '[]') from tld t" > "$T/ld.src" &&
		python3 "$TOP/tests/compare.py" --table "$READ_URL" tld "$T/ld.src"
}
wait_for 20 ldcompare
check "late copies: the updated rows have the values their late copies held" -- ldcompare
n=$(grep -c "filled from a late copy" "$T/ld.log")
ok $([ "$n" -eq 2 ]; echo $?) "late copies: two rows were filled (log lines: $n)"
kill -TERM $LD; wait $LD
drop_slot ${S}_ld

# the configuration's refusals, each at its file:line
refused() {	# refused FILE LINE PATTERN DESCRIPTION
	local st
	pg2osync-supervise -c "$1" > "$T/out" 2>&1; st=$?
	ok $([ $st = 78 ] && grep -q "$(basename "$1"):$2: .*$3" "$T/out"; echo $?) \
		"$4: 78 ($st), $(grep -m1 -o "$(basename "$1"):.*" "$T/out" | cut -c1-160)"
}
printf 'CREATE TABLE vitems (id int PRIMARY KEY, name text)\n' > "$T/vitems.sql"
refused "$T/cfg.yaml" 12 "has no column '_version bigint'" "a DDL without _version"
printf 'CREATE TABLE vitems (id int, name text, _version bigint)\n' > "$T/vitems.sql"
refused "$T/cfg.yaml" 12 "declares no primary key" "a DDL without a key"
printf 'CREATE TABLE vitems (a int, b int, _version bigint, PRIMARY KEY (a, b))\n' > "$T/vitems.sql"
refused "$T/cfg.yaml" 12 "more than one column" "a DDL with a key of two columns"
printf 'CREATE TABLE vitems (id int PRIMARY KEY, _version int)\n' > "$T/vitems.sql"
refused "$T/cfg.yaml" 12 "must be bigint" "a DDL whose _version is not bigint"
printf 'CREATE TABLE other (id int PRIMARY KEY, _version bigint)\n' > "$T/vitems.sql"
refused "$T/cfg.yaml" 12 "creates table 'other', not the section's 'vitems'" "a DDL of another table"
printf 'CREATE TABLE vitems (id int PRIMARY KEY, _version bigint);\n' > "$T/vitems.sql"
cfg "$T/route.yaml" "routing: name"
refused "$T/route.yaml" 13 "needs routing, which target 'postgres' does not offer" "routing"
cfg "$T/tmpl.yaml"
sed -i 's/    index: vitems/    index: "v_{name}"/' "$T/tmpl.yaml"
refused "$T/tmpl.yaml" 11 "cannot be a template" "a templated table name"
P2O_PGT_URL="http://127.0.0.1:1" refused "$T/cfg.yaml" 7 "must be a postgres:// or postgresql:// url" "a target url that is not postgres"
ok $(! grep -q "127.0.0.1:1" "$T/out"; echo $?) "the url_env value is not quoted"

drop_slot $S
psql_q -d "$ADMIN" -c "drop database if exists $DB" >/dev/null 2>&1
done_testing
