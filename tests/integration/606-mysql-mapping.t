#!/usr/bin/env bash
# Issue 37's mapping options from a MariaDB binlog: pseudonyms (the tokens
# an independent AES-SIV gives, one token across two tables sharing a
# scope), a lookup on an INT code, a split by a string, a strptime date,
# typed constants and a fan-out of a delimited VARCHAR. The documents are
# the same when the initial load wrote them, when the binlog rewrote them,
# after a resnapshot, and after a kill -9 replayed the changes since the
# checkpoint (verify then finds nothing); no key and no clear value in a
# log line.
. "$(dirname "$0")/../mysql-lib.sh"

KEY=$(python3 -c 'import os; print(os.urandom(64).hex())')
export P2O_TEST_PSEUDONYM_KEY=$KEY
token() {
	python3 - "$@" <<'PY'
import base64, sys
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
key, scope, text = bytes.fromhex(sys.argv[1]), sys.argv[2], sys.argv[3]
sealed = AESSIV(key).encrypt(text.encode(), [scope.encode()])
print(base64.urlsafe_b64encode(sealed).decode().rstrip("="))
PY
}
MY_SERVER_ID=4242424606
TABLES="mm_people mm_orders mm_posts mm_mark"
my_fresh_stream $TABLES
for t in $TABLES; do os_drop "mm_$t"; done
my_sql "DROP TABLE IF EXISTS mm_people, mm_orders, mm_posts, mm_mark;
CREATE TABLE mm_people (id INT PRIMARY KEY, email VARCHAR(80), status INT,
	tags VARCHAR(80), born VARCHAR(20), touched INT NOT NULL DEFAULT 0) DEFAULT CHARSET utf8mb4;
CREATE TABLE mm_orders (id INT PRIMARY KEY, buyer VARCHAR(80), total DECIMAL(8,2),
	touched INT NOT NULL DEFAULT 0) DEFAULT CHARSET utf8mb4;
CREATE TABLE mm_posts (id INT PRIMARY KEY, title VARCHAR(40), tag_csv VARCHAR(80),
	touched INT NOT NULL DEFAULT 0) DEFAULT CHARSET utf8mb4;
CREATE TABLE mm_mark (id INT PRIMARY KEY);
INSERT INTO mm_people (id, email, status, tags, born) VALUES
	(1, 'ann@example.org', 1, 'a | b', '05 Mar 1990'), (2, 'bob@example.org', 7, '', '31 Dec 1999');
