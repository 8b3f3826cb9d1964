#!/usr/bin/env bash
# make soak: tests/soak/soak.py on servers of its own (PostgreSQL, MariaDB
# and one OpenSearch node), both sources at once unless SOAK_DB says one.
#   SOAK_MINUTES (60)  SOAK_DB (both|pg|mariadb)  SOAK_PG_TPS (20)
#   SOAK_MY_TPS (20)   SOAK_OUT (build/soak)      SOAK_SEED (1)
# Prints the pass criteria at the end; exits 0 when every one holds. A busy
# machine starts OpenSearch slowly: P2O_OS_START_TIMEOUT defaults to 400 s here
# (the target-restart fault waits for it too).
set -eu
cd "$(dirname "$0")/../.."
tests/install-deps.sh
tests/soak/install.sh
make -s all
export P2O_OS_START_TIMEOUT=${P2O_OS_START_TIMEOUT:-400}
case ${SOAK_DB:-both} in
pg) servers="--pg" ;;
mariadb) servers="--mariadb" ;;
both) servers="--pg --mariadb" ;;
*) echo "run.sh: SOAK_DB must be pg, mariadb or both" >&2; exit 64 ;;
esac
# shellcheck disable=SC2086 # two flags
exec tests/servers/run-with.sh $servers --os -- python3 tests/soak/soak.py
