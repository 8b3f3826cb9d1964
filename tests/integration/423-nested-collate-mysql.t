#!/usr/bin/env bash
# Nested documents on MariaDB under a case-insensitive, PAD SPACE
# collation (utf8mb4_general_ci): the parents' key is a varchar, and their
# children name them by a foreign key that differs from the parent's key
# only by case or by trailing spaces ('A' and 'a ' are parent 'a' to the
# server: an InnoDB foreign key accepts them, WHERE pid = 'a' returns
# them). A child table (with that foreign key), a junction and a count of
# open tickets are keyed the same way. After the load and after streamed
# inserts, updates, deletes and moves of such rows, every parent document
# equals what the server's own comparison builds - the expected rows are
# joined to their parent in SQL (p.id = c.pid) and filed under the
# parent's own key - and the documents are the parents' own keys, no
# other spelling.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

my_fresh_stream ncl_parents
os_drop ncl_parents
CI="CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
my_raw "DROP TABLE IF EXISTS ncl_items, ncl_parent_tags, ncl_tags, ncl_tickets, ncl_parents;
CREATE TABLE ncl_parents (id varchar(10) $CI PRIMARY KEY, name varchar(20)) ENGINE=InnoDB;
CREATE TABLE ncl_items (id int PRIMARY KEY, pid varchar(10) $CI, v int, KEY (pid),
	FOREIGN KEY (pid) REFERENCES ncl_parents (id)) ENGINE=InnoDB;
CREATE TABLE ncl_tags (id int PRIMARY KEY, label varchar(20));
CREATE TABLE ncl_parent_tags (pid varchar(10) $CI, tag_id int, PRIMARY KEY (pid, tag_id), KEY (tag_id));
CREATE TABLE ncl_tickets (id int PRIMARY KEY, pid varchar(10) $CI, status varchar(10), KEY (pid));
INSERT INTO ncl_parents VALUES ('a', 'one'), ('b', 'two'), ('c', 'three'), ('Dd', 'four');
INSERT INTO ncl_items VALUES (1, 'a', 10), (2, 'A', 20), (3, 'a ', 30), (4, 'b', 40),
	(5, 'B  ', 50), (6, 'dD', 60), (7, 'DD ', 70), (8, 'Dd', 80);
INSERT INTO ncl_tags VALUES (1, 't1'), (2, 't2'), (3, 't3');
INSERT INTO ncl_parent_tags VALUES ('A', 1), ('a ', 2), ('b', 1), ('B ', 3), ('dd', 2);
INSERT INTO ncl_tickets VALUES (1, 'a', 'open'), (2, 'A', 'open'), (3, 'a  ', 'open'),
	(4, 'A ', 'closed'), (5, 'B', 'open'), (6, 'dD', 'open')"
ok $? "the tables and their rows (an InnoDB foreign key accepts 'A', 'a ', 'B  ', 'dD')"
ok $([ "$(my_raw "SELECT GROUP_CONCAT(id ORDER BY id) FROM ncl_items WHERE pid = 'a'")" = "1,2,3" ]; echo $?) \
	"the server says items 1, 2 and 3 are parent 'a''s"

METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" x
sed -i '/^sync:/,$d' "$T/cfg.yaml"
cat >> "$T/cfg.yaml" <<YAML
sync:
  parents:
    table: $MYSQL_DB.ncl_parents
    index: ncl_parents
    children:
      - {table: $MYSQL_DB.ncl_items, field: items, foreign_key: pid, columns: [id, pid, v]}
      - {table: $MYSQL_DB.ncl_tags, field: tags, through: $MYSQL_DB.ncl_parent_tags,
         foreign_key: pid, through_key: tag_id}
    aggregates:
      - {field: open_tickets, table: $MYSQL_DB.ncl_tickets, foreign_key: pid,
         op: count, where: "status = 'open'"}
engine:
  checkpoint_interval_ms: 200
metrics:
  bind: 127.0.0.1:$METRICS_PORT
YAML

# the expected documents: each row filed under the parent the server's
# comparison gives it (a join on the parent table), by that parent's own
# key bytes; tests/helper/nest-expect.py groups and compares them
rows() { my_raw "SELECT $1" > "$T/$2.jsonl"; }
cat > "$T/spec" <<EOF
{"parents": "$T/p.jsonl", "collections": [
 {"field": "items", "kind": "array", "rows": "$T/i.jsonl"},
 {"field": "tags", "kind": "array", "rows": "$T/t.jsonl"},
 {"field": "open_tickets", "kind": "count", "rows": "$T/k.jsonl"}]}
