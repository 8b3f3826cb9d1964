#!/usr/bin/env bash
# One lane of the test command, under tests/servers/run-with.sh:
#   tests/run-suite.sh a|b|all
# a: the plain build's unit and golden tests and every integration test
#    whose source is PostgreSQL (files not named *mysql*) but the target's
#    faults, the Meilisearch acceptance tests (946-949), the package, the
#    chart and the guides (151, 153, 154), the short chaos run
# b: the MySQL/MariaDB files, the target's faults, refusals and the other
#    Meilisearch tests (9xx), the container image and the tarball (150,
#    152) on the plain build, the ASan+UBSan pass, the Elasticsearch 8 and
#    9 passes and the fuzz targets (needs --es too)
# Both lanes have a real Meilisearch server (run-with.sh --meili).
# tests/check.sh runs a and b at once, each with servers of its own: most
# of a test's time is spent waiting on a server, so two lanes on two cores
# finish in a little over the longer one's time. Each phase's TAP goes to
# $P2O_SUITE_LOGS/NAME.tap; without P2O_SUITE_LOGS the lane keeps its logs
# in a temp dir and prints the closing count itself.
set -u
cd "$(dirname "$0")/.."
lane=${1:-all}
case $lane in a|b|all) ;; *) echo "usage: $0 a|b|all" >&2; exit 64 ;; esac
own_logs=
if [ -z "${P2O_SUITE_LOGS:-}" ]; then
	P2O_SUITE_LOGS=$(mktemp -d); own_logs=1
