#!/usr/bin/env bash
# A throw-away MariaDB (Debian's 10.11) on 127.0.0.1 with a ROW binlog.
#   mariadb.sh start DIR    install-db on first use, else restart the same data on the same port; writes DIR/env
#   mariadb.sh stop DIR     TERM (clean shutdown), KILL after 60 s; idempotent
#   mariadb.sh kill DIR     SIGKILL (a crash: recovery on next start)
#   mariadb.sh status DIR   exit 0 when running
# With DIR/tls/server.crt, server.key and ca.crt (tests/servers/tls.sh),
# the server starts with TLS on (clients may still connect without, unless
# their account REQUIREs it); remove DIR/tls and start again for none.
# User p2o@127.0.0.1 and p2o@localhost, password $P2O_DB_PASSWORD (default
# p2o-secret-pw): ALL on p2o.*, REPLICATION SLAVE, REPLICATION CLIENT, SELECT on *.*.
# root@localhost authenticates through the socket in DIR (unix_socket, as OS root).
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
SOCK=$DIR/mysqld.sock
PIDF=$DIR/mariadbd.pid
LOG=$DIR/error.log

fail() {
    p2o_log_tail "$LOG" "$DIR/console.log"
    p2o_die "$*"
}

NEEDLE="--datadir=$DATA "
db_pid() { # echo the pid of the mariadbd of this DIR
    local pid=
    [ -f "$PIDF" ] && pid=$(cat "$PIDF" 2>/dev/null)
    if p2o_pid_matches "$pid" "$NEEDLE"; then
        echo "$pid"
        return 0
    fi
    # no (valid) pid file yet, e.g. interrupted during startup
    p2o_find_pid "$NEEDLE"
}

as_root_sql() { mariadb --no-defaults -uroot --socket="$SOCK" "$@"; }

start_db() {
    local port tries=0 fresh='' pid _ up
    command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || "$P2O_SERVERS_HOME/install.sh" mariadb
    id -u mysql >/dev/null 2>&1 || p2o_die "no mysql user (run install.sh mariadb)"
    if pid=$(db_pid); then p2o_die "MariaDB already running in $DIR (pid $pid)"; fi
    chown mysql: "$DIR"
    p2o_check_reachable mysql "$DIR"
    # temporary tables in a directory of this instance's own: in the shared
    # /tmp another instance's start-up was seen to remove one under a
    # bootstrap ("Error on delete of '/tmp/#sql-temptable-...'")
    mkdir -p "$DIR/tmp"
    chown mysql: "$DIR/tmp"
    if [ ! -d "$DATA/mysql" ]; then
        rm -rf "$DATA"
        mariadb-install-db --no-defaults --user=mysql --datadir="$DATA" \
            --auth-root-authentication-method=socket --skip-test-db \
            --tmpdir="$DIR/tmp" \
            >"$DIR/install-db.log" 2>&1 </dev/null \
            || { p2o_log_tail "$DIR/install-db.log"; p2o_die "mariadb-install-db failed"; }
        fresh=1
    fi
    while :; do
        if [ -f "$DIR/port" ]; then
            port=$(cat "$DIR/port")
        else
            port=$(p2o_free_port)
        fi
        rm -f "$PIDF"
        : >"$LOG"
        chown mysql: "$LOG"
        tls=()
        if [ -f "$DIR/tls/server.crt" ]; then
            chown -R mysql: "$DIR/tls"
            tls=(--ssl-ca="$DIR/tls/ca.crt" --ssl-cert="$DIR/tls/server.crt" --ssl-key="$DIR/tls/server.key")
        fi
        # setsid: own session, so a Ctrl-C in the caller's terminal does not reach it.
        setsid /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$DATA" \
            --bind-address=127.0.0.1 --port="$port" --socket="$SOCK" --pid-file="$PIDF" \
            --tmpdir="$DIR/tmp" \
            --log-error="$LOG" --skip-name-resolve \
            --log-bin="$DATA/binlog" --binlog-format=ROW --binlog-row-image=FULL \
            --server-id=1 --gtid-strict-mode=0 \
            --innodb-buffer-pool-size=128M --max-connections=200 "${tls[@]}" \
            >"$DIR/console.log" 2>&1 </dev/null &
        pid=$!
        up=
        for _ in $(seq 1 1200); do # 120 s
            if mariadb-admin --no-defaults -uroot --socket="$SOCK" --connect-timeout=2 ping >/dev/null 2>&1; then
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
        fail "MariaDB did not start"
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
    fi

    cat >"$DIR/env.tmp" <<EOF
export MYSQL_HOST=127.0.0.1
export MYSQL_TCP_PORT=$port
export MYSQL_USER=p2o
export MYSQL_PWD=$P2O_DB_PASSWORD
export MYSQL_DB=p2o
export MYSQL_URL=mysql://p2o@127.0.0.1:$port/p2o
export MYSQL_SOCKET=$SOCK
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
    p2o_wait_gone "$pid" 30 || p2o_die "mariadbd pid $pid did not exit"
    rm -f "$PIDF"
}

case $cmd in
    start) start_db ;;
    stop) stop_db TERM ;;
    kill) stop_db KILL ;;
    status) db_pid >/dev/null ;;
    *) usage ;;
esac
