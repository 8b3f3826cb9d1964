#!/usr/bin/env bash
# A throw-away MariaDB on 127.0.0.1 with a ROW binlog: bookworm's 10.11, or
# 11.8 from a tree of a later suite (tree-lib.sh) chosen by
# P2O_MARIADB_VERSION; DIR keeps the version it was made with. mysql.sh
# runs this script for a MySQL server (9.7, from a tree; P2O_MYSQL_VERSION),
# with GTIDs on (gtid_mode, enforce_gtid_consistency), its X plugin off and
# no secure_file_priv; what differs is named once below.
#   mariadb.sh start DIR    install-db on first use, else restart the same data on the same port; writes DIR/env
#   mariadb.sh stop DIR     TERM (clean shutdown), KILL after 60 s; idempotent
#   mariadb.sh kill DIR     SIGKILL (a crash: recovery on next start)
#   mariadb.sh status DIR   exit 0 when running
# With DIR/tls/server.crt, server.key and ca.crt (tests/servers/tls.sh),
# the server starts with TLS on (clients may still connect without, unless
# their account REQUIREs it); remove DIR/tls and start again for none.
# User p2o@127.0.0.1 and p2o@localhost, password $P2O_DB_PASSWORD (default
# p2o-secret-pw): ALL on p2o.*, REPLICATION SLAVE, REPLICATION CLIENT, SELECT on *.*.
# root@localhost authenticates through the socket in DIR (MariaDB: unix_socket,
# as OS root; MySQL: with the same password as p2o, on the socket only).
# Replication: server id P2O_MYSQL_SERVER_ID (default 1; DIR keeps it),
# log_slave_updates on, so a replica's binlog holds what it applies.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { p2o_die "usage: $p2o_prog start|stop|kill|status DIR"; }
[ $# = 2 ] || usage
cmd=$1
p2o_need_root
mkdir -p "$2"
DIR=$(p2o_abspath "$2")
if [ "${P2O_DB_FLAVOR:-mariadb}" = mysql ]; then
    FLAVOR=mysql ENGINE=MySQL DAEMON=mysqld
    VERSION=${P2O_MYSQL_VERSION:-$(p2o_tree_versions mysql | awk '{ print $NF }')}
else
    FLAVOR=mariadb ENGINE=MariaDB DAEMON=mariadbd
    VERSION=${P2O_MARIADB_VERSION:-$P2O_MARIADB_HOST_VERSION}
fi
[ -f "$DIR/.p2o-server" ] || echo "$FLAVOR.sh" >"$DIR/.p2o-server"
[ ! -f "$DIR/version" ] || VERSION=$(cat "$DIR/version")
if [ "$FLAVOR" = mariadb ] && [ "$VERSION" = "$P2O_MARIADB_HOST_VERSION" ]; then
    # bookworm's own: the instance's files are DIR itself
    ROOT='' IN=$DIR HOST=$DIR
    in_root() { "$@"; }
else
    # a tree's: its files are /p2o in DIR's copy of the tree
    p2o_tree_row "$FLAVOR" "$VERSION" || p2o_die "no $ENGINE $VERSION (trees: $(p2o_tree_versions "$FLAVOR"); bookworm's MariaDB $P2O_MARIADB_HOST_VERSION)"
    ROOT=$DIR/root IN=/p2o HOST=$DIR/root/p2o
    in_root() { chroot "$ROOT" "$@"; }
fi
DATA=$HOST/data
SDATA=$IN/data
SOCK=$HOST/mysqld.sock
PIDF=$HOST/$DAEMON.pid
LOG=$HOST/error.log

fail() {
    p2o_log_tail "$LOG" "$DIR/console.log"
    p2o_die "$*"
}

NEEDLE="--datadir=$SDATA "
db_pid() { # echo the pid of the server of this DIR
    local pid=
    [ -f "$PIDF" ] && pid=$(cat "$PIDF" 2>/dev/null)
    if p2o_pid_matches "$pid" "$NEEDLE" "$ROOT"; then
        echo "$pid"
        return 0
    fi
    # no (valid) pid file yet, e.g. interrupted during startup
    p2o_find_pid "$NEEDLE" "$ROOT"
}

# root on the socket: MariaDB's by unix_socket (any password is ignored),
# MySQL's by the test password (none until the setup gives it one); the
# caller's MYSQL_HOST would send the client over TCP
root_pw() { [ "$FLAVOR" = mariadb ] || [ ! -f "$DIR/root-pw" ] || echo "$P2O_DB_PASSWORD"; }
as_root_sql() { env -u MYSQL_HOST MYSQL_PWD="$(root_pw)" mariadb --no-defaults -uroot --socket="$SOCK" "$@"; }

start_db() {
    local port tries=0 fresh='' pid _ up server_id
    if pid=$(db_pid); then p2o_die "$ENGINE already running in $DIR (pid $pid)"; fi
    if [ -z "$ROOT" ]; then
        command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || "$P2O_SERVERS_HOME/install.sh" mariadb
        id -u mysql >/dev/null 2>&1 || p2o_die "no mysql user (run install.sh mariadb)"
        chown mysql: "$DIR"
        p2o_check_reachable mysql "$DIR"
    else
        command -v mariadb >/dev/null || "$P2O_SERVERS_HOME/install.sh" "$FLAVOR=$VERSION"
        p2o_tree_copy "$FLAVOR" "$VERSION" "$DIR"
        in_root chown mysql: "$IN"
    fi
    echo "$VERSION" >"$DIR/version"
    [ -f "$DIR/server-id" ] || echo "${P2O_MYSQL_SERVER_ID:-1}" >"$DIR/server-id"
    server_id=$(cat "$DIR/server-id")
    # temporary tables in a directory of this instance's own: in the shared
    # /tmp another instance's start-up was seen to remove one under a
    # bootstrap ("Error on delete of '/tmp/#sql-temptable-...'")
    mkdir -p "$HOST/tmp"
    in_root chown mysql: "$IN/tmp"
    if [ ! -d "$DATA/mysql" ]; then
        rm -rf "$DATA"
        if [ "$FLAVOR" = mysql ]; then
            # root@localhost without a password: only the socket reaches it
            in_root mysqld --no-defaults --initialize-insecure --user=mysql --datadir="$SDATA" \
                --tmpdir="$IN/tmp" --log-error="$IN/install-db.log" >"$DIR/install-db.log" 2>&1 </dev/null \
                || { p2o_log_tail "$DIR/install-db.log" "$HOST/install-db.log"; p2o_die "mysqld --initialize failed"; }
        else
            in_root mariadb-install-db --no-defaults --user=mysql --datadir="$SDATA" \
                --auth-root-authentication-method=socket --skip-test-db \
                --tmpdir="$IN/tmp" \
                >"$DIR/install-db.log" 2>&1 </dev/null \
                || { p2o_log_tail "$DIR/install-db.log"; p2o_die "mariadb-install-db failed"; }
        fi
        fresh=1
    fi
    if [ "$FLAVOR" = mysql ]; then
        flavor_opts=(--mysqlx=OFF --secure-file-priv= --gtid-mode=ON --enforce-gtid-consistency=ON)
    else
        flavor_opts=(--gtid-strict-mode=0 --binlog-format=ROW)
    fi
    while :; do
        if [ -f "$DIR/port" ]; then
            port=$(cat "$DIR/port")
        else
            port=$(p2o_free_port)
        fi
        rm -f "$PIDF"
        : >"$LOG"
        in_root chown mysql: "$IN/error.log"
        tls=()
        if [ -f "$DIR/tls/server.crt" ]; then
            # in a tree the server reads its copy
            [ -z "$ROOT" ] || { rm -rf "$HOST/tls"; cp -r "$DIR/tls" "$HOST/tls"; }
            in_root chown -R mysql: "$IN/tls"
            tls=(--ssl-ca="$IN/tls/ca.crt" --ssl-cert="$IN/tls/server.crt" --ssl-key="$IN/tls/server.key")
        fi
        # setsid: own session, so a Ctrl-C in the caller's terminal does not reach it.
        launcher=()
        [ -z "$ROOT" ] || launcher=(chroot "$ROOT")
        setsid "${launcher[@]}" "/usr/sbin/$DAEMON" --no-defaults --user=mysql --datadir="$SDATA" \
            --bind-address=127.0.0.1 --port="$port" --socket="$IN/mysqld.sock" --pid-file="$IN/$DAEMON.pid" \
            --tmpdir="$IN/tmp" \
            --log-error="$IN/error.log" --skip-name-resolve \
            --log-bin="$SDATA/binlog" --binlog-row-image=FULL \
            --server-id="$server_id" --log-slave-updates "${flavor_opts[@]}" \
            --innodb-buffer-pool-size=128M --max-connections=200 "${tls[@]}" \
            >"$DIR/console.log" 2>&1 </dev/null &
        pid=$!
        up=
        for _ in $(seq 1 1200); do # 120 s
            if env -u MYSQL_HOST MYSQL_PWD="$(root_pw)" mariadb-admin --no-defaults -uroot --socket="$SOCK" \
                --connect-timeout=2 ping >/dev/null 2>&1; then
                up=1
                break
            fi
            if ! kill -0 "$pid" 2>/dev/null; then
                break
            fi
            sleep 0.1
        done
        if [ -n "$up" ] && pid=$(db_pid); then
            echo "$port" >"$DIR/port"
            break
        fi
        tries=$((tries + 1))
        if [ ! -f "$DIR/port" ] && [ $tries -lt 5 ] && grep -q 'Address already in use\|Do you already have another' "$LOG"; then
            continue
        fi
        fail "$ENGINE $VERSION did not start"
    done

    if [ -n "$fresh" ]; then
        as_root_sql -v >"$DIR/setup.log" 2>&1 <<EOF || fail "creating user/database failed: $(cat "$DIR/setup.log")"
CREATE DATABASE IF NOT EXISTS p2o;
CREATE USER 'p2o'@'127.0.0.1' IDENTIFIED BY '$P2O_DB_PASSWORD';
CREATE USER 'p2o'@'localhost' IDENTIFIED BY '$P2O_DB_PASSWORD';
GRANT ALL ON p2o.* TO 'p2o'@'127.0.0.1';
GRANT ALL ON p2o.* TO 'p2o'@'localhost';
GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO 'p2o'@'127.0.0.1';
GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO 'p2o'@'localhost';
FLUSH PRIVILEGES;
EOF
        if [ "$FLAVOR" = mysql ]; then
            as_root_sql -e "ALTER USER 'root'@'localhost' IDENTIFIED BY '$P2O_DB_PASSWORD'" >>"$DIR/setup.log" 2>&1 \
                || fail "giving root a password failed: $(cat "$DIR/setup.log")"
            touch "$DIR/root-pw"
        fi
    fi

    cat >"$DIR/env.tmp" <<EOF
export MYSQL_HOST=127.0.0.1
export MYSQL_TCP_PORT=$port
export MYSQL_USER=p2o
export MYSQL_PWD=$P2O_DB_PASSWORD
export MYSQL_DB=p2o
export MYSQL_URL=mysql://p2o@127.0.0.1:$port/p2o
export MYSQL_SOCKET=$SOCK
export MYSQL_SERVER=$FLAVOR
export P2O_${FLAVOR^^}_VERSION=$VERSION
EOF
    mv "$DIR/env.tmp" "$DIR/env"
}

stop_db() { # TERM|KILL
    local pid
    pid=$(db_pid) || return 0
    kill -CONT "$pid" 2>/dev/null || true
    if [ "$1" = KILL ]; then
        kill -KILL "$pid" 2>/dev/null || true
    else
        kill -TERM "$pid" 2>/dev/null || true
        p2o_wait_gone "$pid" 60 || kill -KILL "$pid" 2>/dev/null || true
    fi
    p2o_wait_gone "$pid" 30 || p2o_die "$DAEMON pid $pid did not exit"
    rm -f "$PIDF"
}

case $cmd in
    start) start_db ;;
    stop) stop_db TERM ;;
    kill) stop_db KILL ;;
    status) db_pid >/dev/null ;;
    *) usage ;;
esac
