#!/usr/bin/env bash
# A throw-away Jaeger (v2, an OpenTelemetry collector) on 127.0.0.1, spans
# kept in memory: the collector the traces tests read their spans back from.
#   jaeger.sh start DIR     start; writes DIR/env
#   jaeger.sh stop DIR      TERM, KILL after 20 s, wait
#   jaeger.sh status DIR    exit 0 when running
# The binary is the one install.sh built from the Go module proxy
# ($P2O_JAEGER_BIN, under ~/.cache/pg2osync/jaeger-<version>/), copied
# into DIR (root's home is closed to nobody). It runs as
# nobody with a configuration of its own (DIR/jaeger.yaml): OTLP over HTTP
# only, the query API, a health check, every port a free one on loopback
# and nothing else listening. DIR/env exports JAEGER_OTLP_URL (what
# traces.endpoint names), JAEGER_QUERY_URL (GET /api/traces, /api/services)
# and JAEGER_PID.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { p2o_die "usage: $p2o_prog start|stop|status DIR"; }
[ $# = 2 ] || usage
cmd=$1
p2o_need_root
mkdir -p "$2"
DIR=$(p2o_abspath "$2")
LOG=$DIR/jaeger.log
START_TIMEOUT=${P2O_JAEGER_START_TIMEOUT:-60}
NEEDLE="--config $DIR/jaeger.yaml"

jaeger_pid() {
    local pid=
    [ -f "$DIR/jaeger.pid" ] && pid=$(cat "$DIR/jaeger.pid" 2>/dev/null)
    if p2o_pid_matches "$pid" "$NEEDLE"; then
        echo "$pid"
        return 0
    fi
    pgrep -u nobody -f -- "$NEEDLE" | head -n 1 | grep .
}

stop_node() {
    local pid
    pid=$(jaeger_pid) || { rm -f "$DIR/jaeger.pid"; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    p2o_wait_gone "$pid" 20 || kill -KILL "$pid" 2>/dev/null || true
    p2o_wait_gone "$pid" 30 || p2o_die "Jaeger pid $pid did not exit"
    rm -f "$DIR/jaeger.pid"
}

start_node() {
    local t0=$SECONDS pid otlp query qgrpc health
    [ -x "$P2O_JAEGER_BIN" ] || "$P2O_SERVERS_HOME/install.sh" jaeger
    if pid=$(jaeger_pid); then
        p2o_die "Jaeger already running in $DIR (pid $pid)"
    fi
    otlp=$(p2o_free_port)
    query=$(p2o_free_port)
    qgrpc=$(p2o_free_port)
    health=$(p2o_free_port)
    cat >"$DIR/jaeger.yaml" <<EOF
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    enable_tracing: false
    http:
      endpoint: 127.0.0.1:$query
    grpc:
      endpoint: 127.0.0.1:$qgrpc
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:$health
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$otlp
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
EOF
    chmod 644 "$DIR/jaeger.yaml"
    # the cache is under root's home, which nobody cannot enter
    cp "$P2O_JAEGER_BIN" "$DIR/jaeger"
    chmod 755 "$DIR/jaeger"
    : >"$LOG"
    chown nobody "$LOG"
    rm -f "$DIR/jaeger.pid"
    setsid runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME=/tmp \
        "$DIR/jaeger" --config "$DIR/jaeger.yaml" >>"$LOG" 2>&1 </dev/null &
    pid=
    for _ in $(seq 1 $((START_TIMEOUT * 10))); do
        [ $((SECONDS - t0)) -ge "$START_TIMEOUT" ] && break
        pid=$(jaeger_pid) || pid=
        if [ -n "$pid" ] && curl -sf -m 2 "http://127.0.0.1:$query/api/services" >/dev/null 2>&1 \
            && curl -s -m 2 -o /dev/null "http://127.0.0.1:$otlp/v1/traces" 2>/dev/null; then
            echo "$pid" >"$DIR/jaeger.pid"
            break
        fi
        if [ -z "$pid" ] && [ $((SECONDS - t0)) -ge 3 ]; then
            p2o_log_tail "$LOG"
            p2o_die "Jaeger exited during startup"
        fi
        pid=
        sleep 0.1
    done
    [ -n "$pid" ] || { stop_node || true; p2o_log_tail "$LOG"; p2o_die "Jaeger not available within ${START_TIMEOUT}s"; }
    cat >"$DIR/env" <<EOF
export JAEGER_OTLP_URL=http://127.0.0.1:$otlp
export JAEGER_QUERY_URL=http://127.0.0.1:$query
export JAEGER_PID=$pid
EOF
    p2o_vlog "Jaeger up (OTLP $otlp, query $query) in $((SECONDS - t0)) s"
}

case $cmd in
    start) start_node ;;
    stop) stop_node ;;
    status) jaeger_pid >/dev/null ;;
    *) usage ;;
esac
