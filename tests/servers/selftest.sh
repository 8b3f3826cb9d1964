#!/usr/bin/env bash
# Smoke test of the servers started by run-with.sh: checks each server whose
# variables are set. Example:
#   tests/servers/run-with.sh --pg --mariadb --os --meili -- tests/servers/selftest.sh
set -eu
pass=0 fail=0
check() { # name command...
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: $out" >&2
    fi
}
json() { # method path [body]
    curl -sS -f -m 60 -X "$1" "$OS_URL$2" -H 'content-type: application/json' ${3:+-d "$3"}
}
has() { # needle command...
    local needle=$1 out
    shift
    out=$("$@") || return 1
    case $out in *"$needle"*) return 0 ;; esac
    echo "$out"
    return 1
}

if [ -n "${PG_URL:-}" ]; then
    check pg-select has 1 psql "$PG_URL" -XAtc 'select 1'
    check pg-wal-level has logical psql "$PG_URL" -XAtc 'show wal_level'
    check pg-replication has "|p2o" psql "$PG_URL?replication=database" -XAtc 'IDENTIFY_SYSTEM'
    check pg-slot has p2o_selftest psql "$PG_URL" -XAtc \
        "select slot_name from pg_create_logical_replication_slot('p2o_selftest','pgoutput'); select pg_drop_replication_slot('p2o_selftest')"
fi

if [ -n "${MYSQL_TCP_PORT:-}" ]; then
    check mariadb-binlog has binlog mariadb -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" -N -e 'show master status'
    check mariadb-format has ROW mariadb -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" -N -e 'select @@binlog_format'
    check mariadb-db has 1 mariadb -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" "$MYSQL_DB" -N \
        -e 'create table if not exists selftest(id int primary key); replace into selftest values (1); select count(*) from selftest'
fi

if [ -n "${OS_URL:-}" ]; then
    for m in reindex parent-join ingest-common lang-painless; do
        check "os-module-$m" has "\"$m\"" json GET '/_nodes/plugins?filter_path=nodes.*.modules.name'
    done
    check os-join-mapping has '"acknowledged":true' json PUT /p2o-selftest \
        '{"mappings":{"properties":{"rel":{"type":"join","relations":{"parent":"child"}},"k":{"type":"keyword"}}}}'
    check os-pipeline has '"acknowledged":true' json PUT /_ingest/pipeline/p2o-selftest \
        '{"processors":[{"set":{"field":"tagged","value":"yes"}},{"set":{"field":"copy","value":"{{k}}"}}]}'
    check os-index-1 has '"result":"created"' json PUT '/p2o-selftest/_doc/1?pipeline=p2o-selftest&refresh=true' '{"k":"a","rel":"parent"}'
    check os-index-2 has '"result":"created"' json PUT '/p2o-selftest/_doc/2?pipeline=p2o-selftest&refresh=true' '{"k":"b","rel":"parent"}'
    check os-pipeline-set has '"tagged":"yes"' json GET '/p2o-selftest/_source/1'
    check os-pipeline-template has '"copy":"a"' json GET '/p2o-selftest/_source/1'
    check os-delete-by-query has '"deleted":1' json POST '/p2o-selftest/_delete_by_query?refresh=true' '{"query":{"term":{"k":"b"}}}'
    check os-count has '"count":1' json GET /p2o-selftest/_count
    check os-cleanup has '"acknowledged":true' json DELETE /p2o-selftest
    check os-pipeline-cleanup has '"acknowledged":true' json DELETE /_ingest/pipeline/p2o-selftest
fi

if [ -n "${MEILI_URL:-}" ]; then
    # the key from a curl config file, on no argv
    mcfg=$(mktemp)
    trap 'rm -f "$mcfg"' EXIT
    printf 'header = "Authorization: Bearer %s"\n' "$MEILI_MASTER_KEY" >"$mcfg"
    meili() { # method path [body]
        curl -sS -f -m 60 -K "$mcfg" -X "$1" "$MEILI_URL$2" -H 'content-type: application/json' ${3:+-d "$3"}
    }
    meili_task() { # method path [body]: the request's task waited for
        local uid st i
        uid=$(meili "$@" | sed -n 's/.*"taskUid":\([0-9]*\).*/\1/p')
        [ -n "$uid" ] || return 1
        for i in $(seq 1 300); do
            st=$(meili GET "/tasks/$uid")
            case $st in *'"status":"succeeded"'*) return 0 ;; *'"status":"failed"'*) echo "$st"; return 1 ;; esac
            sleep 0.1
        done
        echo "task $uid still not done: $st"
        return 1
    }
    check meili-version has '"pkgVersion":"1.' meili GET /version
    check meili-key-needed has 401 curl -s -o /dev/null -w '%{http_code}' "$MEILI_URL/version"
    check meili-add meili_task POST '/indexes/p2o-selftest/documents?primaryKey=k' '[{"k":"a","v":1},{"k":"b","v":2}]'
    check meili-delete meili_task POST /indexes/p2o-selftest/documents/delete-batch '["b"]'
    check meili-fetch has '"total":1' meili POST /indexes/p2o-selftest/documents/fetch '{"limit":10}'
    check meili-cleanup meili_task DELETE /indexes/p2o-selftest
fi

echo "selftest: $pass passed, $fail failed"
[ "$fail" = 0 ]
