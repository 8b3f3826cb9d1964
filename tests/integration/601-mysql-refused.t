#!/usr/bin/env bash
# capture-mysql refuses what it cannot stream, each time with one message
# and its exit code: a wrong password (77), server settings, tables without
# a key, a checkpoint past the server's binlog (66), a purged binlog (67) and
# TLS the server does not offer (69), bad command lines (64) and
# configurations (78). Run under tests/servers/run-with.sh --mariadb.
. "$(dirname "$0")/../mysql-lib.sh"

# run_cap CONFIG ARGS...: the exit code; the log in $T/log
run_cap() {
	local cfg=$1; shift
	timeout 60 capture-mysql -c "$cfg" "$@" > "$T/out" 2> "$T/log"
}
# expect CODE PATTERN DESCRIPTION CONFIG ARGS...
expect() {
	local code=$1 pat=$2 d=$3; shift 3
	run_cap "$@"
	local st=$?
	if [ $st = "$code" ] && grep -qE "$pat" "$T/log"; then ok 0 "$d (exit $st)"
	else ok 1 "$d"; diag "exit $st, want $code; log:"; sed 's/^/#   /' "$T/log" | tail -5; fi
}

my_sql "DROP TABLE IF EXISTS t62_ok, t62_nokey; DROP VIEW IF EXISTS t62_view;
	CREATE TABLE t62_ok (id int PRIMARY KEY);
	CREATE TABLE t62_nokey (a int, b int);
	CREATE VIEW t62_view AS SELECT id FROM t62_ok"
my_config "$T/ok.yaml" t62 t62_ok

export P2O_BAD_URL="mysql://$MYSQL_USER:not-the-password@$MYSQL_HOST:$MYSQL_TCP_PORT/$MYSQL_DB"
MY_URL_ENV=P2O_BAD_URL my_config "$T/badpw.yaml" t62 t62_ok
expect 77 "authentication failed" "a wrong password" "$T/badpw.yaml"
ok $(! grep -q "not-the-password" "$T/log"; echo $?) "the wrong password is not in the message"

export P2O_DOWN_URL="mysql://$MYSQL_USER:$MYSQL_PWD@127.0.0.1:$(free_port)/$MYSQL_DB"
MY_URL_ENV=P2O_DOWN_URL my_config "$T/down.yaml" t62 t62_ok
expect 75 "could not open the catalogue connection" "a server that is not there" "$T/down.yaml"

export P2O_PARAM_URL="$P2O_MYSQL_URL?ssl=true"
MY_URL_ENV=P2O_PARAM_URL my_config "$T/param.yaml" t62 t62_ok
expect 78 "takes no parameters" "a url with parameters" "$T/param.yaml"
ok $(! grep -qF "$MYSQL_PWD" "$T/log"; echo $?) "... and the message does not quote the url"

my_config "$T/nokey.yaml" t62 t62_nokey
expect 69 "'p2o.t62_nokey' \(sync 't62_nokey'\) has no primary key" "a table without a primary key" "$T/nokey.yaml"
my_config "$T/missing.yaml" t62 t62_missing
expect 69 "'p2o.t62_missing' .* does not exist" "a table that does not exist" "$T/missing.yaml"
my_config "$T/view.yaml" t62 t62_view
expect 69 "not a base table" "a view" "$T/view.yaml"

# server settings, changed as root and put back whatever happens
restore() { my_root "SET GLOBAL binlog_format = ROW; SET GLOBAL binlog_row_image = FULL" >/dev/null 2>&1; }
trap 'restore; _cleanup' EXIT
my_root "SET GLOBAL binlog_format = STATEMENT"
expect 69 "binlog_format is STATEMENT: row-based logging is required" "binlog_format=STATEMENT" "$T/ok.yaml"
my_root "SET GLOBAL binlog_format = ROW; SET GLOBAL binlog_row_image = MINIMAL"
expect 69 "binlog_row_image is MINIMAL" "binlog_row_image=MINIMAL" "$T/ok.yaml"
restore

# TLS the server does not offer; a verifying mode without a CA
{ cat "$T/ok.yaml"; } | sed 's/^  reconnect_max: 3/  reconnect_max: 3\n  sslmode: require/' > "$T/tls.yaml"
expect 69 "SSL|TLS" "sslmode=require against a server without TLS" "$T/tls.yaml"
sed 's/sslmode: require/sslmode: verify-ca/' "$T/tls.yaml" > "$T/tls2.yaml"
expect 78 "needs source.sslrootcert" "sslmode=verify-ca without sslrootcert" "$T/tls2.yaml"
sed 's/sslmode: require/sslmode: disable/' "$T/tls.yaml" > "$T/tls3.yaml"
timeout 5 capture-mysql -c "$T/tls3.yaml" > /dev/null 2> "$T/log"
ok $([ $? = 124 ] && grep -q "binlog dump" "$T/log"; echo $?) "sslmode=disable streams"

# checkpoints the server's binlog cannot hold
cur=$(my_sql "SHOW MASTER STATUS" | cut -f1)
expect 66 "past the end of the server's binlog.*fresh index" "a checkpoint past the end of the current file" \
	"$T/ok.yaml" --start-pos "$cur:4000000000"
expect 66 "past the end of the server's binlog" "a checkpoint in a later file than the server has" \
	"$T/ok.yaml" --start-pos "binlog.999999:4"
my_root "FLUSH BINARY LOGS"
cur=$(my_sql "SHOW MASTER STATUS" | cut -f1)
first=$(my_sql "SHOW BINARY LOGS" | head -1 | cut -f1)
wait_for 20 purged_to "$cur"
expect 67 "binlog file '$first' the checkpoint $first:4 needs was purged" "a purged binlog: exit 67, the position is gone" "$T/ok.yaml" --start-pos "$first:4"

# the command line
expect 64 "is not a position this tool wrote" "--start-pos that is not ours" "$T/ok.yaml" --start-pos 0/16B3748
expect 64 "needs --start-pos" "--start-token without --start-pos" "$T/ok.yaml" --start-token 5
expect 66 "disagrees with itself" "a token below its text's coordinate" "$T/ok.yaml" --start-pos "$cur:400" --start-token 3
capture-mysql --help > "$T/help" 2>&1
ok $([ $? = 0 ] && grep -q "^  77  authentication failed" "$T/help"; echo $?) "--help exits 0 and lists the exit codes"
printf 'source:\n  url: postgres://x@h/db\ntarget:\n  url: http://127.0.0.1:9\nsync:\n  a:\n    table: public.a\n' > "$T/pg.yaml"
expect 78 "reads MySQL and MariaDB only" "a postgres configuration" "$T/pg.yaml"
done_testing
