#!/usr/bin/env bash
# pg2osync validate on MariaDB: a good configuration passes and writes
# nothing; a table without a key is named; setup-sql's script (the my.cnf
# block's settings for the running server, the user, the grants), run as
# root, makes validate pass for a new user on a server set to
# binlog_format=STATEMENT; a second server started with log_bin off and
# binlog_format=STATEMENT is refused with one line for each, and for its
# table without a key, in one run.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"

lines() { grep -cE "$2" "$1"; }
indices() { curl -sS --max-time 30 "$OS_URL/_cat/indices?h=index&expand_wildcards=all" | sort; }

my_sql "DROP TABLE IF EXISTS t12_ok, t12_nokey;
	CREATE TABLE t12_ok (id int PRIMARY KEY, v varchar(20));
	CREATE TABLE t12_nokey (a int, b int)"
MY_SERVER_ID=4212 my_config "$T/good.yaml" t12 t12_ok
indices > "$T/before"
pg2osync validate -c "$T/good.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 0 ] && tail -1 "$T/out" | grep -qx 'all checks passed'; echo $?) "a good configuration: all checks passed (exit $st)"
[ $st = 0 ] || sed 's/^/#   /' "$T/out"
grep -q '^ok    source: connected to MariaDB' "$T/out"
ok $? "... connected to MariaDB"
indices > "$T/after"
diff -q "$T/before" "$T/after" > /dev/null
ok $? "... and no index was created"

MY_SERVER_ID=4212 my_config "$T/nokey.yaml" t12 t12_ok t12_nokey
pg2osync validate -c "$T/nokey.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 1 ] && [ "$(lines "$T/out" "^FAIL  table 'p2o.t12_nokey' \(sync 't12_nokey'\) has no primary key")" = 1 ] &&
	[ "$(lines "$T/out" '^FAIL')" = 1 ]; echo $?) "a table without a key: exit 1, one line (exit $st)"
sed 's/^/#   /' "$T/out" | grep FAIL

# setup-sql on a server set back to STATEMENT: its script puts it right
restore() { my_root "SET GLOBAL binlog_format = ROW; DROP USER IF EXISTS 't12sync'@'%'" > /dev/null 2>&1; }
trap 'restore; _cleanup' EXIT
my_root "DROP USER IF EXISTS 't12sync'@'%'; SET GLOBAL binlog_format = STATEMENT"
export P2O_T12_URL="mysql://t12sync:t12-pw@$MYSQL_HOST:$MYSQL_TCP_PORT/$MYSQL_DB"
MY_URL_ENV=P2O_T12_URL MY_SERVER_ID=4212 my_config "$T/sync.yaml" t12 t12_ok
pg2osync validate -c "$T/sync.yaml" > "$T/out" 2>&1
ok $([ $? = 1 ] && grep -q '^FAIL  source: .*authentication failed' "$T/out"; echo $?) "before the script: the user does not exist"
pg2osync setup-sql -c "$T/sync.yaml" > "$T/setup.sql"
ok $? "setup-sql writes the script"
sed 's/^/#   /' "$T/setup.sql" | head -40
ok $(! grep -q 't12-pw' "$T/setup.sql"; echo $?) "... without the url's password"
grep -q "^--   binlog_format    = ROW" "$T/setup.sql" && grep -q "^--   log_bin " "$T/setup.sql"
ok $? "... with the my.cnf block"
mariadb --no-defaults -hlocalhost --protocol=socket -uroot --socket="$MYSQL_SOCKET" < "$T/setup.sql" > "$T/sql.out" 2>&1
ok $? "the script runs as root"
sed 's/^/#   /' "$T/sql.out" | head -5
mariadb --no-defaults -hlocalhost --protocol=socket -uroot --socket="$MYSQL_SOCKET" < "$T/setup.sql" > /dev/null 2>&1
ok $? "... and again"
# the administrator's last step, which no file holds: the password
my_root "ALTER USER 't12sync'@'%' IDENTIFIED BY 't12-pw'"
pg2osync validate -c "$T/sync.yaml" > "$T/out" 2>&1
st=$?
ok $([ $st = 0 ] && tail -1 "$T/out" | grep -qx 'all checks passed'; echo $?) "after the script validate passes for the new user (exit $st)"
[ $st = 0 ] || sed 's/^/#   /' "$T/out"
restore

# a second server: no binary log, statement format, a table without a key
chmod 755 "$T"
M2=$T/m2
mkdir -p "$M2" && chown mysql: "$M2"
mariadb-install-db --no-defaults --user=mysql --datadir="$M2/data" \
	--auth-root-authentication-method=socket --skip-test-db > "$M2/install.log" 2>&1
port=$(free_port)
setsid /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$M2/data" \
	--bind-address=127.0.0.1 --port="$port" --socket="$M2/sock" --pid-file="$M2/pid" \
	--log-error="$M2/err.log" --skip-name-resolve --skip-log-bin --binlog-format=STATEMENT \
	--server-id=1 --innodb-buffer-pool-size=64M > /dev/null 2>&1 < /dev/null &
M2PID=$!
trap 'restore; kill -TERM $M2PID 2>/dev/null; wait $M2PID 2>/dev/null; _cleanup' EXIT
m2() { mariadb --no-defaults -hlocalhost --protocol=socket -uroot --socket="$M2/sock" -N -B -e "$*"; }
wait_for 60 m2 "SELECT 1"
ok $? "a second MariaDB, log_bin off, binlog_format=STATEMENT"
m2 "CREATE DATABASE app; CREATE TABLE app.t12_ok (id int PRIMARY KEY); CREATE TABLE app.t12_nokey (a int);
	CREATE USER 'p2o'@'%' IDENTIFIED BY '$MYSQL_PWD';
	GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'p2o'@'%'"
export P2O_T12_M2="mysql://p2o:$MYSQL_PWD@127.0.0.1:$port/app"
cat > "$T/m2.yaml" <<EOF
source:
  url_env: P2O_T12_M2
  server_id: 4212
target:
  url: $OS_URL
sync:
  ok:
    table: app.t12_ok
    index: t12m_ok
  nokey:
    table: app.t12_nokey
    index: t12m_nokey
EOF
pg2osync validate -c "$T/m2.yaml" > "$T/out" 2>&1
st=$?
sed 's/^/#   /' "$T/out"
ok $([ $st = 1 ]; echo $?) "exit 1"
ok $([ "$(lines "$T/out" '^FAIL  source: the server writes no binary log \(log_bin is OFF\)')" = 1 ]; echo $?) "log_bin off: one line"
ok $([ "$(lines "$T/out" '^FAIL  source: binlog_format is STATEMENT: row-based logging is required')" = 1 ]; echo $?) "binlog_format=STATEMENT: one line"
ok $([ "$(lines "$T/out" "^FAIL  table 'app.t12_nokey' .*has no primary key")" = 1 ]; echo $?) "the table without a key: one line"
ok $([ "$(lines "$T/out" '^FAIL')" = 3 ]; echo $?) "exactly those three, in one run"
ok $(! grep -qF "$MYSQL_PWD" "$T/out"; echo $?) "the password is in no line"

done_testing
