#!/usr/bin/env bash
# The target goes away for 30 s while a MariaDB source streams: nothing
# is lost, memory stays flat and the writer idle while it is down, and
# the pipeline catches up when it returns, without a restart - even with
# the server's net_write_timeout (how long it waits for a reader that
# takes nothing) at 10 s.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ] || [ ! -d "${P2O_SERVERS_DIR:-}/os" ] || [ -z "${MYSQL_SOCKET:-}" ]; then
	echo "1..0 # skip needs the run-with.sh OpenSearch"; exit 0
fi

IX=t93_t93
was=$(my_root "SELECT @@global.net_write_timeout")
trap 'my_root "SET GLOBAL net_write_timeout = $was"; _cleanup' EXIT
my_root "SET GLOBAL net_write_timeout = 10"
my_fresh_stream t93
os_drop $IX
my_sql "DROP TABLE IF EXISTS t93; CREATE TABLE t93 (id int PRIMARY KEY, v int, pad varchar(220))"
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" t93 t93
SEL="JSON_OBJECT('id', id, 'v', v, 'pad', pad)"
sv_start "$T/sup.log"
wait_for 60 healthy; ok $? "pipeline up"

my_sql "INSERT INTO t93 SELECT seq, 0, REPEAT('x', 200) FROM seq_1_to_1000"
check "first rows land" -- my_equal t93 $IX 30 "$SEL"

# CPU seconds the writer spent, from /proc
cpu_s() { awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat" 2>/dev/null || echo 0; }
wpid=$(pgrep -f "/writer -c $T/cfg.yaml" | head -n 1)
ok $([ -n "$wpid" ] && [ -r "/proc/$wpid/stat" ]; echo $?) "the writer's process found (${wpid:-none})"
"$TOP/tests/servers/opensearch.sh" stop "$P2O_SERVERS_DIR/os" >/dev/null
diag "target stopped"
cpu0=$(cpu_s "$wpid")
rss_total() { local s=0 p; for p in $(pgrep -f -- "-c $T/cfg.yaml"); do s=$((s + $(rss_kb $p))); done; echo $s; }
samples=()
for ((i = 0; i < 30; i++)); do
	my_sql "INSERT INTO t93 SELECT seq, $i, REPEAT('y', 200) FROM seq_$((1000 + i * 1000 + 1))_to_$((1000 + (i + 1) * 1000));
		UPDATE t93 SET v = v + 1 WHERE id % 10 = $((i % 10))"
	sleep 1
	samples+=($(rss_total))
done
cpu1=$(cpu_s "$wpid")
diag "resident kB of all stages while down: ${samples[*]}"
# retrying with backoff costs next to nothing; a loop that spins costs a core
ok $(python3 -c "import sys; sys.exit(0 if $cpu1 - $cpu0 < 3 else 1)"; echo $?) \
	"the writer waits, it does not spin: $(python3 -c "print(round($cpu1 - $cpu0, 2))") CPU s in 30 s down"
first=${samples[5]}; last=${samples[29]}
ok $([ "$last" -le $((first + 8192)) ]; echo $?) "resident memory flat while the target is down ($first kB -> $last kB)"
# a node that does not come back is the machine's, not the pipeline's:
# said as such, rather than as rows that never land
check "the target is back" -- "$TOP/tests/servers/opensearch.sh" start "$P2O_SERVERS_DIR/os"
check "everything written while the target was down lands" -- my_equal t93 $IX 180 "$SEL"
sleep 1.5	# stats reach the supervisor at most once a second
errs=$(metric pg2osync_sink_errors_total)
ok $([ "${errs%.*}" -ge 1 ] 2>/dev/null; echo $?) "sink errors counted while down ($errs)"
rc=$(metric pg2osync_reconnects_total)
ok $([ "${rc%.*}" = 0 ]; echo $?) "the outage was waited out, not restarted through ($rc restarts)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
