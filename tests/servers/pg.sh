#!/usr/bin/env bash
# A throw-away PostgreSQL on 127.0.0.1, ready for logical replication:
# bookworm's 15, or 17 or 18 from a tree of a later suite (tree-lib.sh)
# chosen by P2O_PG_VERSION.
#   pg.sh start DIR    initdb on first use, else restart the same data on the same port; writes DIR/env
#   pg.sh stop DIR     pg_ctl stop -m fast (idempotent)
#   pg.sh kill DIR     pg_ctl stop -m immediate (a crash: recovery on next start)
#   pg.sh status DIR   exit 0 when running
#   pg.sh standby DIR PRIMARY-DIR SLOT
#                      a physical standby of the running server of PRIMARY-DIR (same
#                      version): a base backup streaming from physical slot SLOT, made on
#                      the primary; hot_standby_feedback, and from 17 on
#                      sync_replication_slots; then started as DIR
#   pg.sh promote DIR  pg_ctl promote, waiting until it accepts writes
# Role p2o (LOGIN REPLICATION, owner of database p2o), password $P2O_DB_PASSWORD
# (default p2o-secret-pw); scram-sha-256 over TCP, trust on the socket in DIR.
# DIR keeps the version it was made with. pg.sh's settings live in
# p2o-test.conf, included by postgresql.conf; ALTER SYSTEM's stay in force
# across restarts and, as on any server, travel with a base backup.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { p2o_die "usage: $p2o_prog start|stop|kill|status|promote DIR | standby DIR PRIMARY-DIR SLOT"; }
[ $# -ge 2 ] || usage
cmd=$1
p2o_need_root
mkdir -p "$2"
DIR=$(p2o_abspath "$2")
[ -f "$DIR/.p2o-server" ] || echo pg.sh >"$DIR/.p2o-server"

if [ -f "$DIR/version" ]; then
    VERSION=$(cat "$DIR/version")
elif [ "$cmd" = standby ] && [ -f "${3:-}/version" ]; then
    VERSION=$(cat "$3/version")
else
    VERSION=${P2O_PG_VERSION:-$P2O_PG_HOST_VERSION}
fi
BIN=/usr/lib/postgresql/$VERSION/bin
if [ "$VERSION" = "$P2O_PG_HOST_VERSION" ]; then
    # bookworm's own: the instance's files are DIR itself
    ROOT='' IN=$DIR HOST=$DIR PG_IDS=''
    as_pg() { runuser -u postgres -- "$@"; }
else
    # a tree's: its files are /p2o in DIR's copy of the tree
    p2o_tree_row pg "$VERSION" || p2o_die "no PostgreSQL $VERSION (bookworm's $P2O_PG_HOST_VERSION, or a tree's: $(p2o_tree_versions pg))"
    ROOT=$DIR/root IN=/p2o HOST=$DIR/root/p2o
    as_pg() { chroot --userspec="$PG_IDS" "$ROOT" "$@"; }
    PG_IDS=$(p2o_tree_user "$ROOT" postgres 2>/dev/null) || PG_IDS=
fi
DATA=$HOST/data   # as the host sees it
SDATA=$IN/data    # as the server sees it
LOG=$HOST/postgres.log

running() { [ -f "$DATA/postmaster.pid" ] && as_pg "$BIN/pg_ctl" status -D "$SDATA" >/dev/null 2>&1; }

fail() {
    p2o_log_tail "$LOG"
    p2o_die "$*"
}

# the instance's files and the service user: bookworm's packages, or DIR's tree
prepare() {
    if [ -z "$ROOT" ]; then
        [ -x "$BIN/pg_ctl" ] || "$P2O_SERVERS_HOME/install.sh" pg
        id -u postgres >/dev/null 2>&1 || p2o_die "no postgres user (run install.sh pg)"
        chown postgres: "$DIR"
        p2o_check_reachable postgres "$DIR"
    else
        p2o_tree_copy pg "$VERSION" "$DIR"
        PG_IDS=$(p2o_tree_user "$ROOT" postgres) || p2o_die "no postgres user in $ROOT"
        chown "$PG_IDS" "$HOST"
    fi
    echo "$VERSION" >"$DIR/version"
}

write_conf() { # port
    cat >"$DATA/p2o-test.conf" <<EOF
# written by tests/servers/pg.sh at each start
listen_addresses = '127.0.0.1'
port = $1
unix_socket_directories = '$IN'
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
    if [ -f "$DIR/primary" ]; then
        # a standby (pg.sh standby): what the primary's slot and a copy of
        # its failover slots need
        read -r pport pslot <"$DIR/primary"
        cat >>"$DATA/p2o-test.conf" <<EOF
primary_conninfo = 'host=127.0.0.1 port=$pport user=p2o password=$P2O_DB_PASSWORD dbname=p2o application_name=$pslot'
primary_slot_name = '$pslot'
hot_standby_feedback = on
EOF
        [ "$VERSION" -lt 17 ] || echo "sync_replication_slots = on" >>"$DATA/p2o-test.conf"
    fi
    grep -qx "include 'p2o-test.conf'" "$DATA/postgresql.conf" \
        || echo "include 'p2o-test.conf'" >>"$DATA/postgresql.conf"
    cat >"$DATA/pg_hba.conf" <<'EOF'
# written by tests/servers/pg.sh
local   all             all                             trust
local   replication     all                             trust
host    all             all             127.0.0.1/32    scram-sha-256
host    replication     all             127.0.0.1/32    scram-sha-256
EOF
    chown --reference="$DATA" "$DATA/p2o-test.conf" "$DATA/pg_hba.conf" "$DATA/postgresql.conf"
}

# start the server of DATA on DIR's port (a free one the first time)
launch() {
    local port tries=0
    while :; do
        if [ -f "$DIR/port" ]; then
            port=$(cat "$DIR/port")
        else
            port=$(p2o_free_port)
        fi
        write_conf "$port"
        : >"$LOG"
        chown --reference="$HOST" "$LOG"
        if as_pg "$BIN/pg_ctl" start -D "$SDATA" -l "$IN/postgres.log" -w -t 120 -s >/dev/null 2>&1 </dev/null; then
            echo "$port" >"$DIR/port"
            break
        fi
        # Another process took the port between the probe and the bind: pick again.
        tries=$((tries + 1))
        if [ ! -f "$DIR/port" ] && [ $tries -lt 5 ] && grep -q 'could not bind\|Address already in use' "$LOG"; then
            continue
        fi
        fail "PostgreSQL $VERSION did not start"
    done
    # `psql -h DIR` reaches a tree's server too
    [ -z "$ROOT" ] || ln -sfn "root/p2o/.s.PGSQL.$port" "$DIR/.s.PGSQL.$port"
    PORT=$port
}

write_env() {
    cat >"$DIR/env.tmp" <<EOF
export PGHOST=127.0.0.1
export PGPORT=$PORT
export PGUSER=p2o
export PGDATABASE=p2o
export PGPASSWORD=$P2O_DB_PASSWORD
export PG_URL=postgres://p2o@127.0.0.1:$PORT/p2o
export PG_DATA=$DATA
export P2O_PG_VERSION=$VERSION
EOF
    # the server's own programs run on the host only for bookworm's
    [ -n "$ROOT" ] || echo "export PG_BIN=$BIN" >>"$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
}

start_pg() {
    local fresh=
    running && p2o_die "PostgreSQL already running in $DIR"
    prepare
    if [ ! -f "$DATA/PG_VERSION" ]; then
        rm -rf "$DATA"
        as_pg "$BIN/initdb" -D "$SDATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
            >"$DIR/initdb.log" 2>&1 </dev/null || { p2o_log_tail "$DIR/initdb.log"; p2o_die "initdb failed"; }
        fresh=1
    fi
    launch
    if [ -n "$fresh" ]; then
        as_pg "$BIN/psql" -h "$IN" -p "$PORT" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 \
            -v pw="$P2O_DB_PASSWORD" >"$DIR/setup.log" 2>&1 <<'EOF' || fail "creating role/database failed: $(cat "$DIR/setup.log")"
CREATE ROLE p2o LOGIN REPLICATION PASSWORD :'pw';
CREATE DATABASE p2o OWNER p2o;
EOF
    fi
    write_env
}

standby_pg() { # PRIMARY-DIR SLOT
    local pdir pport slot=$2
    pdir=$(p2o_abspath "$1")
    [ -f "$DATA/PG_VERSION" ] && p2o_die "$DIR already holds a server"
    pport=$(cat "$pdir/port") || p2o_die "no server in $pdir"
    "$0" status "$pdir" || p2o_die "the primary of $pdir is not running"
    prepare
    # the slot keeps the WAL the standby has not received yet; the
    # primary's socket, as its superuser
    runuser_primary_psql "$pdir" "$pport" \
        "select pg_create_physical_replication_slot('$slot') where not exists (select 1 from pg_replication_slots where slot_name = '$slot')" \
        || p2o_die "could not create slot $slot on the primary"
    rm -rf "$DATA"
    PGPASSWORD=$P2O_DB_PASSWORD as_pg "$BIN/pg_basebackup" -h 127.0.0.1 -p "$pport" -U p2o \
        -D "$SDATA" -X stream -S "$slot" -c fast >"$DIR/basebackup.log" 2>&1 </dev/null \
        || { p2o_log_tail "$DIR/basebackup.log"; p2o_die "pg_basebackup from $pdir failed"; }
    echo "$pport $slot" >"$DIR/primary"
    touch "$DATA/standby.signal"
    chown --reference="$DATA" "$DATA/standby.signal"
    launch
    write_env
}

# psql as superuser on the socket of another DIR's server
runuser_primary_psql() { # DIR PORT SQL
    local host=$1
    [ -d "$1/root/p2o" ] && host=$1/root/p2o
    psql -X -q -At -v ON_ERROR_STOP=1 -h "$host" -p "$2" -U postgres -d postgres -c "$3" >/dev/null
}

promote_pg() {
    running || p2o_die "no server running in $DIR"
    as_pg "$BIN/pg_ctl" promote -D "$SDATA" -w -t 60 -s >/dev/null 2>&1 </dev/null \
        || fail "pg_ctl promote failed"
}

stop_pg() { # mode
    local pid
    # a tree never copied has no server to stop
    [ -z "$ROOT" ] || [ -n "$PG_IDS" ] || return 0
    if [ ! -f "$DATA/postmaster.pid" ]; then
        # interrupted before the postmaster wrote its pid file
        pid=$(p2o_find_pid "bin/postgres -D $SDATA " "$ROOT") || return 0
        kill -INT "$pid" 2>/dev/null || true
        p2o_wait_gone "$pid" 60 || kill -KILL "$pid" 2>/dev/null || true
        return 0
    fi
    if running; then
        # a fast shutdown waits for each walsender's client to confirm
        # what was sent, which a stalled or stand-alone capture never
        # does: after 20 s a test server is simply stopped hard
        as_pg "$BIN/pg_ctl" stop -D "$SDATA" -m "$1" -w -t 20 -s >/dev/null 2>&1 </dev/null \
            || as_pg "$BIN/pg_ctl" stop -D "$SDATA" -m immediate -w -t 60 -s >/dev/null 2>&1 </dev/null \
            || fail "pg_ctl stop -m $1 failed"
    fi
    return 0
}

case $cmd in
    start) [ $# = 2 ] || usage; start_pg ;;
    stop) stop_pg fast ;;
    kill) stop_pg immediate ;;
    status) running ;;
    standby) [ $# = 4 ] || usage; standby_pg "$3" "$4" ;;
    promote) promote_pg ;;
    *) usage ;;
esac
