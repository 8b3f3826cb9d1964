#!/usr/bin/env bash
# The test servers are what the rest of the suite assumes: PostgreSQL with
# logical WAL, MariaDB with a full-row binlog, OpenSearch with the modules
# pg2osync relies on (reindex for _delete_by_query, parent-join, ingest-common).
. "$(dirname "$0")/../lib.sh"

ok $([ "$(psql_q -c 'show wal_level')" = logical ]; echo $?) "postgresql: wal_level = logical"
ok $(psql_q -c "select rolreplication from pg_roles where rolname = current_user" | grep -qx t; echo $?) "postgresql: test role has REPLICATION"
v=$(psql_q -c 'show server_version_num')
ok $([ "${v:0:2}" = 15 ]; echo $?) "postgresql 15 ($v)"

if [ -n "${MYSQL_TCP_PORT:-}" ]; then
	my() { mariadb -h 127.0.0.1 -P "$MYSQL_TCP_PORT" -u "$MYSQL_USER" -N -B -e "$1"; }
	ok $([ "$(my 'select @@binlog_format')" = ROW ]; echo $?) "mariadb: binlog_format = ROW"
	ok $([ "$(my 'select @@binlog_row_image')" = FULL ]; echo $?) "mariadb: binlog_row_image = FULL"
	ok $(my 'select version()' | grep -q '^10\.11'; echo $?) "mariadb 10.11 ($(my 'select version()'))"
else
	skip "mariadb not started"
fi

ver=$(os_get / | jq -r .version.number)
ok $([ "${ver%.*}" = 2.19 ]; echo $?) "opensearch 2.19 ($ver)"
plugins=$(os_get "/_nodes/plugins" | jq -r '.nodes[].modules[].name' | sort | tr '\n' ' ')
for m in reindex parent-join ingest-common; do
	echo " $plugins" | grep -q " $m "; ok $? "opensearch module $m loaded"
done
os_drop p2o_servers_t
curl -s -XPUT "$OS_URL/p2o_servers_t/_doc/1?refresh=true" -H 'content-type: application/json' -d '{"a":1}' >/dev/null
d=$(curl -s -XPOST "$OS_URL/p2o_servers_t/_delete_by_query?refresh=true" -H 'content-type: application/json' -d '{"query":{"match_all":{}}}' | jq -r .deleted)
ok $([ "$d" = 1 ]; echo $?) "_delete_by_query works"
os_drop p2o_servers_t
done_testing
