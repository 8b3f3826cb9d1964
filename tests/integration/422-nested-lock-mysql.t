#!/usr/bin/env bash
# Nested documents on MariaDB: capture-mysql's commit-time re-read of a
# parent meets a row lock another session holds. Its re-read session waits
# at most 3 s for a lock (innodb_lock_wait_timeout, the global value when
# it connected, put back at once), so the read fails with 1205: it is read
# again in place, each attempt logged with the parent table, and once the
# lock is gone the parent's document is written with the new child and
# the capture goes on. A lock held past every attempt ends the capture
# with 75 as before (the supervisor replays from the checkpoint). A real
# deadlock (1213) with another session is read again the same way.
# Run under tests/servers/run-with.sh --mariadb.
. "$(dirname "$0")/../mysql-lib.sh"

my_raw "DROP TABLE IF EXISTS nl_parents, nl_items;
CREATE TABLE nl_parents (id int PRIMARY KEY, name varchar(20));
CREATE TABLE nl_items (id int PRIMARY KEY, parent_id int, v int, KEY (parent_id));
INSERT INTO nl_parents VALUES (1, 'one'), (2, 'two');
INSERT INTO nl_items VALUES (10, 1, 1), (20, 2, 2)"
ok $? "the tables and their rows"
my_config "$T/cfg.yaml" x
sed -i '/^sync:/,$d' "$T/cfg.yaml"
cat >> "$T/cfg.yaml" <<YAML
sync:
  parents:
    table: $MYSQL_DB.nl_parents
    index: nl_parents
    children:
      - {table: $MYSQL_DB.nl_items, field: items, foreign_key: parent_id, columns: [id, v]}
YAML

was=$(my_root "SELECT @@GLOBAL.innodb_lock_wait_timeout")
my_root "SET GLOBAL innodb_lock_wait_timeout = 3"
cap_start "$T/cap.log" "$T/f" -c "$T/cfg.yaml"
started=$?
my_root "SET GLOBAL innodb_lock_wait_timeout = $was"
ok $started "capture-mysql starts, its sessions waiting 3 s for a lock (the global is $was again)"

# hold SECONDS ID: another session holds parent ID's row (FOR UPDATE)
# for SECONDS, then commits; HOLD is the client's pid, HOLD_ID the
# session's. Returns once it holds the row.
hold() {
	: > "$T/hold.out"
	mariadb --no-defaults -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" -N -B \
		--unbuffered "$MYSQL_DB" -e "SELECT CONNECTION_ID(); BEGIN;
		SELECT id FROM nl_parents WHERE id = $2 FOR UPDATE;
		SELECT 'held'; DO SLEEP($1); COMMIT" > "$T/hold.out" 2>&1 &
	HOLD=$!
	cleanup_add $HOLD
	wait_for 20 grep -q held "$T/hold.out" || return 1
	HOLD_ID=$(head -1 "$T/hold.out")
}
parent_has() {	# parent_has ID ITEM: a re-read frame of ID embeds ITEM
	[ "$(frame_count "$T/f" ".k==\"row\" and .op==\"u\" and .new.id==$1 and
		(.new.items | map(.id) | index($2)) != null")" -ge 1 ]
}

hold 5 1
ok $? "another session holds parent 1's row for 5 s"
my_raw "INSERT INTO nl_items VALUES (11, 1, 5)"
wait_for 30 parent_has 1 11
ok $? "parent 1 is written with its new child once the lock is gone"
wait "$HOLD"
n=$(grep -c "table 'p2o.nl_parents': reading parents again: Lock wait timeout exceeded.*(attempt [0-9] of 4); trying again" "$T/cap.log")
ok $([ "$n" -ge 1 ] && [ "$n" -le 3 ]; echo $?) \
	"each timed-out attempt is logged with the parent table ($n)"
