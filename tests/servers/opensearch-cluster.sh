#!/usr/bin/env bash
# A throw-away OpenSearch cluster of three nodes on 127.0.0.1, each an
# opensearch.sh node in a directory of its own (DIR/n1, DIR/n2, DIR/n3)
# that knows the others: every node holds data and may be elected cluster
# manager, as in a small production cluster.
#   opensearch-cluster.sh start DIR      start the three nodes (those not
#                                        running), wait until the cluster
#                                        has all three; writes DIR/env
#   opensearch-cluster.sh start DIR N    node N (1-3) again, same port and
#                                        data, once it has joined
#   opensearch-cluster.sh kill DIR N     SIGKILL node N (a crash), then wait
#   opensearch-cluster.sh stop DIR       stop every node (TERM, KILL after 20 s)
#   opensearch-cluster.sh status DIR     exit 0 when every node runs
# DIR/env exports OSC_URLS (the three urls, space-separated), OSC_URL1,
# OSC_URL2, OSC_URL3 and OSC_PORT1..3. Each node's heap is
# P2O_OS_JAVA_OPTS's, as for a single node; P2O_OS_VERSION picks the
# version the same way.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { p2o_die "usage: $p2o_prog start|stop|status DIR, or start|kill DIR N"; }
[ $# = 2 ] || [ $# = 3 ] || usage
cmd=$1
p2o_need_root
mkdir -p "$2"
DIR=$(p2o_abspath "$2")
N=3
# three JVMs starting at once on a busy machine take longer than one
export P2O_OS_START_TIMEOUT=${P2O_OS_START_TIMEOUT:-300}
node() { "$P2O_SERVERS_HOME/opensearch.sh" "$1" "$DIR/n$2"; }

# each node's ports, chosen once so that the nodes can name each other
# before any starts, and a restart comes back on the same ones
layout() {
    local i h t seeds='' managers=''
    for i in $(seq 1 $N); do
        mkdir -p "$DIR/n$i"
        if [ ! -f "$DIR/n$i/ports" ]; then
            h=$(p2o_free_port)
            t=$(p2o_free_port)
            while [ "$t" = "$h" ] || grep -qsw -e "$h" -e "$t" "$DIR"/n*/ports; do
                h=$(p2o_free_port)
                t=$(p2o_free_port)
            done
            echo "$h $t" >"$DIR/n$i/ports"
        fi
        read -r _ t <"$DIR/n$i/ports"
        seeds+=${seeds:+,}127.0.0.1:$t
        managers+=${managers:+,}p2o-n$i
    done
    for i in $(seq 1 $N); do
        printf 'NODE_NAME=p2o-n%s\nSEEDS=%s\nMANAGERS=%s\n' "$i" "$seeds" "$managers" >"$DIR/n$i/cluster"
    done
}

write_env() {
    local i h urls=''
    {
        for i in $(seq 1 $N); do
            read -r h _ <"$DIR/n$i/ports"
            urls+=${urls:+ }http://127.0.0.1:$h
            echo "export OSC_URL$i=http://127.0.0.1:$h"
            echo "export OSC_PORT$i=$h"
        done
        echo "export OSC_URLS='$urls'"
    } >"$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
}

start_all() {
    local i pids=() rc=0 h health
    layout
    for i in $(seq 1 $N); do
        if node status "$i"; then continue; fi
        node start "$i" &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i" || rc=1; done
    if [ "$rc" != 0 ]; then
        stop_all
        p2o_die "a node of the cluster did not start"
    fi
    read -r h _ <"$DIR/n1/ports"
    health=$(curl -s -m 130 "http://127.0.0.1:$h/_cluster/health?wait_for_nodes=$N&timeout=120s" || true)
    case $health in
        *"\"number_of_nodes\":$N,"*) ;;
        *)
            stop_all
            p2o_die "the cluster did not gather its $N nodes: $health"
            ;;
    esac
    write_env
    p2o_vlog "OpenSearch cluster of $N nodes up"
}

stop_all() {
    local i rc=0
    for i in $(seq 1 $N); do
        [ -d "$DIR/n$i" ] || continue
        node stop "$i" || rc=1
    done
    return $rc
}

case $cmd in
    start)
        if [ $# = 3 ]; then
            [ -f "$DIR/n$3/cluster" ] || usage
            node start "$3"
        else
            start_all
        fi
        ;;
    kill) [ $# = 3 ] && [ -f "$DIR/n$3/cluster" ] || usage; node kill "$3" ;;
    stop) [ $# = 2 ] || usage; stop_all ;;
    status)
        [ $# = 2 ] || usage
        for i in $(seq 1 $N); do node status "$i" || exit 1; done
        ;;
    *) usage ;;
esac