EOF
expect_once() {
	curl -sS --max-time 30 -XPOST "$OS_URL/ncl_parents/_refresh" >/dev/null 2>&1
	rows "JSON_OBJECT('id', id, 'name', name) FROM ncl_parents" p &&
	rows "JSON_OBJECT('_fk', p.id, '_k', i.id, 'id', i.id, 'pid', i.pid, 'v', i.v)
		FROM ncl_items i JOIN ncl_parents p ON p.id = i.pid" i &&
	rows "JSON_OBJECT('_fk', p.id, '_k', g.id, 'id', g.id, 'label', g.label)
		FROM ncl_tags g JOIN ncl_parent_tags j ON j.tag_id = g.id JOIN ncl_parents p ON p.id = j.pid" t &&
	rows "JSON_OBJECT('_fk', p.id, 'n', COUNT(*)) FROM ncl_tickets k JOIN ncl_parents p ON p.id = k.pid
		WHERE k.status = 'open' GROUP BY p.id" k &&
	python3 "$TOP/tests/helper/nest-expect.py" "$OS_URL" ncl_parents "$T/spec"
}
all_equal() {
	local i
	for ((i = 0; i < $1 * 2; i++)); do
		expect_once > "$T/cmp.out" 2>&1 && return 0
		sleep 0.5
	done
	sed 's/^/# /' "$T/cmp.out" | tail -n 12
	return 1
}
# doc ID JQ: parent ID's document satisfies JQ
doc() { curl -sS "$OS_URL/ncl_parents/_doc/$1" | jq -e "._source | $2" >/dev/null; }

sv_start "$T/sup.log"
wait_for 60 healthy
ok $? "the pipeline is up"
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 120 load_done
ok $? "the load finished"
all_equal 60
ok $? "loaded: every parent equals the rows the server matches to it"
doc a '(.items | map(.id)) == [1, 2, 3] and (.items | map(.pid)) == ["a", "A", "a "] and
	(.tags | map(.id)) == [1, 2] and .open_tickets == 3'
ok $? "loaded: parent 'a' holds the items, tags and open tickets named 'a', 'A' and 'a ', each child's own key bytes kept"
doc Dd '(.items | map(.id)) == [6, 7, 8] and (.tags | map(.id)) == [2] and .open_tickets == 1'
ok $? "loaded: parent 'Dd' holds 'dD', 'DD ' and 'Dd'"
ok $([ "$(curl -sS "$OS_URL/ncl_parents/_count" | jq .count)" = 4 ]; echo $?) \
	"four documents, one per parent"

# a child inserted under another spelling; one updated in place; one moved
# from 'a' spelled 'a ' to 'b' spelled 'B'; one deleted
my_raw "INSERT INTO ncl_items VALUES (9, 'C  ', 90), (10, 'A', 100);
UPDATE ncl_items SET v = 21 WHERE id = 2;
UPDATE ncl_items SET pid = 'B' WHERE id = 3;
DELETE FROM ncl_items WHERE id = 5"
all_equal 30
ok $? "streamed child insert, update, move and delete: every parent equals the rows the server matches to it"
doc a '(.items | map(.id)) == [1, 2, 10] and .items[1].v == 21' &&
doc b '(.items | map(.id)) == [3, 4]' && doc c '(.items | map(.id)) == [9]'
ok $? "'a' keeps 1, 2 (updated) and 10 (inserted as 'A'); 3 moved to 'b'; 'C  ' is 'c''s"

# the same through the junction and the counted table, in one transaction
my_raw "BEGIN;
INSERT INTO ncl_parent_tags VALUES ('C', 3), ('DD ', 1);
DELETE FROM ncl_parent_tags WHERE pid = 'a' AND tag_id = 2;
UPDATE ncl_parent_tags SET pid = 'c ' WHERE pid = 'A' AND tag_id = 1;
INSERT INTO ncl_tickets VALUES (7, 'C ', 'open');
UPDATE ncl_tickets SET status = 'open' WHERE id = 4;
UPDATE ncl_tickets SET pid = 'dd' WHERE id = 1;
DELETE FROM ncl_tickets WHERE id = 5;
COMMIT"
all_equal 30
ok $? "streamed junction and counted rows (insert, delete, move): every parent equals the rows the server matches to it"
doc a '.tags == [] and .open_tickets == 3' && doc b '(.tags | map(.id)) == [1, 3] and .open_tickets == 0' &&
doc c '(.tags | map(.id)) == [1, 3] and .open_tickets == 1' && doc Dd '(.tags | map(.id)) == [1, 2] and .open_tickets == 2'
ok $? "the tags and counts moved with them"

# a parent updated, its children named by other spellings re-read with it
my_raw "UPDATE ncl_parents SET name = 'uno' WHERE id = 'A'"
all_equal 30
ok $? "a parent updated (named 'A'): every parent equals the rows the server matches to it"
doc a '.name == "uno" and (.items | map(.id)) == [1, 2, 10]'
ok $? "'a' renamed, its children kept"
ok $([ "$(curl -sS "$OS_URL/ncl_parents/_count" | jq .count)" = 4 ]; echo $?) \
	"still four documents, each a parent's own key"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
my_raw "DROP TABLE ncl_items, ncl_parent_tags, ncl_tags, ncl_tickets, ncl_parents"
done_testing
