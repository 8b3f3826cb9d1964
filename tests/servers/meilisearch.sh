#!/usr/bin/env bash
# A throw-away Meilisearch 1.x on 127.0.0.1, with a master key.
#   meilisearch.sh start DIR     start (or restart on the same port, key and data); writes DIR/env
#   meilisearch.sh stop DIR      TERM, KILL after 20 s, wait; keeps DIR so start resumes it
#   meilisearch.sh kill DIR      SIGKILL at once (a crash), then wait
#   meilisearch.sh status DIR    exit 0 when running
# The server is the binary P2O_MEILI_BIN names (default: the one beside the
# checkout, ../shared/tools/meilisearch/meilisearch; no registry ships it for
# these machines). It runs as the service user p2o-meili, its data in
# DIR/data, its log in DIR/meili.log. The master key is made once per DIR
# (DIR/master-key, 0600) and handed over in the environment
# (MEILI_MASTER_KEY), never on an argv; DIR/env exports it for the tests,
# beside MEILI_URL, MEILI_PORT and MEILI_PID.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { p2o_die "usage: $p2o_prog start|stop|kill|status DIR"; }
[ $# = 2 ] || usage
cmd=$1
p2o_need_root
mkdir -p "$2"
DIR=$(p2o_abspath "$2")
LOG=$DIR/meili.log
START_TIMEOUT=${P2O_MEILI_START_TIMEOUT:-60}
NEEDLE="--db-path $DIR/data "

# the server itself, not runuser above it (whose argv holds the same words)
find_server() { pgrep -u "$P2O_MEILI_USER" -f -- "$NEEDLE" | head -n 1 | grep .; }
meili_pid() { # echo the pid of the running server of this DIR
    local pid=
    [ -f "$DIR/meili.pid" ] && pid=$(cat "$DIR/meili.pid" 2>/dev/null)
    if p2o_pid_matches "$pid" "$NEEDLE"; then
        echo "$pid"
        return 0
    fi
    find_server
}

fail() {
    p2o_log_tail "$LOG"
    p2o_die "$*"
}

stop_node() { # signal
    local pid
    pid=$(meili_pid) || { rm -f "$DIR/meili.pid"; return 0; }
    if [ "$1" = KILL ]; then
        kill -KILL "$pid" 2>/dev/null || true
    else
        kill -TERM "$pid" 2>/dev/null || true
        p2o_wait_gone "$pid" 20 || kill -KILL "$pid" 2>/dev/null || true
    fi
    p2o_wait_gone "$pid" 30 || p2o_die "Meilisearch pid $pid did not exit"
    rm -f "$DIR/meili.pid"
}

start_node() {
    local t0=$SECONDS bin pid port key
    bin=$(p2o_meili_bin) || p2o_die "no Meilisearch server at '$P2O_MEILI_BIN' (set P2O_MEILI_BIN)"
    if pid=$(meili_pid); then
        p2o_die "Meilisearch already running in $DIR (pid $pid)"
    fi
    id -u "$P2O_MEILI_USER" >/dev/null 2>&1 || "$P2O_SERVERS_HOME/install.sh" meilisearch
    # the port and the key are chosen once per DIR: a restart comes back
    # on the same ones, as a real server would
    if [ -f "$DIR/port" ]; then
        port=$(cat "$DIR/port")
    else
        port=$(p2o_free_port)
        echo "$port" >"$DIR/port"
    fi
    if [ ! -s "$DIR/master-key" ]; then
        (umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$DIR/master-key")
    fi
    key=$(cat "$DIR/master-key")
    mkdir -p "$DIR/data" "$DIR/dumps" "$DIR/snapshots"
    chown "$P2O_MEILI_USER:" "$DIR/data" "$DIR/dumps" "$DIR/snapshots"
    p2o_check_reachable "$P2O_MEILI_USER" "$DIR/data"
    : >"$LOG"
    chown "$P2O_MEILI_USER:" "$LOG"
    rm -f "$DIR/meili.pid"
    # setsid: own session, so a Ctrl-C in the caller's terminal does not
    # reach it; the key in its environment only
    setsid runuser -u "$P2O_MEILI_USER" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
        MEILI_MASTER_KEY="$key" MEILI_NO_ANALYTICS=true \
        "$bin" --db-path "$DIR/data" --http-addr "127.0.0.1:$port" \
        --dump-dir "$DIR/dumps" --snapshot-dir "$DIR/snapshots" \
        --env development --log-level "${P2O_MEILI_LOG_LEVEL:-WARN}" \
        >>"$LOG" 2>&1 </dev/null &
    for _ in $(seq 1 $((START_TIMEOUT * 10))); do
        [ $((SECONDS - t0)) -ge "$START_TIMEOUT" ] && break
        pid=$(find_server) || pid=
        if [ -n "$pid" ] && curl -sf -m 2 "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
            echo "$pid" >"$DIR/meili.pid"
            break
        fi
        if [ -z "$pid" ] && [ $((SECONDS - t0)) -ge 2 ]; then
            # a port taken meanwhile by another process: pick again, once
            if grep -qs 'Address already in use' "$LOG" && [ "${P2O_MEILI_BIND_RETRY:-0}" = 0 ]; then
                rm -f "$DIR/port"
                P2O_MEILI_BIND_RETRY=1 exec "$0" start "$DIR"
            fi
            fail "Meilisearch exited during startup"
        fi
        pid=
        sleep 0.1
    done
    [ -n "$pid" ] || { stop_node TERM || true; fail "Meilisearch not available within ${START_TIMEOUT}s on port $port"; }
    cat >"$DIR/env.tmp" <<EOF
export MEILI_URL=http://127.0.0.1:$port
export MEILI_PORT=$port
export MEILI_PID=$pid
export MEILI_MASTER_KEY=$key
EOF
    chmod 600 "$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
    p2o_vlog "Meilisearch up on port $port in $((SECONDS - t0)) s"
}

case $cmd in
    start) start_node ;;
    stop) stop_node TERM ;;
    kill) stop_node KILL ;;
    status) meili_pid >/dev/null ;;
    *) usage ;;
esac
