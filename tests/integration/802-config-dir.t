#!/usr/bin/env bash
# --config-dir DIR, a directory of configurations (one source a file), for
# pg2osync-supervise and every verb: every failing file is named with its
# file:line in one run, and every rule the files break together (two
# sources of one name, one slot on one server, an index two sources write
# without declared ids, two metrics binds), exit 78 before anything runs;
# an empty directory is an error; dot-files, other names and directories
# are not read. --source NAME picks one source for any verb; a verb that
# acts on one source refuses a directory of several without it (64) and
# names them; validate and setup-sql act on each in turn; init writes a
# new file into the directory (--name) and checks the set.
# Fails when: a failing file is left out of the report, a rule between
# files passes, a one-source verb runs on several, or --source does not
# pick the one named.
. "$(dirname "$0")/../lib.sh"

D=$T/conf.d
mkdir -p "$D" "$D/sub.yaml"
psql_q -c "drop table if exists cd1, cd2; create table cd1 (id int primary key, v text); create table cd2 (id int primary key, v text)"
for s in cd1 cd2; do drop_slot p2o_$s; done
src() {	# src NAME TABLE [EXTRA-SOURCE-LINES]
	{
		echo "source:"
		echo "  url_env: P2O_TEST_URL"
		echo "  name: $1"
		echo "  slot_name: p2o_$2"
		echo "  publication: p2o_$2"
		[ -n "${3:-}" ] && printf '%s\n' "$3"
		echo "target:"
		echo "  url: $OS_URL"
		target_keys
		echo "sync:"
		echo "  $2:"
		echo "    table: public.$2"
		echo "    index: p2o_cdir_$2"
	} > "$D/$1.yaml"
}

pg2osync validate --config-dir "$D" > "$T/out" 2>&1; st=$?
ok $([ $st = 78 ] && grep -q "holds no configuration file" "$T/out"; echo $?) \
	"a directory without a file is an error, exit 78 ($st: $(head -c 150 "$T/out"))"

# two broken files, one good, and what is never read
src shop-eu cd1
printf 'source:\n  url_env: P2O_TEST_URL\n  slott: x\ntarget:\n  url: %s\nsync:\n  a:\n    table: public.a\n' "$OS_URL" > "$D/b-broken.yaml"
printf 'source: [\n' > "$D/c-broken.yaml"
printf 'not: read\n' > "$D/.hidden.yaml"
printf 'not: read\n' > "$D/notes.yml"
for how in "pg2osync validate --config-dir $D" "pg2osync-supervise --config-dir $D"; do
	$how > "$T/out" 2>&1; st=$?
	ok $([ $st = 78 ] && grep -q "b-broken.yaml:3: unknown key 'source.slott'" "$T/out" &&
		grep -q "c-broken.yaml:" "$T/out" && grep -q "2 of 3 files are invalid" "$T/out"; echo $?) \
		"${how%% *}: both failing files, each with its line, in one run (exit $st)"
	ok $(! grep -q "hidden\|notes.yml\|sub.yaml" "$T/out"; echo $?) "  and nothing of the dot-file, notes.yml or the directory"
done
sed 's/^/# /' "$T/out" | head -5
rm "$D/b-broken.yaml" "$D/c-broken.yaml"

# the set's own rules: one name, one slot, ids on a shared index, one metrics bind
src shop-eu-2 cd1
sed -i 's/  name: shop-eu-2/  name: shop-eu/' "$D/shop-eu-2.yaml"
printf 'metrics:\n  bind: 127.0.0.1:1\n' | tee -a "$D/shop-eu.yaml" >> "$D/shop-eu-2.yaml"
pg2osync validate --config-dir "$D" > "$T/out" 2>&1; st=$?
sed 's/^/# /' "$T/out"
ok $([ $st = 78 ] && grep -q "shop-eu-2.yaml, shop-eu.yaml: two sources named 'shop-eu'" "$T/out" &&
	grep -q "both would take slot 'p2o_cd1' on server" "$T/out" &&
	grep -q "two sources write index 'p2o_cdir_cd1' and sync.cd1 of shop-eu-2.yaml declares no id" "$T/out" &&
	grep -q "metrics.bind is set in both" "$T/out"; echo $?) \
	"every rule the two files break together is said, exit 78 ($st)"
