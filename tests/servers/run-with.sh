#!/usr/bin/env bash
# shellcheck disable=SC1091,SC2329 # env files exist only at run time; trap handlers
# Run a command with throw-away servers, always stopping them afterwards.
#   tests/servers/run-with.sh [--pg] [--mariadb] [--os] [--es] [--meili] -- CMD ARGS...
# CMD sees the variables of each server's env file (see pg.sh, mariadb.sh,
# opensearch.sh, elasticsearch.sh, meilisearch.sh) and P2O_SERVERS_DIR; the
# servers' DIRs are $P2O_SERVERS_DIR/pg, $P2O_SERVERS_DIR/mariadb,
# $P2O_SERVERS_DIR/os, $P2O_SERVERS_DIR/es and $P2O_SERVERS_DIR/meili. With --es and without --os, the tests' target is the
# Elasticsearch node: OS_URL names it and P2O_TARGET=elasticsearch.
# Exits with CMD's status (or non-zero when a server could not start).
set -eu
# A closed stdin would be taken over by the first file opened here: use /dev/null.
[ -e "/proc/$$/fd/0" ] || exec </dev/null
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { p2o_die "usage: $p2o_prog [--pg] [--mariadb] [--os] [--es] [--meili] -- CMD [ARGS...]"; }
want_pg='' want_mariadb='' want_os='' want_es='' want_meili=''
while [ $# -gt 0 ]; do
    case $1 in
        --pg) want_pg=1 ;;
        --mariadb) want_mariadb=1 ;;
        --os | --opensearch) want_os=1 ;;
        --es | --elasticsearch) want_es=1 ;;
        --meili | --meilisearch) want_meili=1 ;;
        --) shift; break ;;
        *) usage ;;
    esac
    shift
done
[ $# -gt 0 ] || usage
p2o_need_root

comps=()
[ -n "$want_pg" ] && comps+=(pg)
[ -n "$want_mariadb" ] && comps+=(mariadb)
[ -n "$want_os" ] && comps+=(opensearch)
[ -n "$want_es" ] && comps+=(elasticsearch)
[ -n "$want_meili" ] && comps+=(meilisearch)
if [ ${#comps[@]} -gt 0 ]; then
    "$P2O_SERVERS_HOME/install.sh" "${comps[@]}"
fi

P2O_SERVERS_DIR=$(mktemp -d /tmp/p2o-servers.XXXXXX)
chmod 755 "$P2O_SERVERS_DIR"
export P2O_SERVERS_DIR
cmd_pid='' os_start_pid='' es_start_pid=''

kill_tree() { # TERM a process and its descendants
    local c
    for c in $(pgrep -P "$1" 2>/dev/null || true); do kill_tree "$c"; done
    kill -TERM "$1" 2>/dev/null || true
}

cleanup() {
    local rc=$? src=0
    trap - EXIT INT TERM HUP
    if [ -n "$cmd_pid" ] && kill -0 "$cmd_pid" 2>/dev/null; then
        kill_tree "$cmd_pid"
        wait "$cmd_pid" 2>/dev/null || true
    fi
    local p
    # a node still starting (a database failed meanwhile, or a signal) is
    # let finish and then stopped: killing its start script mid-way left the
    # node's launcher, in a session of its own, to start the JVM after the
    # stop below had found nothing to stop
    for p in $os_start_pid $es_start_pid; do
        wait "$p" 2>/dev/null || true
    done
    p2o_vlog "stopping servers"
    if [ -d "$P2O_SERVERS_DIR/os" ]; then
        "$P2O_SERVERS_HOME/opensearch.sh" stop "$P2O_SERVERS_DIR/os" || src=1
    fi
    if [ -d "$P2O_SERVERS_DIR/es" ]; then
        "$P2O_SERVERS_HOME/elasticsearch.sh" stop "$P2O_SERVERS_DIR/es" || src=1
    fi
    if [ -d "$P2O_SERVERS_DIR/meili" ]; then
        "$P2O_SERVERS_HOME/meilisearch.sh" stop "$P2O_SERVERS_DIR/meili" || src=1
    fi
    if [ -d "$P2O_SERVERS_DIR/pg" ]; then
        "$P2O_SERVERS_HOME/pg.sh" stop "$P2O_SERVERS_DIR/pg" || src=1
    fi
    if [ -d "$P2O_SERVERS_DIR/mariadb" ]; then
        "$P2O_SERVERS_HOME/mariadb.sh" stop "$P2O_SERVERS_DIR/mariadb" || src=1
    fi
    p2o_vlog "servers stopped"
    if [ "$src" = 0 ]; then
        rm -rf "$P2O_SERVERS_DIR"
    else
        echo "$p2o_prog: a server did not stop; left $P2O_SERVERS_DIR" >&2
        [ "$rc" != 0 ] || rc=1
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# OpenSearch boots slowest: start it in the background, the databases meanwhile.
if [ -n "$want_os" ]; then
    mkdir -p "$P2O_SERVERS_DIR/os"
    "$P2O_SERVERS_HOME/opensearch.sh" start "$P2O_SERVERS_DIR/os" &
    os_start_pid=$!
fi
if [ -n "$want_es" ]; then
    mkdir -p "$P2O_SERVERS_DIR/es"
    "$P2O_SERVERS_HOME/elasticsearch.sh" start "$P2O_SERVERS_DIR/es" &
    es_start_pid=$!
fi
if [ -n "$want_pg" ]; then
    mkdir -p "$P2O_SERVERS_DIR/pg"
    "$P2O_SERVERS_HOME/pg.sh" start "$P2O_SERVERS_DIR/pg"
    . "$P2O_SERVERS_DIR/pg/env"
fi
if [ -n "$want_meili" ]; then
    mkdir -p "$P2O_SERVERS_DIR/meili"
    "$P2O_SERVERS_HOME/meilisearch.sh" start "$P2O_SERVERS_DIR/meili"
    . "$P2O_SERVERS_DIR/meili/env"
fi
if [ -n "$want_mariadb" ]; then
    mkdir -p "$P2O_SERVERS_DIR/mariadb"
    "$P2O_SERVERS_HOME/mariadb.sh" start "$P2O_SERVERS_DIR/mariadb"
    . "$P2O_SERVERS_DIR/mariadb/env"
fi
if [ -n "$want_os" ]; then
    rc=0
    wait "$os_start_pid" || rc=$?
    os_start_pid=
    [ "$rc" = 0 ] || exit "$rc"
    . "$P2O_SERVERS_DIR/os/env"
fi
if [ -n "$want_es" ]; then
    rc=0
    wait "$es_start_pid" || rc=$?
    es_start_pid=
    [ "$rc" = 0 ] || exit "$rc"
    . "$P2O_SERVERS_DIR/es/env"
    if [ -z "$want_os" ]; then
        # the tests write to OS_URL: the same files run against this node
        export OS_URL=$ES_URL OS_PORT=$ES_PORT OS_PID=$ES_PID
        export P2O_TARGET=elasticsearch
    fi
fi

# CMD runs in the background (stdin passed on) so that a TERM or INT sent to
# this script interrupts `wait` at once and the trap still stops the servers.
rc=0
"$@" <&0 &
cmd_pid=$!
wait "$cmd_pid" || rc=$?
# `wait` also returns early (>128) when a trapped signal arrives; the trap then exits.
cmd_pid=
exit "$rc"
