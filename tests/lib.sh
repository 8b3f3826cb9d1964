# tests/lib.sh - shared helpers for the integration tests (bash, TAP output).
# Sourced by tests/integration/*.t, which run under tests/servers/run-with.sh
# so PG_URL, PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, OS_URL and
# P2O_SERVERS_DIR are exported. P2O_BIN picks the build (build/bin or
# build-san/bin).

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
P2O_BIN=${P2O_BIN:-$TOP/build/bin}
export PATH="$P2O_BIN:$PATH"
# sanitizer builds: a leak report is not a crash in a killed child; UB is
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

_tap_n=0
_tap_fail=0
ok() {	# ok COND-EXIT-STATUS DESCRIPTION
	local st=$1; shift
	_tap_n=$((_tap_n + 1))
	if [ "$st" -eq 0 ]; then echo "ok $_tap_n - $*"
	else echo "not ok $_tap_n - $*"; _tap_fail=$((_tap_fail + 1)); fi
}
check() {	# check DESCRIPTION -- COMMAND...
	local d=$1; shift; [ "$1" = "--" ] && shift
	if "$@" >"$T/check.out" 2>&1; then ok 0 "$d"
	else ok 1 "$d"; sed 's/^/#   /' "$T/check.out" | tail -n 20; fi
}
diag() { echo "# $*"; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # skip $*"; }
done_testing() { echo "1..$_tap_n"; [ "$_tap_fail" -eq 0 ]; }

# a private temp dir per test file, removed at exit with every process we left
T=$(mktemp -d "${P2O_SERVERS_DIR:-/tmp}/t.XXXXXX")
_cleanup_pids=()
cleanup_add() { _cleanup_pids+=("$@"); }
_cleanup() {
	local p
	for p in "${_cleanup_pids[@]:-}"; do
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null
	done
	pkill -KILL -f "$T/" 2>/dev/null || true
	rm -rf "$T"
}
trap _cleanup EXIT

NAME=$(basename "$0" .t | tr -c 'a-z0-9\n' '_' | tr -d '\n')

export PGOPTIONS="-c client_min_messages=warning"
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

# The engine the tests write to: OpenSearch, or the one P2O_TARGET names
# (tests/servers/run-with.sh --es sets it), so that the same test files run
# against each. target_keys prints the target keys beside url that it needs;
# needs_module skips a whole test file on an engine whose test node lacks
# a module it uses.
P2O_TARGET=${P2O_TARGET:-opensearch}
target_keys() {
	if [ "$P2O_TARGET" != opensearch ]; then echo "  flavor: $P2O_TARGET"; fi
}
# has_module NAME: whether the target node has that module (a test that
# can run its other parts without it)
has_module() { [ "$P2O_TARGET" != elasticsearch ]; }
# needs_module NAME... : the Elasticsearch integ-test node has none of
# parent-join, ingest-common, reindex, lang-painless (not published for 8.x)
needs_module() {
	if [ "$P2O_TARGET" = elasticsearch ]; then
		echo "1..0 # skip needs $* (not in the Elasticsearch test node)"
		exit 0
	fi
}

# mkconfig FILE SLOT INDEXPREFIX TABLE... : one sync section per table,
# index = INDEXPREFIX_table; the source URL comes from $P2O_TEST_URL (with
# the password) through url_env, the way a user should do it.
export P2O_TEST_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE"
mkconfig() {
	local f=$1 slot=$2 prefix=$3; shift 3
	local port=${METRICS_PORT:-0}
	{
		echo "source:"
		echo "  url_env: P2O_TEST_URL"
		echo "  slot_name: $slot"
		echo "  publication: $slot"
		echo "  reconnect_max: ${RECONNECT_MAX:-20}"
		echo "target:"
		echo "  url: $OS_URL"
		target_keys
		echo "sync:"
		for t in "$@"; do
			echo "  $t:"
			echo "    table: public.$t"
			echo "    index: ${prefix}_$t"
		done
		echo "engine:"
		echo "  batch_size: ${BATCH_SIZE:-1000}"
		echo "  checkpoint_interval_ms: ${CKPT_MS:-200}"
		if [ "$port" != 0 ]; then echo "metrics:"; echo "  bind: 127.0.0.1:$port"; fi
	} > "$f"
}

# mkhead FILE SLOT : a configuration's source, target, engine and metrics
# sections, as mkconfig writes them; the test appends its own sync section
mkhead() {
	local f=$1 slot=$2 port=${METRICS_PORT:-0}
	{
		echo "source:"
		echo "  url_env: P2O_TEST_URL"
		echo "  slot_name: $slot"
		echo "  publication: $slot"
		echo "  reconnect_max: ${RECONNECT_MAX:-20}"
		echo "target:"
		echo "  url: $OS_URL"
		target_keys
		echo "engine:"
		echo "  checkpoint_interval_ms: ${CKPT_MS:-200}"
		if [ "$port" != 0 ]; then echo "metrics:"; echo "  bind: 127.0.0.1:$port"; fi
	} > "$f"
}

# metrics_text: /metrics on $METRICS_PORT with the source label every
# series carries (source.name, or the stream's identity) left out, so a
# test names a series by the labels it is about: NAME{table="public.t"}
metrics_text() {
	curl -s "http://127.0.0.1:$METRICS_PORT/metrics" |
		sed -E 's/\{source="[^"]*",?/{/; s/\{\}//'
}
export -f metrics_text

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

os_get() { curl -sS --max-time 30 "$OS_URL$1"; }
os_count() {
	curl -sS --max-time 30 -XPOST "$OS_URL/$1/_refresh" >/dev/null 2>&1
	curl -sS --max-time 30 "$OS_URL/$1/_count" | jq -r '.count // 0'
}
os_drop() { curl -sS --max-time 30 -XDELETE "$OS_URL/$1" >/dev/null 2>&1 || true; }

# compare TABLE INDEX [COLUMNS-SQL]: the index holds exactly the table's rows,
# by content. COLUMNS-SQL renders each row the way the pipeline documents it
# (default: row_to_json with numerics as text is up to the caller).
compare() {
	local table=$1 index=$2 sel=${3:-"row_to_json(t)"}
	curl -sS --max-time 30 -XPOST "$OS_URL/$index/_refresh" >/dev/null 2>&1
	psql_q -c "select coalesce(json_agg($sel),'[]') from $table t" > "$T/cmp.src" || return 2
	python3 "$TOP/tests/compare.py" "$OS_URL" "$index" "$T/cmp.src"
}
# wait_equal TABLE INDEX SECONDS [COLUMNS-SQL]
# (by the clock: a compare of a big table takes seconds itself)
wait_equal() {
	local table=$1 index=$2 secs=$3 sel=${4:-"row_to_json(t)"}
	local end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ]; do
		compare "$table" "$index" "$sel" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	compare "$table" "$index" "$sel"
}

