#!/usr/bin/env bash
# The test command (README, .ci/run, `make check`): install what is missing,
# build three times (plain, ASan+UBSan, the fuzz targets), then run the two
# lanes of tests/run-suite.sh at once, each with its own real PostgreSQL 15,
# MariaDB 10.11, OpenSearch 2.19 and Meilisearch 1.x (P2O_MEILI_BIN, by
# default ../shared/tools/meilisearch/meilisearch beside the checkout) on
# loopback in a temp dir (lane a also OpenSearch 3.6, lane b
# Elasticsearch 8.19 and 9.2), always
# stopped; lane a's compatibility phases also PostgreSQL 17 and 18,
# MariaDB 11.8 and MySQL 9.7 (trees of later Debian suites, cached), and
# the traces test 334 a Jaeger built from the Go module proxy; one closing
# count, and the README's compatibility table checked against what those
# phases ran.
set -u
cd "$(dirname "$0")/.."
start=$(date +%s)
tests/install-deps.sh || exit 1
make -j2 all >/dev/null || { make all; exit 1; }
make -j2 SAN=1 all >/dev/null || { make SAN=1 all; exit 1; }
# fuzz targets need clang's libFuzzer; built here, run inside the suite
make -j2 FUZZ=1 fuzz-bins >/dev/null || { make FUZZ=1 fuzz-bins; exit 1; }
# every server installed before the lanes start, so two lanes never
# install the same one at once
tests/servers/install.sh pg mariadb opensearch elasticsearch meilisearch || exit 1
P2O_ES_VERSION=${P2O_ES9_VERSION:-9.2.0} tests/servers/install.sh elasticsearch || exit 1
P2O_OS_VERSION=${P2O_OS3_VERSION:-3.6.0} tests/servers/install.sh opensearch || exit 1
# and what the deployment forms' tests (15x) build with: podman and
# mmdebstrap, dpkg-dev and lintian, helm and kustomize (built once from
# the Go module proxy)
deploy/install-tools.sh image deb helm kustomize || exit 1
logs=$(mktemp -d)
pa='' pb='' pg=''
# a stopped test command stops both lanes (run-with.sh stops its servers)
# and the background install
trap '[ -n "$pa$pb$pg" ] && kill -TERM $pa $pb $pg 2>/dev/null; wait; rm -rf "$logs"' EXIT
trap 'exit 130' INT TERM
# the compatibility lane's trees (later Debian suites, unpacked by
# mmdebstrap) and Jaeger (a Go build) take many minutes on a fresh machine,
# mostly waiting on downloads: built in the background, one after the
# other (one apt at a time), while the lanes' first phases run;
# run-suite.sh's bg_wait holds the phases that need them until each is there
mkdir -p "$logs/bg"
export P2O_BG=$logs/bg
(
	nice -n 10 tests/servers/install.sh pg=17 pg=18 mariadb=11.8 mysql > "$P2O_BG/trees.log" 2>&1
	echo $? > "$P2O_BG/trees.rc"
	nice -n 10 tests/servers/install.sh jaeger > "$P2O_BG/jaeger.log" 2>&1
	echo $? > "$P2O_BG/jaeger.rc"
) &
pg=$!
P2O_SUITE_LOGS=$logs tests/servers/run-with.sh --pg --mariadb --os --meili -- \
	tests/run-suite.sh a > "$logs/lane-a.out" 2>&1 &
pa=$!
P2O_SUITE_LOGS=$logs tests/servers/run-with.sh --pg --mariadb --os --es --meili -- \
	tests/run-suite.sh b > "$logs/lane-b.out" 2>&1 &
pb=$!
# lane a prints as it goes; lane b's output follows it
tail -n +1 -f --pid=$pa "$logs/lane-a.out"
wait $pa; sa=$?
wait $pb; sb=$?
wait $pg
pa='' pb='' pg=''
echo "== lane b"
cat "$logs/lane-b.out"
# the README's compatibility table is what the two lanes' compat phases ran
tests/compat/table.sh --readme README.md "$logs"/compat-*.tap "$logs/plain-b.tap" || sa=1
tests/suite-count.sh "$logs"; sc=$?
echo "suite time: $(( $(date +%s) - start )) s"
[ $sa -eq 0 ] && [ $sb -eq 0 ] && [ $sc -eq 0 ]