INSERT INTO mm_orders (id, buyer, total) VALUES (10, 'ann@example.org', 12.50);
INSERT INTO mm_posts (id, title, tag_csv) VALUES (1, 'lamp', 'red, blue,,'), (2, 'desk', ' oak ');"
METRICS_PORT=$(free_port)
CKPT_MS=3000 my_config "$T/cfg.yaml" mm $TABLES
python3 - "$T/cfg.yaml" "$MYSQL_DB" <<'PY'
import sys
path, db = sys.argv[1], sys.argv[2]
s = open(path).read()
s = s.replace(f"    table: {db}.mm_people\n", f"""    table: {db}.mm_people
    exclude_columns: [touched]
    transform:
      email: {{pseudonym: {{key_env: P2O_TEST_PSEUDONYM_KEY, scope: email}}}}
      status: {{lookup: {{map: {{"1": active, "2": closed}}, default: unknown}}}}
      tags: {{split: " | "}}
      born: {{date: "%d %b %Y"}}
    constants:
      version: 3
      vip: false
""")
s = s.replace(f"    table: {db}.mm_orders\n", f"""    table: {db}.mm_orders
    exclude_columns: [touched]
    transform:
      buyer: {{pseudonym: {{key_env: P2O_TEST_PSEUDONYM_KEY, scope: email}}}}
""")
s = s.replace(f"    table: {db}.mm_posts\n", f"""    table: {db}.mm_posts
    exclude_columns: [touched]
    fan_out: {{column: tag_csv, by: ",", id: "{{id}}-{{tag}}", element: tag}}
""")
open(path, "w").write(s)
PY
sup_start; ok $? "supervisor reports healthy"
found() { curl -sS "$OS_URL/$1/_doc/$2" | jq -e .found >/dev/null; }
dump() {
	curl -sS -XPOST "$OS_URL/$1/_refresh" >/dev/null
	curl -sS "$OS_URL/$1/_search?size=1000" | jq -cS '[.hits.hits[] | {_id, _source}] | sort_by(._id)'
}
dump_all() { local i; for i in mm_mm_people mm_mm_orders mm_mm_posts; do echo "$i $(dump $i)"; done; }
marker=0
settled() {
	marker=$((marker + 1))
	my_sql "INSERT INTO mm_mark VALUES ($marker)"
	wait_for 60 found mm_mm_mark $marker
}
loaded() { [ "$(os_count mm_mm_people)" = 2 ] && [ "$(os_count mm_mm_orders)" = 1 ] && [ "$(os_count mm_mm_posts)" = 3 ]; }
wait_for 120 loaded
ok $? "the initial load wrote every document"
doc=$(curl -sS "$OS_URL/mm_mm_people/_doc/1" | jq -c ._source)
ok $(echo "$doc" | jq -e --arg e "$(token "$KEY" email ann@example.org)" '.email == $e and .status == "active" and
	.tags == ["a","b"] and .born == "1990-03-05" and .version == 3 and .vip == false and (has("touched") | not)' >/dev/null; echo $?) \
	"a pseudonym, a lookup of an INT, a split, a strptime date, typed constants: $(echo "$doc" | jq -c 'del(.email)')"
ok $([ "$(curl -sS "$OS_URL/mm_mm_orders/_doc/10" | jq -r ._source.buyer)" = "$(echo "$doc" | jq -r .email)" ]; echo $?) \
	"one token across two tables sharing a scope"
ok $([ "$(curl -sS "$OS_URL/mm_mm_people/_doc/2" | jq -r ._source.status)" = unknown ]; echo $?) "a miss takes the default"
ok $([ "$(dump mm_mm_posts | jq -r 'map(._id) | join(" ")')" = "1-blue 1-red 2-oak" ]; echo $?) \
	"fan_out.by on a VARCHAR: $(dump mm_mm_posts | jq -r 'map(._id) | join(" ")')"
dump_all > "$T/load.json"

# every row again through the binlog (a column no document holds: a
# MariaDB update that changes nothing writes no row event)
my_sql "UPDATE mm_people SET touched = touched + 1; UPDATE mm_orders SET touched = touched + 1;
	UPDATE mm_posts SET touched = touched + 1"
settled
dump_all > "$T/stream.json"
ok $(cmp -s "$T/load.json" "$T/stream.json"; echo $?) "the binlog's documents are the load's, byte for byte"
[ $_tap_fail -gt 0 ] && diff "$T/load.json" "$T/stream.json" | head -5 | sed 's/^/#   /'
rs=0
for t in mm_people mm_orders mm_posts; do pg2osync resnapshot -c "$T/cfg.yaml" --table $t >> "$T/resnap.out" 2>&1 || rs=1; done
ok $rs "resnapshot of every section"
dump_all > "$T/resnap.json"
ok $(cmp -s "$T/load.json" "$T/resnap.json"; echo $?) "the resnapshot's documents are the load's"

my_sql "UPDATE mm_people SET email = 'ann@example.net', tags = 'c | d' WHERE id = 1;
	UPDATE mm_orders SET buyer = 'ann@example.net' WHERE id = 10;
	UPDATE mm_posts SET tag_csv = 'green' WHERE id = 1; DELETE FROM mm_posts WHERE id = 2"
sleep 0.5
kill_pipeline
sup_start; ok $? "after a kill -9 of every process the pipeline is up again"
settled
check "pg2osync verify finds the documents a fresh shaping renders" -- pg2osync verify -c "$T/cfg.yaml"
ok $(curl -sS "$OS_URL/mm_mm_people/_doc/1" | jq -e --arg e "$(token "$KEY" email ann@example.net)" \
	'._source.email == $e and ._source.tags == ["c","d"]' >/dev/null; echo $?) "the replayed change's token"
ok $([ "$(dump mm_mm_posts | jq -r 'map(._id) | join(" ")')" = "1-green" ]; echo $?) "the replayed elements"

leaks=0
for f in "$T"/*.out "$T/sup.log"; do
	for w in "$KEY" "${KEY:0:16}" ann@example bob@example; do
		grep -qF -- "$w" "$f" && { leaks=$((leaks + 1)); diag "$(basename "$f") holds '$w'"; }
	done
done
ok $leaks "no log line holds a key byte or a clear value"
n=$(argv_secrets "$T/" "$KEY" "${KEY:0:32}" ann@example)
ok $([ "$n" = 0 ]; echo $?) "no argv holds them"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
done_testing