grep -q "(attempt 1 of 4)" "$T/cap.log"
ok $? "the first attempt counts as 1"
grep "trying again" "$T/cap.log" | head -n 3 | sed 's/^/# /'
kill -0 "$CAP" 2>/dev/null
ok $? "the capture goes on"
ok $(frames "$T/f" | jq -se '[.[] | select(.k=="row" and .op=="u" and .new.id==1)] | length == 1 and
	.[0].new.items == [{"id":10,"v":1},{"id":11,"v":5}] and .[0].new.name == "one"' >/dev/null; echo $?) \
	"written once, with both children"
ok $(frames "$T/f" | jq -se '(map(.k) | index("commit")) as $c | $c > 0 and
	.[$c - 1].k == "row" and .[$c - 1].new.id == 1' >/dev/null; echo $?) \
	"ahead of its transaction's commit frame"

my_raw "INSERT INTO nl_items VALUES (21, 2, 6)"
wait_for 30 parent_has 2 21
ok $? "an unlocked parent after it: written at once"
ok $(grep -c "trying again" "$T/cap.log" | { read c; [ "$c" -eq "$n" ]; }; echo $?) \
	"without a retry"

# a deadlock: session B holds parent 2's row; a transaction's children of
# parents 1 and 2 have the capture lock 1 (shared) and wait for 2; B then
# asks for 1. InnoDB rolls back the one that changed nothing - the
# capture's read (1213) - and B goes on; the read is run again. B asks
# within the capture's 3 s wait: 1 s was too short for a loaded machine
mkfifo "$T/b.in"
mariadb --no-defaults -h"$MYSQL_HOST" -P"$MYSQL_TCP_PORT" -u"$MYSQL_USER" -N -B \
	--unbuffered "$MYSQL_DB" < "$T/b.in" > "$T/b.out" 2>&1 &
B=$!
cleanup_add $B
exec 3> "$T/b.in"
echo "BEGIN; UPDATE nl_parents SET name = 'two b' WHERE id = 2; SELECT 'holds 2';" >&3
wait_for 20 grep -q "holds 2" "$T/b.out"
ok $? "session B holds parent 2's row"
my_raw "BEGIN; INSERT INTO nl_items VALUES (13, 1, 8), (22, 2, 9); COMMIT"
waiting() { [ "$(my_root "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'")" -ge 1 ]; }
wait_for 20 waiting
ok $? "the capture's re-read of parents 1 and 2 waits"
echo "UPDATE nl_parents SET name = 'one b' WHERE id = 1; SELECT 'holds 1';" >&3
wait_for 20 grep -q "holds 1" "$T/b.out"
ok $? "B's update of parent 1 goes through: the capture's read was the victim"
echo "COMMIT; SELECT 'committed';" >&3
exec 3>&-
wait "$B"
ok $? "B commits"
grep -q "table 'p2o.nl_parents': reading parents again: Deadlock found when trying to get lock.*(attempt [0-9] of 4); trying again" "$T/cap.log"
ok $? "the deadlock is logged with the parent table and the attempt"
both() {
	frames "$T/f" | jq -se '[.[] | select(.k=="row" and .op=="u")] as $u |
		any($u[]; .new.id == 1 and .new.name == "one b" and (.new.items | map(.id)) == [10, 11, 13]) and
		any($u[]; .new.id == 2 and .new.name == "two b" and (.new.items | map(.id)) == [20, 21, 22])'
}
wait_for 30 both
ok $? "both parents are written with their new children and B's names"
kill -0 "$CAP" 2>/dev/null
ok $? "the capture goes on"
n=$(grep -c "trying again" "$T/cap.log")

hold 30 1
ok $? "parent 1's row held again, for longer than every attempt"
my_raw "INSERT INTO nl_items VALUES (12, 1, 7)"
wait_for 30 sh -c "! kill -0 $CAP 2>/dev/null"
ok $? "the capture ends"
wait "$CAP"
ok $([ $? -eq 75 ]; echo $?) "with 75, the existing exit: replayed from the checkpoint"
ok $([ "$(grep -c "trying again" "$T/cap.log")" -eq $((n + 3)) ]; echo $?) \
	"after 3 more attempts, each logged"
grep -q "(attempt 3 of 4)" "$T/cap.log" && ! grep -q "(attempt 4 of 4)" "$T/cap.log"
ok $? "the fourth failure is not retried"
# the session, not only its client: a sleeping session keeps its lock
my_root "KILL $HOLD_ID"
wait "$HOLD" 2>/dev/null
my_raw "DROP TABLE nl_parents, nl_items"
done_testing
