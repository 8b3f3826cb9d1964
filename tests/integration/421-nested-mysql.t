#!/usr/bin/env bash
# Nested documents on MariaDB: customers embed their orders (projected,
# renamed; a decimal, a datetime(6), a bigint unsigned near 2^64 and a
# JSON column among them), a single profile and a count of open tickets;
# products embed their tags through a junction. Loaded, then every kind of
# child change streamed (insert, update, delete, a move to another parent,
# junction rows deleted and added, a parent updated and deleted); after
# each step every parent document equals what the source's rows build,
# compared by content for every parent. n_orders is a sync section too:
# every embedded order equals the same row's top-level document, value
# for value. 1,000 children of one parent in one transaction cost one
# document and one query per collection (Com_select).
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

my_fresh_stream n_customers n_products n_orders
os_drop n_customers; os_drop n_products; os_drop n_orders_top
my_raw "DROP TABLE IF EXISTS n_customers, n_orders, n_tickets, n_profiles, n_products, n_tags, n_product_tags;
CREATE TABLE n_customers (id int PRIMARY KEY, name varchar(40), secret varchar(10));
CREATE TABLE n_orders (id int PRIMARY KEY, customer_id int, total decimal(10,2), status varchar(10),
	placed datetime(6), big bigint unsigned, doc json, note varchar(10), KEY (customer_id));
CREATE TABLE n_tickets (id int PRIMARY KEY, customer_id int, status varchar(10), KEY (customer_id));
CREATE TABLE n_profiles (id int PRIMARY KEY, customer_id int, bio varchar(40), vip tinyint, KEY (customer_id));
CREATE TABLE n_products (id int PRIMARY KEY, name varchar(40));
CREATE TABLE n_tags (id int PRIMARY KEY, label varchar(40));
CREATE TABLE n_product_tags (product_id int, tag_id int, PRIMARY KEY (product_id, tag_id), KEY (tag_id));
INSERT INTO n_customers SELECT seq, CONCAT('c', seq), 'x' FROM seq_1_to_30;
INSERT INTO n_orders SELECT seq, 1 + seq % 25, seq * 1.25, IF(seq % 3 = 0, 'open', 'done'),
	'2024-01-02 03:04:05.123456' + INTERVAL seq HOUR, 18446744073709551615 - seq,
	'{\"a\": [1.5, 2.5], \"b\": {\"c\": null}}', 'n' FROM seq_1_to_200;
INSERT INTO n_tickets SELECT seq, 1 + seq % 20, IF(seq % 2 = 0, 'open', 'closed') FROM seq_1_to_100;
INSERT INTO n_profiles SELECT seq, seq, CONCAT('bio ', seq), seq % 2 FROM seq_1_to_20;
INSERT INTO n_profiles VALUES (100, 5, 'second', 0);
INSERT INTO n_products SELECT seq, CONCAT('p', seq) FROM seq_1_to_10;
INSERT INTO n_tags SELECT seq, CONCAT('tag', seq) FROM seq_1_to_8;
INSERT INTO n_product_tags SELECT p.seq, t.seq FROM seq_1_to_10 p, seq_1_to_8 t WHERE (p.seq + t.seq) % 3 = 0"
ok $? "the tables and their rows"
# a number past a long is what dynamic mapping refuses
for ix in n_customers n_orders_top; do
	curl -s -XPUT -H 'Content-Type: application/json' "$OS_URL/$ix" \
		-d '{"mappings":{"dynamic_templates":[{"big":{"match":"big","mapping":{"type":"unsigned_long"}}}]}}' >/dev/null
done
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" x
sed -i '/^sync:/,$d' "$T/cfg.yaml"
cat >> "$T/cfg.yaml" <<YAML
sync:
  customers:
    table: $MYSQL_DB.n_customers
    index: n_customers
    columns: [id, name]
    children:
      - table: $MYSQL_DB.n_orders
        field: orders
        foreign_key: customer_id
        columns: [id, total, status, placed, big, doc]
        fields: {total: amount}
      - table: $MYSQL_DB.n_profiles
        field: profile
        foreign_key: customer_id
        single: true
        exclude_columns: [customer_id]
    aggregates:
      - {field: open_tickets, table: $MYSQL_DB.n_tickets, foreign_key: customer_id,
         op: count, where: "status = 'open'"}
  products:
    table: $MYSQL_DB.n_products
    index: n_products
    children:
      - table: $MYSQL_DB.n_tags
        field: tags
        through: $MYSQL_DB.n_product_tags
        foreign_key: product_id
        through_key: tag_id
  orders:
    table: $MYSQL_DB.n_orders
    index: n_orders_top
engine:
  checkpoint_interval_ms: 200
metrics:
  bind: 127.0.0.1:$METRICS_PORT
YAML

