#!/usr/bin/env bash
# kill -HUP, what `systemctl reload` sends, leaves a running supervisor
# running and streaming: sent to the supervisor, to its process group and
# to each stage's own, with the file unchanged it ends no process and
# restarts nothing; the supervisor logs one line per signal and says the
# reload found nothing new (counted as unchanged); a row inserted after
# the signal reaches the index; SIGTERM still drains. What a changed file
# does is 321-reload.t's.
. "$(dirname "$0")/../lib.sh"

S=p2o_sighup
drop_slot $S; drop_loads $S hup_items; os_drop ${S}_hup_items
psql_q -c "drop table if exists hup_items; create table hup_items (id int primary key, title text)"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S hup_items
# a process group of its own, so that the group's signal reaches nothing
# else of this test
setsid pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/sup.log"
ok $? "the pipeline is up"
ok $([ "$(ps -o pgid= -p $SUP | tr -d ' ')" = "$SUP" ]; echo $?) \
	"the supervisor leads its own process group"

found() { curl -sS "$OS_URL/${S}_hup_items/_doc/$1" | jq -e .found >/dev/null; }
psql_q -c "insert into hup_items values (1, 'before')"
wait_for 30 found 1
ok $? "a row inserted before the signal is indexed"

stages() { ps -o pid= --ppid $SUP | tr -d ' ' | sort; }
before=$(stages)
kill -HUP $SUP
wait_for 10 grep -q "SIGHUP: reloading" "$T/sup.log"
ok $? "SIGHUP to the supervisor: it says it reloads"
wait_for 30 grep -q "reload unchanged" "$T/sup.log"
ok $? "and that the file is the one running"
kill -HUP -- -$SUP
for p in $before; do kill -HUP -- -"$p" 2>/dev/null; kill -HUP "$p" 2>/dev/null; done
sleep 2
ok $(kill -0 $SUP 2>/dev/null; echo $?) "the supervisor runs on, the same process ($SUP)"
after=$(stages)
ok $([ -n "$before" ] && [ "$before" = "$after" ]; echo $?) \
	"every stage runs on, the same processes ($(echo $before | wc -w) of them), though each was sent SIGHUP"
wait_for 30 bash -c "[ \$(grep -c 'reload unchanged' '$T/sup.log') -ge 2 ]"
ok $([ "$(grep -c 'SIGHUP: reloading' "$T/sup.log")" = 2 ]; echo $?) \
	"one line per signal the supervisor received"
ok $(metrics_text | grep -q '^pg2osync_config_reloads_total{result="unchanged"} 2$'; echo $?) \
	"both counted as unchanged"
psql_q -c "insert into hup_items values (2, 'after')"
wait_for 30 found 2
ok $? "a row inserted after the signals reaches the index"
ok $(! grep -qE "stopping the pipeline|restarting the pipeline" "$T/sup.log"; echo $?) \
	"no restart was logged"
ok $([ "$(grep -c 'starting the pipeline' "$T/sup.log")" = 1 ]; echo $?) \
	"the pipeline was started once"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM still drains, exit 0"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 30
drop_slot $S
done_testing
