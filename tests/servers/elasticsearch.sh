#!/usr/bin/env bash
# A throw-away single-node Elasticsearch 8 on 127.0.0.1: opensearch.sh's
# commands and layout, for the other engine (see opensearch.sh).
#   elasticsearch.sh start|stop|pause-stop|kill|pause|resume|status DIR
# DIR/env exports ES_URL, ES_PORT, ES_PID.
# Security is off unless DIR/certs/ holds ca.crt, node.crt and node.key
# when the node first starts: then it serves HTTPS with that certificate,
# x-pack security on, and a file-realm superuser p2o-admin whose password
# is DIR/admin-password (written by start, test-only; the env file names
# neither).
P2O_NODE_FLAVOR=elasticsearch exec "$(dirname "$0")/opensearch.sh" "$@"
