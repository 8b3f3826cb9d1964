#!/usr/bin/env bash
# fake-stage.sh - a stand-in for ckpt, capture-pg, loader, shaper and writer, for
# testing pg2osync-supervise without servers (t-supervisor-e2e). It acts as
# the tool named by $0 (the test links it under each name next to a copy
# of the supervisor). Stand-ins talk to each other in plain lines
# ("commit N"); only what the supervisor sees is framed.
#
# $FAKE_DIR holds the state and the records the test checks (under a
# directory of its own per source, $FAKE_DIR/<name>, when the supervisor
# runs several and names each stage's in P2O_LOG_SOURCE):
#   ckpt.pos         the "stored" checkpoint (survives restarts)
#   load.tables      optional: the JSON array ckpt's load frame lists
#   argv.<tool>      each start's arguments, one line per start
#   acks             every ack the capture received
#   load.got         the load frames the loader received
#   marked           every mark ckpt was asked to store
#   pipe.writer      the size of the writer's stdin pipe, once per start
#   behaviour.<tool> optional: what this tool does this time (read once
#                    per start, first line consumed):
#                      exit:N      say hello, then exit N
#                      nohello     never say hello (sleep)
#                      proto:N     say hello with protocol N
#                      commits:N   (capture) N commits then stay up
#                      waves:N     (loader) N marks, each confirmed, then
#                                  exit 0
#                      torn        (loader) half a line, then kill -9 of
#                                  itself: the shaper exits 65, as the real
#                                  one does on a frame cut short
set -u
me=$(basename "$0")
dir=${FAKE_DIR:?}
if [ -n "${P2O_LOG_SOURCE:-}" ]; then
	dir=$dir/$P2O_LOG_SOURCE
	mkdir -p "$dir"
fi
echo "$*" >> "$dir/argv.$me"

frame() { printf '%d %s\n' $((${#1} + 1)) "$1"; }
ctl() { frame "$1" >&3; }

behaviour=""
if [ -s "$dir/behaviour.$me" ]; then
	behaviour=$(head -n 1 "$dir/behaviour.$me")
	sed -i 1d "$dir/behaviour.$me"
fi

case "$me" in
ckpt)
	echo "ckpt: info: fake ckpt serving" >&2
	case "$behaviour" in exit:*) exit "${behaviour#exit:}";; esac
	while read -r n json; do
		case "$json" in
		*'"k":"get"'*)
			if [ -s "$dir/ckpt.pos" ]; then
				p=$(cat "$dir/ckpt.pos")
				frame "{\"k\":\"checkpoint\",\"pos\":$p,\"text\":\"0/$(printf %X "$p")\"}"
			else
				frame '{"k":"checkpoint"}'
			fi
			tables='[]'
			[ -s "$dir/load.tables" ] && tables=$(cat "$dir/load.tables")
			frame "{\"k\":\"load\",\"tables\":$tables}" ;;
		*'"k":"marked"'*)
			id=${json#*\"id\":\"}; id=${id%%\"*}
			echo "$id" >> "$dir/marked"
			frame "{\"k\":\"confirm\",\"id\":\"$id\"}" ;;
		*'"k":"put"'*)
			p=${json#*\"pos\":}; p=${p%%[,\}]*}
			echo "$p" > "$dir/ckpt.pos"
			echo "$p" >> "$dir/puts"
			frame "{\"k\":\"stored\",\"pos\":$p}" ;;
		esac
	done
	exit 0 ;;
esac

proto=2
case "$behaviour" in
nohello) exec sleep 1000 ;;
proto:*) proto=${behaviour#proto:} ;;
esac
ctl "{\"k\":\"hello\",\"tool\":\"$me\",\"proto\":$proto,\"pid\":$$}"
case "$behaviour" in exit:*) echo "$me: error: told to exit ${behaviour#exit:}" >&2; exit "${behaviour#exit:}";; esac

case "$me" in
capture-pg)
	start=0
	[ "${1:-}" = "-c" ] && [ "${3:-}" = "--start-pos" ] && start=$((16#${4#*/}))
	stop=0
	trap 'stop=1' TERM
	n=${behaviour#commits:}; [ "$n" = "$behaviour" ] && n=3
	pos=$start
	for i in $(seq 1 "$n"); do
		pos=$((pos + 100))
		echo "commit $pos"
	done
	ctl "{\"k\":\"stats\",\"tool\":\"capture-pg\",\"counters\":{\"events_insert\":$n,\"commits\":$n}}"
	while [ $stop = 0 ]; do sleep 0.05; done
	# the drain: stop writing, keep reading acks until fd 3 closes
	exec 1>&-
	while read -r len json <&3; do
		p=${json#*\"pos\":}; p=${p%%[,\}]*}
		echo "$p" >> "$dir/acks"
	done
	echo "capture-pg: info: fd 3 closed, exiting" >&2
	exit 0 ;;
loader)
	read -r len json <&3
	echo "$json" >> "$dir/load.got"
	if [ "$behaviour" = torn ]; then
		printf 'mark public.it'
		kill -KILL $$
	fi
	n=${behaviour#waves:}; [ "$n" = "$behaviour" ] && n=2
	for i in $(seq 1 "$n"); do
		done=false; [ "$i" = "$n" ] && done=true
		echo "mark public.items#$i $done"
		# the next wave only once this one's progress is stored
		while read -r len json <&3; do
			case "$json" in *"public.items#$i\""*) break;; esac
		done
	done
	exit 0 ;;
shaper)
	# copy rows come on fd 4 when a loader runs
	# and, like the real shaper, it ends once both inputs ended
	if [ "${3:-}" = "--load-fd" ]; then
		# (a background job's stdin is /dev/null unless redirected)
		exec 5<&0
		cat <&5 5<&- & bg=$!
		exec 5<&-
		while IFS= read -r line <&4; do echo "$line"; done
		if [ -n "$line" ]; then
			echo "shaper: error: load fd 4: truncated frame" >&2
			kill $bg
			exit 65
		fi
		wait $bg
		exit 0
	fi
	exec cat ;;
writer)
	# the size of the pipe it reads (F_GETPIPE_SZ)
	perl -e 'print fcntl(STDIN, 1032, 0), "\n"' >> "$dir/pipe.writer"
	while read -r word pos more; do
		if [ "$word" = mark ]; then
			ctl "{\"k\":\"marked\",\"id\":\"$pos\",\"table\":\"public.items\",\"progress\":{\"at\":\"$pos\"},\"done\":$more}"
			continue
		fi
		[ "$word" = commit ] || continue
		now=$(date +%s%6N)
		ctl "{\"k\":\"durable\",\"pos\":$pos,\"text\":\"0/$(printf %X "$pos")\",\"ts\":$((now - 2000)),\"at\":$now}"
	done
	echo "writer: info: input ended" >&2
	exit 0 ;;
esac
