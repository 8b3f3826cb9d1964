#!/usr/bin/env bash
# make bench: pg2osync beside the node's own limit (raw _bulk of the same
# documents) and beside PGSync and Debezium, on a PostgreSQL and an
# OpenSearch node of its own, one tool at a time. Prints one table, writes
# build/bench/bench.json and build/bench/bench.png; tests/bench/bench.py says
# what each row measures.
#   tests/bench/run.sh [ROWS]    ROWS narrow rows (default 1,000,000), ROWS/5
#                                wide rows, streaming rows ROWS/10 (at most
#                                100,000)
# The peers are installed by tests/bench/install.sh into ~/.cache/pg2osync;
# one that cannot be installed keeps its column, which says why.
# BENCH_TARGET=elasticsearch: the same against an Elasticsearch 8 node
# (pg2osync and the ceiling; the peers only with BENCH_TOOLS).
# BENCH_TARGET=meilisearch: pg2osync's loads and streaming beside a minimal
# client's ceiling on a real Meilisearch server (tests/bench/meili.py;
# ROWS defaults to 100,000 there, the server is P2O_MEILI_BIN's).
set -eu
cd "$(dirname "$0")/../.."
if [ "${BENCH_TARGET:-opensearch}" = meilisearch ]; then
	ROWS=${1:-100000}
	case $ROWS in
	'' | *[!0-9]*) echo "usage: $0 [ROWS]" >&2; exit 64 ;;
	esac
	tests/install-deps.sh
	make -s all
	export PGOPTIONS="-c client_min_messages=warning"
	exec tests/servers/run-with.sh --pg --meili -- python3 tests/bench/meili.py "$ROWS"
fi
ROWS=${1:-1000000}
case $ROWS in
'' | *[!0-9]*) echo "usage: $0 [ROWS]" >&2; exit 64 ;;
esac
tests/install-deps.sh
make -s all
# against Elasticsearch only pg2osync runs unless BENCH_TOOLS names peers
if [ "${BENCH_TARGET:-opensearch}" = opensearch ] || [ -n "${BENCH_TOOLS:-}" ]; then
	tests/bench/install.sh || echo "run.sh: a peer could not be installed; its column says so" >&2
fi
export PGOPTIONS="-c client_min_messages=warning"
# the node gets more heap than the tests give it: wide documents, four
# requests open at once, and no garbage collector in the numbers
export P2O_OS_JAVA_OPTS=${P2O_OS_JAVA_OPTS:--Xms1g -Xmx1g}
node=--os
case ${BENCH_TARGET:-opensearch} in
opensearch) ;;
elasticsearch) node=--es ;;
*) echo "run.sh: BENCH_TARGET must be opensearch, elasticsearch or meilisearch" >&2; exit 64 ;;
esac
# the bounded-memory rows (bounded.py) run on MariaDB as well
maria=--mariadb
case ,${BENCH_SKIP:-}, in *,bounded,*) maria= ;; esac
case ${BENCH_ONLY:-} in ?*) [ "$BENCH_ONLY" = bounded ] || maria= ;; esac
exec tests/servers/run-with.sh --pg $maria $node -- python3 tests/bench/bench.py "$ROWS"
