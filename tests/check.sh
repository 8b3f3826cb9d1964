#!/usr/bin/env bash
# The test command (README, .ci/run, `make check`): install what is missing,
# build three times (plain, ASan+UBSan, the fuzz targets), then run the two
# lanes of tests/run-suite.sh at once, each with its own real PostgreSQL 15,
# MariaDB 10.11, OpenSearch 2.19 and Meilisearch 1.x (P2O_MEILI_BIN, by
# default ../shared/tools/meilisearch/meilisearch beside the checkout) on
# loopback in a temp dir (lane b also Elasticsearch 8.19 and 9.2), always
# stopped; one closing count.
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
# and what the deployment forms' tests (15x) build with: podman and
# mmdebstrap, dpkg-dev and lintian, helm and kustomize (built once from
# the Go module proxy)
deploy/install-tools.sh image deb helm kustomize || exit 1
logs=$(mktemp -d)
pa='' pb=''
# a stopped test command stops both lanes (run-with.sh stops its servers)
trap '[ -n "$pa$pb" ] && kill -TERM $pa $pb 2>/dev/null; wait; rm -rf "$logs"' EXIT
trap 'exit 130' INT TERM
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
pa='' pb=''
echo "== lane b"
cat "$logs/lane-b.out"
tests/suite-count.sh "$logs"; sc=$?
echo "suite time: $(( $(date +%s) - start )) s"
[ $sa -eq 0 ] && [ $sb -eq 0 ] && [ $sc -eq 0 ]
