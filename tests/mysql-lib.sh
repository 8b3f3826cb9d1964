# tests/mysql-lib.sh - helpers for the MySQL / MariaDB integration tests
# (tests/integration/6x-mysql-*.t), on top of tests/lib.sh. They run under
# tests/servers/run-with.sh --mariadb [--os], which exports MYSQL_HOST,
# MYSQL_TCP_PORT, MYSQL_USER, MYSQL_PWD (the mariadb client reads it from
# the environment), MYSQL_DB and MYSQL_SOCKET (see tests/servers/mariadb.sh).

# lib.sh builds a PostgreSQL url from these; a MariaDB-only run has none
export PGUSER=${PGUSER:-} PGPASSWORD=${PGPASSWORD:-} PGHOST=${PGHOST:-}
export PGPORT=${PGPORT:-} PGDATABASE=${PGDATABASE:-}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ -z "${MYSQL_HOST:-}" ] || [ -z "${MYSQL_PWD:-}" ] ||
	! command -v jq >/dev/null || ! command -v mariadb >/dev/null; then
	echo "1..0 # skip needs tests/servers/run-with.sh --mariadb, jq and the mariadb client"
	exit 0
fi

# the password reaches capture-mysql only through this variable (url_env)
export P2O_MYSQL_URL="mysql://$MYSQL_USER:$MYSQL_PWD@$MYSQL_HOST:$MYSQL_TCP_PORT/$MYSQL_DB"

# my_sql SQL...: as the test user, in database p2o, UTC
my_sql() {
	mariadb --no-defaults -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" \
		-N -B "$MYSQL_DB" -e "SET time_zone = '+00:00'; $*"
}
# my_raw SQL...: the same in utf8mb4 (four-byte characters), values
# printed as they are (no escaping of tabs, newlines, backslashes)
my_raw() {
	mariadb --no-defaults -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" \
		--default-character-set=utf8mb4 -N -B -r "$MYSQL_DB" -e "SET time_zone = '+00:00'; $*"
}
# my_root SQL...: as root through the server's socket (SET GLOBAL)
my_root() { mariadb --no-defaults -hlocalhost --protocol=socket -uroot --socket="$MYSQL_SOCKET" -N -B -e "$*"; }

# my_config FILE PREFIX TABLE...: one sync section per table of database
# p2o, index PREFIX_table; url through url_env; the replica id a MySQL
# source requires from MY_SERVER_ID
my_config() {
	local f=$1 prefix=$2 t; shift 2
	{
		echo "source:"
		echo "  url_env: ${MY_URL_ENV:-P2O_MYSQL_URL}"
		echo "  server_id: ${MY_SERVER_ID:-4242424242}"
		echo "  reconnect_max: ${RECONNECT_MAX:-3}"
		echo "target:"
		echo "  url: ${OS_URL:-http://127.0.0.1:9}"
		echo "sync:"
		for t in "$@"; do
			echo "  $t:"
			echo "    table: $MYSQL_DB.$t"
			echo "    index: ${prefix}_$t"
		done
		# supervised: metrics on METRICS_PORT, checkpoints often
		if [ -n "${METRICS_PORT:-}" ]; then
			echo "engine:"
			echo "  checkpoint_interval_ms: ${CKPT_MS:-200}"
			echo "metrics:"
			echo "  bind: 127.0.0.1:$METRICS_PORT"
		fi
	} > "$f"
}
# my_fresh_stream TABLE...: no checkpoint and no load progress left by an
# earlier run on the same servers (the stream is named by the server_id
# my_config writes)
my_fresh_stream() {
	local t s="mysql:${MY_SERVER_ID:-4242424242}"
	curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/$s?refresh=true" >/dev/null 2>&1
	for t in "$@"; do
		curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/$s%2Fload%2F$MYSQL_DB.$t?refresh=true" >/dev/null 2>&1
	done
	return 0
}

# frames FILE: the NDJSON of a frames file
frames() { sed -E 's/^[0-9]+ //' "$1"; }
# frame_count FILE JQ-FILTER: how many frames the filter selects
frame_count() { frames "$1" | jq -c "select($2)" 2>/dev/null | wc -l; }
# wait_frames SECONDS FILE JQ-FILTER N: until N frames match
wait_frames() {
	local secs=$1 f=$2 q=$3 want=$4 i
	for ((i = 0; i < secs * 10; i++)); do
		[ "$(frame_count "$f" "$q")" -ge "$want" ] && return 0
		sleep 0.1
	done
	return 1
}
# cap_start LOG FRAMES ARGS...: capture-mysql in the background, streaming
# once its log says the dump started; CAP is its pid
cap_start() {
	local log=$1 out=$2; shift 2
	# emptied here, not by the background job's redirections: those
	# happen after the fork, and the wait below could read an earlier
	# run's "binlog dump" in a log that is used again
	: > "$log"; : > "$out"
	capture-mysql "$@" > "$out" 2> "$log" &
	CAP=$!
	cleanup_add $CAP
	wait_for 30 grep -q "binlog dump" "$log"
}
# cap_stop: SIGTERM and the exit status
cap_stop() {
	kill -TERM "$CAP" 2>/dev/null
	wait "$CAP"
}