rm "$D/shop-eu-2.yaml"
sed -i '/^metrics:/,$d' "$D/shop-eu.yaml"

# two good sources
src shop-us cd2
pg2osync validate --config-dir "$D" > "$T/out" 2>&1; st=$?
ok $([ $st = 0 ] && [ "$(grep -c '^all checks passed' "$T/out")" = 2 ]; echo $?) \
	"validate checks each source in turn (exit $st, $(grep -c '^all checks passed' "$T/out") passed)"
grep -q "source 'shop-eu'" "$T/out" && grep -q "source 'shop-us'" "$T/out"
ok $? "  naming each"
pg2osync setup-sql --config-dir "$D" > "$T/sql" 2>/dev/null
ok $([ "$(grep -c 'CREATE PUBLICATION' "$T/sql")" = 2 ]; echo $?) "setup-sql prints each source's script ($(grep -c 'CREATE PUBLICATION' "$T/sql") publications)"
pg2osync setup-sql --config-dir "$D" --source shop-us > "$T/sql" 2>/dev/null
ok $([ "$(grep -c 'CREATE PUBLICATION' "$T/sql")" = 1 ] && grep -q p2o_cd2 "$T/sql" && ! grep -q p2o_cd1 "$T/sql"; echo $?) \
	"--source picks one"
pg2osync drop-slot --config-dir "$D" > "$T/out" 2>&1; st=$?
ok $([ $st = 64 ] && grep -q "holds 2 sources: name one with --source NAME (shop-eu, shop-us)" "$T/out"; echo $?) \
	"a verb that acts on one source refuses two, naming them (exit $st: $(head -c 160 "$T/out"))"
pg2osync verify --config-dir "$D" --source shop-xx > "$T/out" 2>&1; st=$?
ok $([ $st = 64 ] && grep -q "no source named 'shop-xx'" "$T/out"; echo $?) "--source of no source: 64"
pg2osync status --config-dir "$D" -c "$D/shop-eu.yaml" > "$T/out" 2>&1; st=$?
ok $([ $st = 64 ]; echo $?) "-c and --config-dir together: 64"
pg2osync status --config-dir "$D" --source shop-us > "$T/out" 2>&1; st=$?
ok $([ $st = 0 ] && grep -q "^checkpoint  none stored" "$T/out"; echo $?) "status --source runs on that one (exit $st)"

# init into the directory: its own name, slot and publication, the set checked
pg2osync init --config-dir "$D" --name shop-ap --table cd1 --target "$OS_URL" \
	--url-env P2O_TEST_URL > "$T/out" 2>&1; st=$?
sed 's/^/# /' "$T/out" | head -3
ok $([ $st = 0 ] && grep -q "  name: shop-ap" "$D/shop-ap.yaml" && grep -q "slot_name: shop_ap" "$D/shop-ap.yaml"; echo $?) \
	"init --config-dir --name writes DIR/NAME.yaml, its own name and slot (exit $st)"
grep -q -- "--config-dir $D --source shop-ap" "$T/out"; ok $? "  and the next commands name it so"
pg2osync init --config-dir "$D" --name shop-ap2 --slot p2o_cd2 --publication p2o_cd2 --table cd1 \
	--target "$OS_URL" --url-env P2O_TEST_URL > "$T/out" 2>&1; st=$?
ok $([ $st = 78 ] && grep -q "both would take slot 'p2o_cd2'" "$T/out"; echo $?) \
	"a new file that takes another source's slot: the set says so, exit 78 ($st)"
done_testing