slot_confirmed() {	# slot_confirmed SLOT -> LSN text
	psql_q -c "select confirmed_flush_lsn from pg_replication_slots where slot_name='$1'"
}
lsn_num() {	# X/Y -> decimal
	local x=${1%/*} y=${1#*/}
	echo $(( (16#$x << 32) | 16#$y ))
}
ckpt_lsn() {	# ckpt_lsn CONFIG -> stored checkpoint LSN text or empty
	ckpt -c "$1" get 2>/dev/null | jq -r '.text // empty'
}
# a test's stream starts from nothing: no slot, no publication, and no
# checkpoint left by an earlier run on the same servers (which the capture
# would rightly refuse as behind a new slot)
# slot_active SLOT: a replication connection streams from it now (a query
# that returns no row still exits 0: compare what it printed)
# slot_not_past_ckpt SLOT CONFIG CREATED: the crash tests' invariant, checked
# while nothing can acknowledge: the slot's confirmed position is not past
# the stored checkpoint (before any checkpoint exists, not past CREATED,
# where the slot was made)
slot_not_past_ckpt() {
	local sl ck
	sl=$(slot_confirmed "$1"); ck=$(ckpt_lsn "$2")
	[ -z "$ck" ] && ck=$3
	[ "$(lsn_num "$sl")" -le "$(lsn_num "$ck")" ] || { echo "slot $sl > checkpoint $ck"; return 1; }
}
# sup_start: the supervisor on $T/cfg.yaml in the background (its log
# appended to $T/sup.log, SUP its pid), until /ready on $METRICS_PORT
sup_start() {
	pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
	SUP=$!; cleanup_add $SUP
	wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
}
# kill_rounds N: N times, after 1 to 2 s, the pipeline killed -9
# (kill_pipeline) and started again (sup_start); KILL_UP is how many
# times it came back ready
kill_rounds() {
	local r
	KILL_UP=0
	for ((r = 0; r < $1; r++)); do
		sleep 1.$((RANDOM % 10))
		kill_pipeline
		sup_start && KILL_UP=$((KILL_UP + 1))
	done
}
# kill_pipeline [FILE]: every process of the pipeline run on FILE
# (default $T/cfg.yaml) killed -9, as a power cut would: the supervisor,
# its stages and its helpers (a sweep's pg2osync verify, and what that
# spawns) all carry "-c FILE" on their command line, and nothing else
# does; waits for $SUP
kill_pipeline() {
	local p f=${1:-$T/cfg.yaml}
	for p in $(pgrep -f -- "-c $f"); do kill -KILL "$p" 2>/dev/null; done
	wait ${SUP:-} 2>/dev/null
}
# log_count FILE TEXT: how many lines of FILE hold TEXT (grep -E)
log_count() { grep -cE -- "$2" "$1" 2>/dev/null; }
# kill_at_line FILE TEXT N [SECS]: kill_pipeline as soon as FILE holds N
# lines with TEXT (polled every 20 ms, for at most SECS, default 120);
# 1 when it never did (the pipeline is killed all the same)
kill_at_line() {
	local i rc=1
	for ((i = 0; i < ${4:-120} * 50; i++)); do
		if [ "$(log_count "$1" "$2")" -ge "$3" ]; then rc=0; break; fi
		sleep 0.02
	done
	kill_pipeline
	return $rc
}
# sweep_again SECS MARKER_URL WHAT: after a restart that owes the sweep of
# a reload killed in it ($T/sup.log the supervisor's log, MARKER_URL the
# stream's sweep state document): three TAP lines - it runs again and ends
# within SECS (WHAT says when), the reload is not made again, the marker
# is cleared
sweep_again() {
	local m done="sweep: the documents of rows deleted while the position was gone are removed"
	_swept() { [ "$(log_count "$T/sup.log" "$done")" -ge 1 ]; }
	wait_for "$1" _swept
	ok $? "$3, the sweep runs again and ends ($(log_count "$T/sup.log" "sweep: every table is loaded again") started)"
	ok $([ "$(log_count "$T/sup.log" "the stream.s position is gone \(capture-")" = 1 ]; echo $?) "no second reload"
	diag "sweeps: $(grep -oE "^[^ ]+ .*sweep: (every|the documents)" "$T/sup.log" | cut -c12-23,50-80 | tr '\n' ' ')"
	m=$(curl -sS "$2" | jq -r '._source.pending')
	ok $([ "$m" = false ]; echo $?) "the marker is cleared (pending: $m)"
}
# crash_load_sql FILE TABLE IDS: a pgbench script for a table (id, v, note)
# that upserts a random row of IDS and deletes one now and then
crash_load_sql() {
	cat > "$1" <<SQL
\set id random(1, $3)
insert into $2 values (:id, 1, md5(random()::text)) on conflict (id) do update set v = $2.v + 1, note = md5(random()::text);
\set d random(1, $3)
delete from $2 where id = :d and v % 5 = 0;
SQL
}
# pg_writer TABLE IDS: a client writing continuously in the background,
# one statement at a time: upserts of random ids up to IDS (a new title
# and score) and deletes of some; TABLE has (id int primary key, title
# text, score float8). A dropped connection is made again, to the port in
# $T/writer.port when there is one (a failover test writes the new
# primary's there), else PGPORT. WRITER is its pid; pg_writer_count says
# how many statements it sent; ended by cleanup or pg_writer_stop.
pg_writer() {
	cat > "$T/pgwriter.sh" <<SH
while :; do
	n=\$(cat "$T/writer.n" 2>/dev/null); n=\${n:-0}
	while :; do
		# by rename, so that pg_writer_count never reads the file emptied
		# and not yet written (it once read 0 after thousands of statements)
		n=\$((n + 1)); echo \$n > "$T/writer.n.new"; mv -f "$T/writer.n.new" "$T/writer.n"
		echo "insert into $1 (id, title, score) values (\$((RANDOM % $2 + 1)), md5(random()::text), random())
			on conflict (id) do update set title = excluded.title, score = excluded.score;"
		echo "delete from $1 where id = \$((RANDOM % $2 + 1)) and score < 0.2;"
		sleep 0.005
	done | psql -X -q -p "\$(cat "$T/writer.port" 2>/dev/null || echo "$PGPORT")"
	sleep 0.2
done
SH
	: > "$T/writer.n"
	bash "$T/pgwriter.sh" > "$T/writer.log" 2>&1 &
	WRITER=$!
	cleanup_add $WRITER
}
pg_writer_count() { local n; n=$(cat "$T/writer.n" 2>/dev/null); echo "${n:-0}"; }
pg_writer_stop() { pkill -TERM -f "bash $T/pgwriter.sh"; wait "$WRITER" 2>/dev/null; sleep 0.5; }
slot_active() {
	[ "$(psql_q -c "select 1 from pg_replication_slots where slot_name = '$1' and active")" = 1 ]
}
drop_slot() {
	psql_q -c "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name='$1' and not active" >/dev/null 2>&1 || true
	psql_q -c "drop publication if exists $1, ${1}_append" >/dev/null 2>&1 || true
	curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$1?refresh=true" >/dev/null 2>&1 || true
}
# drop_loads SLOT TABLE... : forget the load progress of tables (public.*)
# streamed through SLOT, so that they are loaded again
drop_loads() {
	local slot=$1 t; shift
	for t in "$@"; do
		curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$slot%2Fload%2Fpublic.$t?refresh=true" >/dev/null 2>&1 || true
	done
}
# faultproxy_start CONFIG: tests/helper/faultproxy.py on a free port in
# front of OpenSearch, answering; CONFIG's target.url turned to it. PPORT
# is its port (GET /_faultproxy?mode=... on it sets a lasting fault)
faultproxy_start() {
	PPORT=$(free_port)
	python3 "$TOP/tests/helper/faultproxy.py" $PPORT "$OS_URL" "" 2> "$T/proxy.log" &
	cleanup_add $!
	wait_for 10 curl -sf "http://127.0.0.1:$PPORT/"
	sed -i "s#url: $OS_URL#url: http://127.0.0.1:$PPORT#" "$1"
}
# set_urls FILE URL... : FILE's target.url turned into target.urls, the
# nodes given
set_urls() {
	python3 - "$@" <<'EOF'
import re, sys
f, *urls = sys.argv[1:]
nodes = "".join(f"    - {u}\n" for u in urls)
s = re.sub(r"(?m)^  url: .*\n", lambda m: "  urls:\n" + nodes, open(f).read(), count=1)
open(f, "w").write(s)
EOF
}
# the three-node cluster of run-with.sh --os-cluster (OSC_URLS, OSC_URL1..3):
# needs_cluster skips a test file without it; cluster_node CMD N runs
# opensearch-cluster.sh's start or kill on node N; cluster_whole starts
# again a node an earlier test left down and waits until the cluster has
# all three and every shard is assigned (green)
needs_cluster() {
	if [ -z "${OSC_URLS:-}" ]; then
		echo "1..0 # skip needs an OpenSearch cluster (run-with.sh --os-cluster)"
		exit 0
	fi
}
cluster_node() { "$TOP/tests/servers/opensearch-cluster.sh" "$1" "$P2O_SERVERS_DIR/osc" "$2"; }
cluster_whole() {
	local i
	for i in 1 2 3; do
		"$TOP/tests/servers/opensearch.sh" status "$P2O_SERVERS_DIR/osc/n$i" ||
			cluster_node start $i || return 1
	done
	curl -sf -m 200 "$OSC_URL1/_cluster/health?wait_for_nodes=3&wait_for_status=green&timeout=180s" >/dev/null
}
# wait_for SECONDS CMD... : poll until CMD succeeds
wait_for() {
	local secs=$1 i; shift
	for ((i = 0; i < secs * 10; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
# rss_kb PID -> resident set in kB
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# pem_bodies FILE...: one line of each certificate's or key's body, the
# text to look for where none may appear
pem_bodies() { local f; for f; do sed -n 2p "$f"; done; }
# has_secret FILE WORD...: FILE holds a PEM header or one of the WORDs
has_secret() {
	local f=$1 w; shift
	grep -qE 'BEGIN|PRIVATE KEY' "$f" && return 0
	for w; do [ -n "$w" ] && grep -qF -- "$w" "$f" && return 0; done
	return 1
}
# argv_secrets PATTERN WORD...: how many processes whose command line
# holds PATTERN carry a secret in their argv (see has_secret)
argv_secrets() {
	local pat=$1 p n=0; shift
	for p in $(pgrep -f -- "$pat"); do
		tr '\0' ' ' < "/proc/$p/cmdline" > "$T/argv" 2>/dev/null || continue
		has_secret "$T/argv" "$@" && { n=$((n + 1)); echo "# argv of $p: $(cat "$T/argv")" >&2; }
	done
	echo $n
}