# my_compare TABLE INDEX SELECT-EXPR: the index holds exactly the table's
# rows, by content; SELECT-EXPR renders a row as the pipeline documents it
# (JSON_OBJECT('id', id, ...), decimals CAST AS CHAR). A document is
# compared on the members SELECT-EXPR names (all of them by default:
# MY_COMPARE_SOME=1 for only those)
my_compare() {
	curl -sS --max-time 30 -XPOST "$OS_URL/$2/_refresh" >/dev/null 2>&1
	my_raw "SET SESSION group_concat_max_len = 1073741824;
		SELECT COALESCE(JSON_ARRAYAGG($3), '[]') FROM $1" > "$T/cmp.src" || return 2
	if [ -z "${MY_COMPARE_SOME:-}" ]; then
		python3 "$TOP/tests/compare.py" "$OS_URL" "$2" "$T/cmp.src"
		return
	fi
	python3 - "$TOP/tests" "$OS_URL" "$2" "$T/cmp.src" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import compare
want = {str(r["id"]): r for r in json.load(open(sys.argv[4]))}
got = compare.fetch_all(sys.argv[2], sys.argv[3])
bad = 0
for k in sorted(set(want) | set(got)):
    g = {m: got[k].get(m) for m in want[k]} if k in got and k in want else None
    if k not in got or k not in want or g != want[k]:
        bad += 1
        if bad <= 20:
            print("id", k, "table", want.get(k), "index", got.get(k))
print(f"rows {len(want)} docs {len(got)} differences {bad}")
sys.exit(1 if bad else 0)
PY
}
# my_equal TABLE INDEX SECONDS SELECT-EXPR: until my_compare holds (a
# large table takes seconds to compare: the limit is the clock's)
my_equal() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		my_compare "$1" "$2" "$4" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	my_compare "$1" "$2" "$4"
}
# purged_to FILE: the server's binlog files before FILE are gone. A dump
# thread the server has not yet seen end holds its file open and PURGE
# skips a file in use, so the dump threads are ended first; call it under
# wait_for until it holds
purged_to() {
	local id
	for id in $(my_root "SELECT id FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%'"); do
		my_root "KILL $id" 2>/dev/null
	done
	my_root "PURGE BINARY LOGS TO '$1'" 2>/dev/null
	[ "$(my_sql "SHOW BINARY LOGS" | head -1 | cut -f1)" = "$1" ]
}
# my_writer TABLE IDS: a client writing continuously in the background
# (upserts of random ids up to IDS, deletes of some; SHA2, since MySQL 9.7
# has no MD5), one connection, made again when it drops, to the port in
# $T/writer.port when there is one (a failover test writes the promoted
# replica's there), else MYSQL_TCP_PORT; WRITER is its pid, ended by cleanup or my_writer_stop.
# TABLE has (id int PRIMARY KEY, v int, note varchar(40)).
my_writer() {
	cat > "$T/writer.sh" <<SH
while :; do
	while :; do
		echo "INSERT INTO $1 (id, v, note) VALUES (\$((RANDOM % $2 + 1)), 1, LEFT(SHA2(RAND(), 256), 32)) ON DUPLICATE KEY UPDATE v = v + 1, note = LEFT(SHA2(RAND(), 256), 32);"
		echo "DELETE FROM $1 WHERE id = \$((RANDOM % $2 + 1)) AND v % 5 = 0;"
		sleep 0.005
	done | mariadb --no-defaults -h"$MYSQL_HOST" -P"\$(cat "$T/writer.port" 2>/dev/null || echo "$MYSQL_TCP_PORT")" -u"$MYSQL_USER" "$MYSQL_DB"
	sleep 0.2
done
SH
	bash "$T/writer.sh" > "$T/writer.log" 2>&1 &
	WRITER=$!
	cleanup_add $WRITER
}
my_writer_stop() { pkill -TERM -f "bash $T/writer.sh"; wait "$WRITER" 2>/dev/null; sleep 0.5; }
# sv_start LOG: pg2osync-supervise -c $T/cfg.yaml in the background,
# appending to LOG; SUP is its pid
sv_start() {
	pg2osync-supervise -c "$T/cfg.yaml" >> "$1" 2>&1 &
	SUP=$!
	cleanup_add $SUP
}
# metric SERIES: its value on the supervisor's endpoint (METRICS_PORT)
metric() {
	metrics_text | awk -v s="$1" '$1 == s { print $2 }'
}
healthy() { curl -sf "http://127.0.0.1:$METRICS_PORT/ready" >/dev/null; }