fi
logs=$P2O_SUITE_LOGS
st=0
phase() {	# phase NAME BUILD-DIR TESTS...
	local name=$1 b=$2; shift 2
	local t0=$SECONDS
	echo "== $name"
	P2O_BIN=$PWD/$b/bin prove -v --timer "$@" > "$logs/$name.tap" 2>&1 || st=1
	grep -vE '^ok [0-9]' "$logs/$name.tap" | tail -n 300
	# where the phase's time went: the ten slowest files
	awk '/^\[[0-9:]+\] [^ ]+ \.+ *$/ { f = $2 }
		f && /^(not )?ok +[0-9]+ ms/ { ms = ($1 == "not") ? $3 : $2; print ms, f; f = "" }' \
		"$logs/$name.tap" | sort -rn | head -10 | awk '{ printf "  slowest: %6.1f s  %s\n", $1 / 1000, $2 }'
	echo "  phase $name: $((SECONDS - t0)) s"
}
unit=(build/tests/t-*)
san_unit=(build-san/tests/t-*)
# the split keeps the lanes about even (the 9xx family waits out outages;
# of the deployment tests the image and the tarball, 150 and 152, about
# 90-150 and 70 s, go with them, the package, the chart and the guides,
# 151, 153 and 154, about 150-170, 10 and 4 s, stay in lane a; the
# Meilisearch acceptance tests, about 100 s, go to lane a, which does not
# run the ASan pass of the Meilisearch data path)
b_only='mysql|/9[0-9][0-9]-|/15[02]-'
a_too='/94[6-9]-'
a_integ=($(ls tests/integration/*.t | grep -Ev "$b_only") $(ls tests/integration/*.t | grep -E "$a_too")
	tests/chaos/chaos.t)
b_integ=($(ls tests/integration/*.t | grep -E "$b_only" | grep -Ev "$a_too"))
# the sanitizer pass repeats what exercises the most code per minute; the
# 30-second target outage, the long kill loop and the 200,000-row load stay
# in the plain pass; Meilisearch's data path (940) and read-back (947), the
# mapping options and writing only through aliases (406, 407)
san_integ=(tests/integration/100-*.t tests/integration/11[0-6]-*.t tests/integration/120-*.t
	tests/integration/200-*.t tests/integration/300-*.t tests/integration/900-*.t
	tests/integration/310-*.t tests/integration/313-*.t
	tests/integration/907-*.t tests/integration/221-*.t
	tests/integration/147-*.t tests/integration/42[0-3]-*.t tests/integration/532-*.t
	tests/integration/40[67]-*.t
	tests/integration/940-*.t tests/integration/947-*.t
	tests/integration/800-*.t tests/integration/81[012]-*.t tests/integration/506-*.t
	tests/integration/60[0-3]-mysql-*.t tests/integration/620-mysql-*.t
	tests/integration/630-mysql-*.t tests/integration/650-mysql-*.t
	tests/integration/70[1-5]-loader-*.t)
# the Elasticsearch pass (run-with.sh --es): the same files, the target chosen
# by P2O_TARGET, for the scenarios both engines must pass: init against the
# node (the flavour it writes, its generated files run; 115), streaming
# CRUD, a key change, TOAST and truncate (300), TOAST replay (301), the
# refused-document halt (900), the load killed with -9 (501), shaping: id
# templates, templated indices, routing and fan-out (401, 402: their
# pipeline and join parts need ingest-common and parent-join, which the
# Elasticsearch test node lacks; 400 needs both throughout), where,
# transforms, append-only, a load (403-405), the load plan of 50 sections
# sharing one index in batched requests (812), the mapping options of issue
# 37 and writing only through aliases (406, 407; the join part needs
# parent-join), credentials and TLS on a secured node (910), verify and its
# repair (140), the quarantine of refused documents and its replay (930)
es_integ=(tests/integration/115-*.t tests/integration/140-*.t
	tests/integration/300-*.t tests/integration/301-*.t tests/integration/900-*.t
	tests/integration/501-*.t tests/integration/40[1-6]-shape-*.t tests/integration/407-*.t
	tests/integration/812-*.t tests/integration/910-*.t tests/integration/930-*.t)
es9_integ=(tests/integration/300-*.t tests/integration/501-*.t tests/integration/910-*.t)
P2O_ES9_VERSION=${P2O_ES9_VERSION:-9.2.0}
golden=(tests/golden/run.sh tests/golden/writer/run.sh tests/golden/capture-pg.sh
	tests/golden/capture-mysql.sh tests/golden/loader.sh)
if [ "$lane" != b ]; then
	phase plain build "${unit[@]}" "${golden[@]}" "${a_integ[@]}"
fi
if [ "$lane" != a ]; then
	phase plain-b build "${b_integ[@]}"
	phase asan build-san "${san_unit[@]}" "${golden[@]}" $(ls "${san_integ[@]}" 2>/dev/null)
	if [ -n "${ES_URL:-}" ]; then
		OS_URL=$ES_URL OS_PORT=$ES_PORT OS_PID=$ES_PID P2O_TARGET=elasticsearch \
			phase elasticsearch build $(ls "${es_integ[@]}" 2>/dev/null)
		# Elasticsearch 9 (on a JDK 25 install.sh fetches): a second node
		# of its own, started by a run-with.sh inside this one (the
		# databases stay); the streaming CRUD, the -9 load and the
		# secured node
		echo "== elasticsearch $P2O_ES9_VERSION"
		t0=$SECONDS
		P2O_ES_VERSION=$P2O_ES9_VERSION tests/servers/run-with.sh --es -- bash -c '
			OS_URL=$ES_URL OS_PORT=$ES_PORT OS_PID=$ES_PID P2O_TARGET=elasticsearch \
			P2O_BIN=$PWD/build/bin prove -v --timer "$@"' es9 $(ls "${es9_integ[@]}" 2>/dev/null) \
			> "$logs/elasticsearch9.tap" 2>&1 || st=1
		grep -vE '^ok [0-9]' "$logs/elasticsearch9.tap" | tail -n 100
		echo "  phase elasticsearch9: $((SECONDS - t0)) s"
	else
		echo "== elasticsearch: no node (run-with.sh --es) - the lane's Elasticsearch passes did not run"
		st=1
	fi
	FUZZ_SECONDS=${FUZZ_SECONDS:-15} phase fuzz build tests/fuzz/run.sh
fi
if [ -n "$own_logs" ]; then
	tests/suite-count.sh "$logs" || st=1
	rm -rf "$logs"
fi
exit $st
