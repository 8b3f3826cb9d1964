#!/usr/bin/env bash
# capture-pg's start with many tables: the catalogue is asked about them a
# batch at a time (lib/pg/pgcat.c, PGCAT_BATCH), not four questions a
# table, nor a question a table about its owner - at 4,000 tables that
# was 25 s before the slot streamed. Counted as the requests capture-pg
# sends the server (strace), then the stream checked on the last table.
. "$(dirname "$0")/../lib.sh"

command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null ||
	{ echo "1..0 # skip strace missing or not permitted"; exit 0; }
S=cap_cat
N=120
drop_slot $S
psql_q -c "do \$\$ begin for i in 1..$N loop
	execute format('drop table if exists cc%s', i);
	execute format('create table cc%s (id int primary key, v text)', i);
	end loop; end \$\$"
mkhead "$T/cfg.yaml" $S
{
	echo "sync:"
	for i in $(seq 1 $N); do
		printf '  cc%s:\n    table: public.cc%s\n    index: %s_cc%s\n' $i $i $S $i
	done
} >> "$T/cfg.yaml"

strace -f -e trace=sendto -o "$T/st" capture-pg -c "$T/cfg.yaml" > "$T/out.frames" 2> "$T/err" &
C=$!; cleanup_add $C
wait_for 60 grep -q "streaming slot" "$T/err"
ok $? "capture-pg streams $N tables ($(grep -c 'created publication' "$T/err") publication created)"
sends=$(grep -c 'sendto(' "$T/st")
ok $([ "$sends" -lt $((N / 2)) ]; echo $?) "its start sent the server $sends requests for $N tables (fewer than one a table)"
psql_q -c "insert into cc$N values (1, 'last')"
wait_for 30 grep -q "\"public.cc$N\"" "$T/out.frames"
ok $? "an insert into the last table is streamed"
# capture-pg itself (strace's child) stops; strace ends with it
pkill -TERM -P $C 2>/dev/null; wait $C 2>/dev/null

[ $_tap_fail -gt 0 ] && { diag "err:"; tail -n 5 "$T/err" | sed 's/^/#   /'; }
sleep 0.5
drop_slot $S
psql_q -c "do \$\$ begin for i in 1..$N loop
	execute format('drop table if exists cc%s', i);
	end loop; end \$\$"
done_testing
