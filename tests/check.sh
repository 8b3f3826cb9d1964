#!/usr/bin/env bash
# The test command (README, .ci/run, `make check`): install what is missing,
# build twice (plain and ASan+UBSan), start real PostgreSQL 15, MariaDB 10.11
# OpenSearch 2.19 and Elasticsearch 8.19 on loopback in a temp dir, run every test against the
# plain build and then against the sanitizer build, stop the servers.
set -u
cd "$(dirname "$0")/.."
start=$(date +%s)
tests/install-deps.sh || exit 1
make -j2 all >/dev/null || { make all; exit 1; }
make -j2 SAN=1 all >/dev/null || { make SAN=1 all; exit 1; }
# fuzz targets need clang's libFuzzer; built here, run inside the suite
make -j2 FUZZ=1 fuzz-bins >/dev/null || { make FUZZ=1 fuzz-bins; exit 1; }
tests/servers/run-with.sh --pg --mariadb --os --es -- tests/run-suite.sh
st=$?
echo "suite time: $(( $(date +%s) - start )) s"
exit $st
