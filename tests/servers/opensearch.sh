#!/usr/bin/env bash
# A throw-away single-node OpenSearch on 127.0.0.1.
#   opensearch.sh start DIR       start (or restart on the same port and data); writes DIR/env
#   opensearch.sh stop DIR        TERM, KILL after 20 s, wait; keeps DIR so start resumes it
#   opensearch.sh pause-stop DIR  same as stop (the data and the port are kept for a later start)
#   opensearch.sh kill DIR        SIGKILL at once (crash), then wait
#   opensearch.sh pause DIR       SIGSTOP the node (unresponsive, port still open)
#   opensearch.sh resume DIR      SIGCONT after pause
#   opensearch.sh status DIR      exit 0 when running
# DIR layout: home/ (copy of the cached distribution), config/, data/, logs/,
# tmp/, ports, os.pid, console.log, env. A DIR holding a file cluster (as
# opensearch-cluster.sh writes it: NODE_NAME, SEEDS, MANAGERS) is a node of
# a cluster instead of a single node: named so, it finds the others at the
# SEEDS transport addresses, and a first start forms the cluster with them.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { p2o_die "usage: $p2o_prog start|stop|pause-stop|kill|pause|resume|status DIR"; }
[ $# = 2 ] || usage
cmd=$1
p2o_need_root
mkdir -p "$2"
DIR=$(p2o_abspath "$2")
START_TIMEOUT=${P2O_OS_START_TIMEOUT:-120}

# elasticsearch.sh runs this script for an Elasticsearch node: what differs
# is named here once
if [ "${P2O_NODE_FLAVOR:-opensearch}" = elasticsearch ]; then
    ENGINE=Elasticsearch PROP=es VARS=ES LOG=p2o-cluster.log
    MODULES='' # none of them is published for 8.x: tests needing one skip
else
    ENGINE=OpenSearch PROP=opensearch VARS=OS LOG=opensearch.log
    MODULES='reindex parent-join ingest-common lang-painless'
fi
NEEDLE="-D$PROP.path.home=$DIR/home "
os_pid() { # echo the pid of a running node of this DIR
    local pid=
    [ -f "$DIR/os.pid" ] && pid=$(cat "$DIR/os.pid" 2>/dev/null)
    if p2o_pid_matches "$pid" "$NEEDLE"; then
        echo "$pid"
        return 0
    fi
    # no (valid) pid file yet, e.g. interrupted during startup
    p2o_find_pid "$NEEDLE"
}

fail() {
    # Ports picked just now and taken meanwhile by another process: pick again (twice at most).
    if [ -n "${fresh_ports:-}" ] && [ "${P2O_OS_BIND_RETRY:-0}" -lt 2 ] \
        && grep -qs 'Bind[A-Za-z]*Exception' "$DIR/console.log" "$DIR/logs/$LOG" \
        && ! os_pid >/dev/null; then
        rm -f "$DIR/ports"
        P2O_OS_BIND_RETRY=$((${P2O_OS_BIND_RETRY:-0} + 1)) exec "$0" start "$DIR"
    fi
    p2o_log_tail "$DIR/console.log" "$DIR/logs/$LOG"
    p2o_die "$*"
}

stop_node() { # signal-wait
    local pid
    pid=$(os_pid) || { rm -f "$DIR/os.pid"; return 0; }
    kill -CONT "$pid" 2>/dev/null || true
    if [ "$1" = KILL ]; then
        kill -KILL "$pid" 2>/dev/null || true
    else
        kill -TERM "$pid" 2>/dev/null || true
        if ! p2o_wait_gone "$pid" 20; then
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    p2o_wait_gone "$pid" 30 || p2o_die "$ENGINE pid $pid did not exit"
    rm -f "$DIR/os.pid"
}

start_node() {
    local t0=$SECONDS pid http_port transport_port dist java_home health
    local scheme=http curlauth=() settings=()
    if pid=$(os_pid); then
        p2o_die "$ENGINE already running in $DIR (pid $pid)"
    fi
    if [ "$ENGINE" = Elasticsearch ]; then
        dist=$(p2o_es_dist) || {
            "$P2O_SERVERS_HOME/install.sh" elasticsearch
            dist=$(p2o_es_dist) || p2o_die "no Elasticsearch distribution in $P2O_CACHE"
        }
    else
        dist=$(p2o_os_dist) || {
            "$P2O_SERVERS_HOME/install.sh" opensearch
            dist=$(p2o_os_dist) || p2o_die "no OpenSearch distribution in $P2O_CACHE"
        }
    fi
    id -u "$P2O_OS_USER" >/dev/null 2>&1 || "$P2O_SERVERS_HOME/install.sh" opensearch
    java_home=$(p2o_java17_home) || p2o_die "no Java 17 under /usr/lib/jvm (run install.sh opensearch)"
    # Elasticsearch 9 and OpenSearch 3 need Java 21 or later, which Debian
    # bookworm does not package: install.sh puts a JDK where the
    # distribution keeps its own
    [ -x "$dist/jdk/bin/java" ] && java_home=$DIR/home/jdk

    # Ports are chosen once per DIR so that a restart comes back on the same ones.
    if [ -f "$DIR/ports" ]; then
        read -r http_port transport_port <"$DIR/ports"
    else
        http_port=$(p2o_free_port)
        transport_port=$(p2o_free_port)
        while [ "$transport_port" = "$http_port" ]; do transport_port=$(p2o_free_port); done
        echo "$http_port $transport_port" >"$DIR/ports"
        fresh_ports=1
    fi

    # Per-instance copy of the distribution (the cache may sit under a
    # directory the service user cannot enter, e.g. /root) and of config/.
    if [ ! -f "$DIR/home/.p2o-ready" ]; then
        rm -rf "${DIR:?}/home"
        cp -al "$dist" "$DIR/home" 2>/dev/null || { rm -rf "${DIR:?}/home" && cp -a "$dist" "$DIR/home"; }
    fi
    if [ ! -d "$DIR/config" ]; then
        cp -a "$dist/config" "$DIR/config.tmp"
        sed -i -e "s#logs/#$DIR/logs/#g" -e "s#HeapDumpPath=data#HeapDumpPath=$DIR/data#" -e "s#file=gc.log#file=$DIR/logs/gc.log#" \
            "$DIR/config.tmp/jvm.options"
        mv "$DIR/config.tmp" "$DIR/config"
    fi
    mkdir -p "$DIR/data" "$DIR/logs" "$DIR/tmp"
    if [ "$ENGINE" = Elasticsearch ]; then
        if [ -f "$DIR/certs/node.key" ]; then
            # secured: HTTPS with the caller's certificate, users in the file realm
            [ -d "$DIR/config/certs" ] || cp -a "$DIR/certs" "$DIR/config/certs"
            [ -s "$DIR/admin-password" ] || head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$DIR/admin-password"
            chmod 600 "$DIR/admin-password"
            scheme=https
            curlauth=(--cacert "$DIR/certs/ca.crt" -u "p2o-admin:$(cat "$DIR/admin-password")")
            settings=(-Expack.security.enabled=true -Expack.security.http.ssl.enabled=true
                -Expack.security.http.ssl.certificate=certs/node.crt
                -Expack.security.http.ssl.key=certs/node.key
                -Expack.security.http.ssl.certificate_authorities=certs/ca.crt
                -Expack.security.transport.ssl.enabled=false
                -Expack.security.authc.api_key.enabled=true)
        else
            settings=(-Expack.security.enabled=false)
        fi
    fi
    chown "$P2O_OS_USER:" "$DIR"
    chown -R "$P2O_OS_USER:" "$DIR/config" "$DIR/data" "$DIR/logs" "$DIR/tmp"
    if [ "$scheme" = https ] && [ ! -f "$DIR/config/.p2o-users" ]; then
        # the tool takes the password only as -p: a test-only password of a
        # throw-away node, on the argv of a tool that runs once
        runuser -u "$P2O_OS_USER" -- env -i PATH=/usr/bin:/bin ES_JAVA_HOME="$java_home" \
            ES_PATH_CONF="$DIR/config" "$DIR/home/bin/elasticsearch-users" useradd p2o-admin \
            -p "$(cat "$DIR/admin-password")" -r superuser >>"$DIR/console.log" 2>&1 \
            || fail "elasticsearch-users useradd failed"
        touch "$DIR/config/.p2o-users"
    fi
    p2o_check_reachable "$P2O_OS_USER" "$DIR"
    rm -f "$DIR/os.pid"
    : >"$DIR/console.log"
    chown "$P2O_OS_USER:" "$DIR/console.log"

    local node_name=p2o-node discovery=(-Ediscovery.type=single-node)
    if [ -f "$DIR/cluster" ]; then
        local NODE_NAME SEEDS MANAGERS
        . "$DIR/cluster"
        node_name=$NODE_NAME
        discovery=(-Ediscovery.seed_hosts="$SEEDS" -Ecluster.initial_cluster_manager_nodes="$MANAGERS"
            -Ecluster.name=p2o-os-cluster)
    fi

    # setsid: own session, so a Ctrl-C in the caller's terminal does not reach it.
    local envs=(JAVA_HOME="$java_home" OPENSEARCH_PATH_CONF="$DIR/config" OPENSEARCH_TMPDIR="$DIR/tmp"
        OPENSEARCH_JAVA_OPTS="${P2O_OS_JAVA_OPTS:--Xms512m -Xmx512m}")
    local bin=$DIR/home/bin/opensearch
    if [ "$ENGINE" = Elasticsearch ]; then
        envs=(ES_JAVA_HOME="$java_home" ES_PATH_CONF="$DIR/config" ES_TMPDIR="$DIR/tmp"
            ES_JAVA_OPTS="${P2O_OS_JAVA_OPTS:--Xms512m -Xmx512m}")
        bin=$DIR/home/bin/elasticsearch
        settings+=(-Ecluster.name=p2o-cluster)
    fi
    setsid runuser -u "$P2O_OS_USER" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "${envs[@]}" \
        "$bin" -d -p "$DIR/os.pid" "${settings[@]}" \
        -Enode.name="$node_name" \
        "${discovery[@]}" -Enetwork.host=127.0.0.1 \
        -Ehttp.port="$http_port" -Etransport.port="$transport_port" \
        -Epath.data="$DIR/data" -Epath.logs="$DIR/logs" \
        -Ecluster.routing.allocation.disk.threshold_enabled=false \
        >>"$DIR/console.log" 2>&1 </dev/null \
        || fail "$bin failed to launch"

    # bin/opensearch -d returns once the JVM runs: find it to notice an early death.
    pid=$(p2o_find_pid "$NEEDLE") || fail "$ENGINE exited during startup"
    health=
    for _ in $(seq 1 $((START_TIMEOUT * 2))); do
        if [ $((SECONDS - t0)) -ge "$START_TIMEOUT" ]; then break; fi
        p2o_pid_matches "$pid" "$NEEDLE" || fail "$ENGINE exited during startup"
        health=$(curl -s -m 5 "${curlauth[@]}" "$scheme://127.0.0.1:$http_port/_cluster/health?wait_for_status=yellow&timeout=2s" 2>/dev/null || true)
        case $health in
            *'"status":"green"'* | *'"status":"yellow"'*) break ;;
        esac
        health=
        sleep 0.5
    done
    if [ -z "$health" ]; then
        stop_node TERM || true
        fail "$ENGINE not healthy within ${START_TIMEOUT}s on port $http_port"
    fi
    pid=$(os_pid) || fail "$ENGINE pid file missing"

    # The modules the project relies on must have loaded.
    local mods
    mods=$(curl -s -m 10 "${curlauth[@]}" "$scheme://127.0.0.1:$http_port/_nodes/_local/plugins?filter_path=nodes.*.modules.name" || true)
    for m in $MODULES; do
        case $mods in
            *"\"$m\""*) ;;
            *)
                stop_node TERM || true
                fail "module $m not loaded (got: $mods)"
                ;;
        esac
    done

    cat >"$DIR/env.tmp" <<EOF
export ${VARS}_URL=$scheme://127.0.0.1:$http_port
export ${VARS}_PORT=$http_port
export ${VARS}_PID=$pid
EOF
    mv "$DIR/env.tmp" "$DIR/env"
    p2o_vlog "$ENGINE up on port $http_port in $((SECONDS - t0)) s"
}

case $cmd in
    start) start_node ;;
    stop | pause-stop) stop_node TERM ;;
    kill) stop_node KILL ;;
    pause) pid=$(os_pid) || p2o_die "not running"; kill -STOP "$pid" ;;
    resume) pid=$(os_pid) || p2o_die "not running"; kill -CONT "$pid" ;;
    status) os_pid >/dev/null ;;
    *) usage ;;
esac