# the documents as the source's rows build them: every row one JSON object
# (decimals and datetimes as text, the datetime's space a T), grouped by
# the parent it names (tests/helper/nest-expect.py)
rows() { my_raw "SELECT $1" > "$T/$2.jsonl"; }
cat > "$T/cust.spec" <<EOF
{"parents": "$T/c.jsonl", "collections": [
 {"field": "orders", "kind": "array", "rows": "$T/o.jsonl"},
 {"field": "profile", "kind": "single", "rows": "$T/p.jsonl"},
 {"field": "open_tickets", "kind": "count", "rows": "$T/k.jsonl"}]}
EOF
cat > "$T/prod.spec" <<EOF
{"parents": "$T/pr.jsonl", "collections": [{"field": "tags", "kind": "array", "rows": "$T/tg.jsonl"}]}
EOF
expect_once() {
	curl -sS --max-time 30 -XPOST "$OS_URL/n_customers,n_products/_refresh" >/dev/null 2>&1
	rows "JSON_OBJECT('id', id, 'name', name) FROM n_customers" c &&
	rows "JSON_OBJECT('_fk', customer_id, '_k', id, 'id', id, 'amount', CAST(total AS char),
		'status', status, 'placed', REPLACE(CAST(placed AS char), ' ', 'T'), 'big', big,
		'doc', JSON_EXTRACT(doc, '\$')) FROM n_orders" o &&
	rows "JSON_OBJECT('_fk', customer_id, '_k', id, 'id', id, 'bio', bio, 'vip', vip) FROM n_profiles" p &&
	rows "JSON_OBJECT('_fk', customer_id, 'n', COUNT(*)) FROM n_tickets
		WHERE status = 'open' GROUP BY customer_id" k &&
	rows "JSON_OBJECT('id', id, 'name', name) FROM n_products" pr &&
	rows "JSON_OBJECT('_fk', j.product_id, '_k', g.id, 'id', g.id, 'label', g.label)
		FROM n_tags g JOIN n_product_tags j ON j.tag_id = g.id" tg &&
	python3 "$TOP/tests/helper/nest-expect.py" "$OS_URL" n_customers "$T/cust.spec" &&
	python3 "$TOP/tests/helper/nest-expect.py" "$OS_URL" n_products "$T/prod.spec"
}
both_equal() {
	local i
	for ((i = 0; i < $1 * 2; i++)); do
		expect_once > "$T/cmp.out" 2>&1 && return 0
		sleep 0.5
	done
	sed 's/^/# /' "$T/cmp.out" | tail -n 12
	return 1
}
# every embedded order is its row's top-level document, value for value
same_as_top() {
	curl -sS --max-time 30 -XPOST "$OS_URL/n_orders_top/_refresh" >/dev/null 2>&1
	TOP=$TOP python3 - "$OS_URL" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["TOP"], "tests"))
from compare import fetch_all
url = sys.argv[1]
top, cust = fetch_all(url, "n_orders_top"), fetch_all(url, "n_customers")
n = bad = 0
for c in cust.values():
    for o in c["orders"]:
        t = top.get(str(o["id"]))
        want = None if t is None else {"id": t["id"], "amount": t["total"], "status": t["status"],
                                       "placed": t["placed"], "big": t["big"], "doc": t["doc"]}
        n += 1
        if o != want:
            bad += 1
            print(f"order {o['id']}: embedded {json.dumps(o)} top-level {json.dumps(want)}")
print(f"orders {n} differences {bad}")
sys.exit(1 if bad or n == 0 else 0)
PY
}
com_select() { my_sql "SHOW GLOBAL STATUS LIKE 'Com_select'" | awk '{print $2}'; }

