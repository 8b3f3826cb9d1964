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
# p2o, index PREFIX_table; url through url_env
my_config() {
	local f=$1 prefix=$2 t; shift 2
	{
		echo "source:"
		echo "  url_env: ${MY_URL_ENV:-P2O_MYSQL_URL}"
		echo "  reconnect_max: 3"
		echo "target:"
		echo "  url: ${OS_URL:-http://127.0.0.1:9}"
		echo "sync:"
		for t in "$@"; do
			echo "  $t:"
			echo "    table: $MYSQL_DB.$t"
			echo "    index: ${prefix}_$t"
		done
	} > "$f"
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
