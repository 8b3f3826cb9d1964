#!/usr/bin/env bash
# A row filter on boolean columns, MariaDB: BOOLEAN is tinyint(1) and
# arrives as a number, and TRUE and FALSE are 1 and 0 there, so `active =
# true AND tenant <> 'hidden'` and `deleted = false OR deleted IS NULL`
# select, from the initial load and from the stream alike, exactly the
# rows MariaDB itself selects with that WHERE: a tinyint(1) holding 2 is
# neither TRUE nor FALSE on either path. Rows enter and leave the filter.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

export MY_SERVER_ID=4242420042
my_fresh_stream t42_active t42_deleted
os_drop t42_active; os_drop t42_deleted
my_sql "DROP TABLE IF EXISTS t42_active, t42_deleted;
CREATE TABLE t42_active (id int PRIMARY KEY, active BOOLEAN, tenant varchar(16));
CREATE TABLE t42_deleted (id int PRIMARY KEY, deleted tinyint(1), note varchar(16));
INSERT INTO t42_active SELECT seq, CASE seq % 4 WHEN 0 THEN TRUE WHEN 1 THEN FALSE
	WHEN 2 THEN 2 END, IF(seq % 5 = 0, 'hidden', 'acme') FROM seq_1_to_300;
INSERT INTO t42_deleted SELECT seq, CASE seq % 4 WHEN 0 THEN TRUE WHEN 1 THEN FALSE
	WHEN 2 THEN 2 END, CONCAT('n', seq) FROM seq_1_to_300"
ok $? "two tables with BOOLEAN columns holding 0, 1, 2 and NULL"
A_WHERE="active = true AND tenant <> 'hidden'"
D_WHERE="deleted = FALSE Or deleted Is Null"
METRICS_PORT=$(free_port)
cat > "$T/cfg.yaml" <<YAML
source:
  url_env: P2O_MYSQL_URL
  server_id: $MY_SERVER_ID
  reconnect_max: 3
target:
  url: $OS_URL
sync:
  active:
    table: $MYSQL_DB.t42_active
    where: "$A_WHERE"
  deleted:
    table: $MYSQL_DB.t42_deleted
    where: "$D_WHERE"
engine:
  checkpoint_interval_ms: 200
metrics:
  bind: 127.0.0.1:$METRICS_PORT
YAML
sv_start "$T/sup.log"
wait_for 60 healthy
ok $? "the configuration with boolean filters loads and the pipeline is up"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 20
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 120 load_done
ok $? "the load finished"

SELA="JSON_OBJECT('id', id, 'active', active, 'tenant', tenant)"
SELD="JSON_OBJECT('id', id, 'deleted', deleted, 'note', note)"
QA="(SELECT * FROM t42_active WHERE $A_WHERE) x"
QD="(SELECT * FROM t42_deleted WHERE $D_WHERE) x"
check "the load indexed exactly the rows MariaDB selects with '$A_WHERE'" -- \
	my_equal "$QA" t42_active 30 "$SELA"
check "and with '$D_WHERE'" -- my_equal "$QD" t42_deleted 30 "$SELD"
two=$(my_sql "SELECT COUNT(*) FROM t42_active WHERE active = 2")
ok $([ "$two" -gt 0 ] && ! curl -sS "$OS_URL/t42_active/_doc/2" | jq -e .found >/dev/null; echo $?) \
	"a BOOLEAN holding 2 is not TRUE ($two such rows, none indexed)"

my_sql "INSERT INTO t42_active SELECT seq, CASE seq % 4 WHEN 0 THEN TRUE WHEN 1 THEN FALSE
	WHEN 2 THEN 2 END, IF(seq % 5 = 0, 'hidden', 'acme') FROM seq_1001_to_1300;
INSERT INTO t42_deleted SELECT seq, CASE seq % 4 WHEN 0 THEN TRUE WHEN 1 THEN FALSE
	WHEN 2 THEN 2 END, CONCAT('n', seq) FROM seq_1001_to_1300;
UPDATE t42_active SET active = NOT active WHERE id % 7 = 0;
UPDATE t42_active SET active = NULL WHERE id % 11 = 0;
UPDATE t42_active SET tenant = 'hidden' WHERE id % 13 = 0;
UPDATE t42_deleted SET deleted = NOT deleted WHERE id % 7 = 0;
UPDATE t42_deleted SET deleted = NULL WHERE id % 11 = 0;
UPDATE t42_deleted SET deleted = 2 WHERE id % 13 = 0"
ok $? "rows inserted, and updated in and out of the filters"
check "streamed rows follow '$A_WHERE' as MariaDB evaluates it" -- \
	my_equal "$QA" t42_active 30 "$SELA"
check "and '$D_WHERE'" -- my_equal "$QD" t42_deleted 30 "$SELD"

kill -TERM $SUP; wait $SUP
ok $? "drained"
done_testing