sv_start "$T/sup.log"
wait_for 60 healthy
ok $? "the pipeline is up"
grep -q "table 'p2o.n_orders' is a collection of sync section 'customers' and a sync section of its own" "$T/sup.log"
ok $? "a table that is a child and a section is warned about"
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 120 load_done
ok $? "the load finished"
both_equal 60
ok $? "loaded: every parent equals its source rows"
grep -q "1 parent matched more than one row of 'p2o.n_profiles' ('profile' is single; the lowest key is embedded); the worst, parent 5, matched 2" "$T/sup.log"
ok $? "a single child's second row is one warning naming the collection, count and parent"
same_as_top > "$T/top.out" 2>&1
ok $? "loaded: every embedded order equals its top-level document ($(tail -n 1 "$T/top.out"))"
[ $_tap_fail -gt 0 ] && sed 's/^/# /' "$T/top.out" | tail -n 5
ok $(curl -sS "$OS_URL/n_customers/_doc/2" | jq -e '._source.orders[0] | .big == 18446744073709551613
	and .amount == "1.25" and .placed == "2024-01-02T04:04:05.123456" and .doc.a[1] == 2.5' >/dev/null; echo $?) \
	"a decimal, a datetime(6), a bigint unsigned near 2^64 and a JSON column inside the array"

my_raw "INSERT INTO n_orders VALUES (1001, 3, 9.99, 'open', '2024-06-01 10:00:00.5', 18446744073709551615, '{\"x\": \"y\", \"n\": [3, 4]}', 'new');
UPDATE n_orders SET total = 77.70, status = 'open' WHERE id = 5;
DELETE FROM n_orders WHERE id = 6;
UPDATE n_orders SET customer_id = 26 WHERE id = 7;
INSERT INTO n_tickets VALUES (1001, 26, 'open');
UPDATE n_tickets SET status = 'closed' WHERE id = 2;
UPDATE n_tickets SET customer_id = 27 WHERE id = 4;
UPDATE n_profiles SET bio = 'changed' WHERE customer_id = 2;
INSERT INTO n_profiles VALUES (200, 29, 'late', 1);
UPDATE n_customers SET name = 'renamed' WHERE id = 1"
both_equal 30
ok $? "child inserts, updates, deletes, moves, counted rows and a parent update: every parent equals its source rows"
ok $(curl -sS "$OS_URL/n_customers/_doc/26" | jq -e '._source.orders | map(.id) | index(7) != null' >/dev/null; echo $?) \
	"a moved order is under its new customer"
ok $(curl -sS "$OS_URL/n_customers/_doc/8" | jq -e '._source.orders | map(.id) | index(7) == null' >/dev/null; echo $?) \
	"and gone from its old one"
same_as_top > "$T/top.out" 2>&1
ok $? "streamed: every embedded order equals its top-level document ($(tail -n 1 "$T/top.out"))"

my_raw "DELETE FROM n_product_tags WHERE product_id = 1 AND tag_id = 2;
INSERT INTO n_product_tags VALUES (1, 1);
UPDATE n_tags SET label = 'renamed' WHERE id = 5;
DELETE FROM n_customers WHERE id = 30"
both_equal 30
ok $? "a junction row deleted and one added, a tag renamed, a parent deleted: every parent equals its source rows"

written() { metric 'pg2osync_documents_total{op="index"}'; }
sleep 2; w0=$(written); before=$(com_select)
my_raw "INSERT INTO n_orders SELECT seq, 10, seq, 'open', '2024-06-01 10:00:00', seq, NULL, 'x' FROM seq_5001_to_6000"
has_1000() { [ "$(curl -sS "$OS_URL/n_customers/_doc/10" | jq '._source.orders | length')" -ge 1000 ]; }
wait_for 30 has_1000
sleep 2; after=$(com_select); w1=$(written)
# one for the parent, one per collection (orders, profile, open_tickets);
# the top-level n_orders documents are the other 1,000 written
ok $([ $((after - before)) = 4 ] && [ $((w1 - w0)) = 1001 ]; echo $?) \
	"1,000 children of one parent in one transaction: $((after - before)) queries (parent + 3 collections), $((w1 - w0)) documents written (1 parent + 1000 top-level orders)"
both_equal 30
ok $? "and the parent equals its source rows"

# 2,000 children across 20 parents in one transaction: timed, its
# queries and documents counted
sleep 2; w0=$(written); before=$(com_select)
t0=$(date +%s.%N)
my_raw "INSERT INTO n_orders SELECT seq, 1 + seq % 20, seq, 'done', '2024-06-01 10:00:00', seq, NULL, 'y' FROM seq_10001_to_12000"
# waited for by the writer's count, so the compare's reads are not counted
has_2020() { [ "$(written)" -ge $((w0 + 2020)) ]; }
wait_for 60 has_2020
t1=$(date +%s.%N)
sleep 2; after=$(com_select); w1=$(written)
ok $([ $((after - before)) = 4 ] && [ $((w1 - w0)) = 2020 ]; echo $?) \
	"2,000 children across 20 parents in one transaction: $((after - before)) queries (parent + 3 collections), $((w1 - w0)) documents written (20 parents + 2000 top-level orders)"
both_equal 60
ok $? "and every parent equals its source rows"
diag "2000 children / 20 parents: queries=$((after - before)) documents=$((w1 - w0)) seconds=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)")"

my_raw "TRUNCATE n_tickets"
wait_for 30 grep -q "table 'p2o.n_tickets' was truncated; the documents of sync section 'customers' still embed its rows and are not rewritten: pg2osync resnapshot --table p2o.n_customers rebuilds them" "$T/sup.log"
ok $? "a child's truncate is not applied to the parents, and says what rebuilds them"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
grep -q "collections: .* child rows rewrote .* parent documents in .* queries" "$T/sup.log"
ok $? "the capture says at its end how many parents its collections rewrote"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
done_testing
