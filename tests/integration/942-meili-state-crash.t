#!/usr/bin/env bash
# The state file of a target without state documents (target.state_dir,
# the Meilisearch target) survives kill -9 at every step of its write:
# P2O_TEST_STATE_KILL kills ckpt at each step (temporary file opened, half
# written, written, fsync'd, renamed, directory fsync'd), and the stored
# checkpoint is then whole and is the one acknowledged before or the new
# one, never half-written and never behind what was acknowledged. Then
# kill -9 at random moments of a loop of puts: the checkpoint read back
# is never behind the last put that returned.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meilistate
meili_start
mkmeili "$T/cfg.yaml" $S $S mstate
F="$T/state/postgres%3A$S"
whole() { jq -e '.version and .doc.pos and .doc.text' "$F" >/dev/null 2>&1; }

ckpt -c "$T/cfg.yaml" put --pos 1000 --text 0/3E8 2>"$T/err"
ok $? "a first checkpoint is stored ($(cat "$T/err"))"
check "in the state directory, as a whole file" -- whole
acked=1000
pos=1000
for step in tmp-open tmp-half tmp-written tmp-synced renamed dir-synced; do
	pos=$((pos + 1000))
	P2O_TEST_STATE_KILL=$step ckpt -c "$T/cfg.yaml" put --pos $pos \
		--text "0/$(printf %X $pos)" 2>/dev/null; st=$?
	ok $([ $st = 137 ]; echo $?) "ckpt killed at $step (exit $st)"
	whole; ok $? "after a kill at $step the file is whole"
	got=$(lsn_num "$(ckpt_lsn "$T/cfg.yaml")")
	case $step in
	renamed|dir-synced) want=$pos ;;
	*) want=$acked ;;
	esac
	ok $([ "$got" = "$want" ]; echo $?) "and holds $want (got $got)"
	[ "$got" -ge "$acked" ] && acked=$got
done
ckpt -c "$T/cfg.yaml" put --pos $((pos + 1000)) --text "0/$(printf %X $((pos + 1000)))" 2>/dev/null
ok $? "a put after the kills works (a stale temporary file is replaced)"
acked=$((pos + 1000))

# the loop: each put that returned 0 is acknowledged; kill -9 lands
# anywhere in the others
(
	p=$acked
	while :; do
		p=$((p + 1))
		ckpt -c "$T/cfg.yaml" put --pos $p --text "0/$(printf %X $p)" 2>/dev/null &&
			echo $p >> "$T/acked"
	done
) &
LOOP=$!; cleanup_add $LOOP
# (until 20 kills landed: a put takes a few milliseconds, and a kill sent
# between two puts finds no ckpt to kill)
bad=0; n=0
for i in $(seq 1 400); do
	[ $n -ge 20 ] && break
	sleep 0.0$((RANDOM % 10))
	pid=$(pgrep -P $LOOP -x ckpt | head -1)
	[ -n "$pid" ] && kill -KILL $pid 2>/dev/null && n=$((n + 1))
	last=$(tail -1 "$T/acked" 2>/dev/null || echo $acked)
	if ! whole; then bad=$((bad + 1)); diag "half-written: $(head -c 200 "$F")"; continue; fi
	got=$(lsn_num "$(ckpt_lsn "$T/cfg.yaml")")
	if [ "$got" -lt "${last:-$acked}" ]; then bad=$((bad + 1)); diag "behind: $got < $last"; fi
done
kill -KILL $LOOP 2>/dev/null; wait $LOOP 2>/dev/null
ok $([ $bad = 0 ] && [ $n -gt 0 ]; echo $?) "$n random kills -9 of a put loop: never half-written, never behind the last acknowledged put ($(wc -l < "$T/acked") puts acknowledged)"
done_testing
