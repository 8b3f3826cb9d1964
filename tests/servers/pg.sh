#!/usr/bin/env bash
# A throw-away PostgreSQL 15 on 127.0.0.1, ready for logical replication.
#   pg.sh start DIR    initdb on first use, else restart the same data on the same port; writes DIR/env
#   pg.sh stop DIR     pg_ctl stop -m fast (idempotent)
#   pg.sh kill DIR     pg_ctl stop -m immediate (a crash: recovery on next start)
#   pg.sh status DIR   exit 0 when running
# Role p2o (LOGIN REPLICATION, owner of database p2o), password $P2O_DB_PASSWORD
# (default p2o-secret-pw); scram-sha-256 over TCP, trust on the socket in DIR.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { p2o_die "usage: $p2o_prog start|stop|kill|status DIR"; }
[ $# = 2 ] || usage
cmd=$1
p2o_need_root
mkdir -p "$2"
DIR=$(p2o_abspath "$2")
DATA=$DIR/data
LOG=$DIR/postgres.log

as_pg() { runuser -u postgres -- "$@"; }

running() { [ -f "$DATA/postmaster.pid" ] && as_pg "$P2O_PG_BIN/pg_ctl" status -D "$DATA" >/dev/null 2>&1; }

fail() {
    p2o_log_tail "$LOG"
    p2o_die "$*"
}

write_conf() { # port
    cat >"$DATA/postgresql.auto.conf" <<EOF
# written by tests/servers/pg.sh
listen_addresses = '127.0.0.1'
port = $1
unix_socket_directories = '$DIR'
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
max_connections = 100
shared_buffers = 128MB
logging_collector = off
log_min_messages = warning
log_line_prefix = '%m [%p] %q%u@%d '
# counted statements: a test asks how many queries a change cost
shared_preload_libraries = 'pg_stat_statements'
EOF
    cat >"$DATA/pg_hba.conf" <<'EOF'
# written by tests/servers/pg.sh
local   all             all                             trust
local   replication     all                             trust
host    all             all             127.0.0.1/32    scram-sha-256
host    replication     all             127.0.0.1/32    scram-sha-256
EOF
    chown postgres: "$DATA/postgresql.auto.conf" "$DATA/pg_hba.conf"
}

start_pg() {
    local port tries=0 fresh=
    [ -x "$P2O_PG_BIN/pg_ctl" ] || "$P2O_SERVERS_HOME/install.sh" pg
    id -u postgres >/dev/null 2>&1 || p2o_die "no postgres user (run install.sh pg)"
    running && p2o_die "PostgreSQL already running in $DIR"
    chown postgres: "$DIR"
    p2o_check_reachable postgres "$DIR"
    if [ ! -f "$DATA/PG_VERSION" ]; then
        rm -rf "$DATA"
        as_pg "$P2O_PG_BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
            >"$DIR/initdb.log" 2>&1 </dev/null || { p2o_log_tail "$DIR/initdb.log"; p2o_die "initdb failed"; }
        fresh=1
    fi
    while :; do
        if [ -f "$DIR/port" ]; then
            port=$(cat "$DIR/port")
        else
            port=$(p2o_free_port)
        fi
        write_conf "$port"
        : >"$LOG"
        chown postgres: "$LOG"
        if as_pg "$P2O_PG_BIN/pg_ctl" start -D "$DATA" -l "$LOG" -w -t 120 -s >/dev/null 2>&1 </dev/null; then
            echo "$port" >"$DIR/port"
            break
        fi
        # Another process took the port between the probe and the bind: pick again.
        tries=$((tries + 1))
        if [ ! -f "$DIR/port" ] && [ $tries -lt 5 ] && grep -q 'could not bind\|Address already in use' "$LOG"; then
            continue
        fi
        fail "PostgreSQL did not start"
    done

    if [ -n "$fresh" ]; then
        as_pg "$P2O_PG_BIN/psql" -h "$DIR" -p "$port" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 \
            -v pw="$P2O_DB_PASSWORD" >"$DIR/setup.log" 2>&1 <<'EOF' || fail "creating role/database failed: $(cat "$DIR/setup.log")"
CREATE ROLE p2o LOGIN REPLICATION PASSWORD :'pw';
CREATE DATABASE p2o OWNER p2o;
EOF
    fi

    cat >"$DIR/env.tmp" <<EOF
export PGHOST=127.0.0.1
export PGPORT=$port
export PGUSER=p2o
export PGDATABASE=p2o
export PGPASSWORD=$P2O_DB_PASSWORD
export PG_URL=postgres://p2o@127.0.0.1:$port/p2o
export PG_BIN=$P2O_PG_BIN
export PG_DATA=$DATA
EOF
    mv "$DIR/env.tmp" "$DIR/env"
}

stop_pg() { # mode
    local pid
    if [ ! -f "$DATA/postmaster.pid" ]; then
        # interrupted before the postmaster wrote its pid file
        pid=$(p2o_find_pid "bin/postgres -D $DATA ") || return 0
        kill -INT "$pid" 2>/dev/null || true
        p2o_wait_gone "$pid" 60 || kill -KILL "$pid" 2>/dev/null || true
        return 0
    fi
    if running; then
        # a fast shutdown waits for each walsender's client to confirm
        # what was sent, which a stalled or stand-alone capture never
        # does: after 20 s a test server is simply stopped hard
        as_pg "$P2O_PG_BIN/pg_ctl" stop -D "$DATA" -m "$1" -w -t 20 -s >/dev/null 2>&1 </dev/null \
            || as_pg "$P2O_PG_BIN/pg_ctl" stop -D "$DATA" -m immediate -w -t 60 -s >/dev/null 2>&1 </dev/null \
            || fail "pg_ctl stop -m $1 failed"
    fi
    return 0
}

case $cmd in
    start) start_pg ;;
    stop) stop_pg fast ;;
    kill) stop_pg immediate ;;
    status) running ;;
    *) usage ;;
esac
