#!/usr/bin/env bash
# The test suite's short chaos run: three trials (PostgreSQL, MariaDB,
# PostgreSQL) of tests/chaos/chaos.py, each a continuous writer under the
# supervised pipeline with kill -9 of stages and of everything, SIGTERM
# and database restarts at random moments, the index compared with the
# table after each. The seed is random; a failure prints its seed and the
# command that repeats it. CHAOS_SEED pins one. `make chaos` runs more.
set -u
cd "$(dirname "$0")/../.."
if [ -z "${OS_URL:-}" ] || [ -z "${P2O_SERVERS_DIR:-}" ] || [ -z "${MYSQL_HOST:-}" ]; then
	echo "1..0 # skip needs tests/servers/run-with.sh --pg --mariadb --os"
	exit 0
fi
export PGOPTIONS="-c client_min_messages=warning"
exec python3 tests/chaos/chaos.py --tap --short --db both \
	--trials "${CHAOS_TRIALS:-3}" ${CHAOS_SEED:+--seed "$CHAOS_SEED"}
