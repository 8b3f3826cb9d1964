#!/usr/bin/env bash
# A throw-away MySQL on 127.0.0.1: mariadb.sh, run for a MySQL server (the
# same commands, DIR layout and env variables).
#   mysql.sh start|stop|kill|status DIR
P2O_DB_FLAVOR=mysql exec "$(dirname "$0")/mariadb.sh" "$@"
