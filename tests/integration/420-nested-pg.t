#!/usr/bin/env bash
# Nested documents on PostgreSQL: customers embed their orders (projected,
# renamed), a single profile and a count of open tickets; products embed
# their tags through a junction. Loaded, then every kind of child change
# streamed (insert, update, delete, a move to another parent, a junction
# row deleted, a tag renamed); after each step every parent document
# equals what the equivalent SQL query builds, compared by content for
# every parent. A transaction inserting 40 children of one parent costs
# one collection query (pg_stat_statements), and 2,000 children across 20
# parents in one transaction are timed, their queries and documents
# counted; a burst of 200 one-child transactions is read in fewer
# queries than commits.
. "$(dirname "$0")/../lib.sh"

S=p2o_nest
drop_slot $S; drop_loads $S n_customers n_products
os_drop n_customers; os_drop n_products
as_super() { psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d "$PGDATABASE" "$@"; }
as_super -c "create extension if not exists pg_stat_statements" >/dev/null
psql_q <<'SQL'
drop table if exists n_customers, n_orders, n_tickets, n_profiles, n_products,
	n_tags, n_product_tags;
create table n_customers (id int primary key, name text, secret text);
create table n_orders (id int primary key, customer_id int, total numeric(10,2),
	status text, placed timestamptz, note text);
create table n_tickets (id int primary key, customer_id int, status text);
create table n_profiles (id int primary key, customer_id int, bio text, vip bool);
create table n_products (id int primary key, name text);
create table n_tags (id int primary key, label text);
create table n_product_tags (product_id int, tag_id int, primary key (product_id, tag_id));
-- a delete or a move must name the parent it leaves
alter table n_orders replica identity full;
alter table n_tickets replica identity full;
insert into n_customers select g, 'c' || g, 'x' from generate_series(1, 30) g;
insert into n_orders select g, 1 + g % 25, g * 1.25, case when g % 3 = 0 then 'open' else 'done' end,
	'2024-01-02 03:04:05+00'::timestamptz + g * interval '1 hour', 'n'
	from generate_series(1, 200) g;
insert into n_tickets select g, 1 + g % 20, case when g % 2 = 0 then 'open' else 'closed' end
	from generate_series(1, 100) g;
insert into n_profiles select g, g, 'bio ' || g, g % 2 = 0 from generate_series(1, 20) g;
-- customer 5 has a second profile: the lowest key stands, and it is warned about
insert into n_profiles values (100, 5, 'second', false);
insert into n_products select g, 'p' || g from generate_series(1, 10) g;
insert into n_tags select g, 'tag' || g from generate_series(1, 8) g;
insert into n_product_tags select p, t from generate_series(1, 10) p, generate_series(1, 8) t
	where (p + t) % 3 = 0;
SQL
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  customers:
    table: n_customers
    columns: [id, name]
    children:
      - table: n_orders
        field: orders
        foreign_key: customer_id
        columns: [id, total, status, placed]
        fields: {total: amount}
      - table: n_profiles
        field: profile
        foreign_key: customer_id
        single: true
        exclude_columns: [customer_id]
    aggregates:
      - {field: open_tickets, table: n_tickets, foreign_key: customer_id,
         op: count, where: "status = 'open'"}
  products:
    table: n_products
    children:
      - table: n_tags
        field: tags
        through: n_product_tags
        foreign_key: product_id
        through_key: tag_id
YAML

# the documents as SQL builds them: numerics and timestamps as the
# pipeline writes them (text, ISO 8601 in UTC)
CUST_SQL="json_build_object('id', t.id, 'name', t.name,
 'orders', coalesce((select json_agg(json_build_object('id', o.id, 'amount', o.total::text,
	'status', o.status, 'placed', to_char(o.placed at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))
	order by o.id) from n_orders o where o.customer_id = t.id), '[]'::json),
 'profile', (select json_build_object('id', p.id, 'bio', p.bio, 'vip', p.vip)
	from n_profiles p where p.customer_id = t.id order by p.id limit 1),
 'open_tickets', (select count(*) from n_tickets k where k.customer_id = t.id and k.status = 'open'))"
PROD_SQL="json_build_object('id', t.id, 'name', t.name,
 'tags', coalesce((select json_agg(json_build_object('id', g.id, 'label', g.label) order by g.id)
	from n_tags g join n_product_tags j on j.tag_id = g.id where j.product_id = t.id), '[]'::json))"
both_equal() {
	wait_equal n_customers n_customers "$1" "$CUST_SQL" > "$T/cmp.out" &&
	wait_equal n_products n_products "$1" "$PROD_SQL" >> "$T/cmp.out"
	local rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$T/cmp.out"
	return $rc
}
refetches() {	# the calls of the statement that reads customers again
	psql_q -c "select coalesce(sum(calls), 0) from pg_stat_statements
		where query like '%FROM \"public\".\"n_customers\" p2o_p WHERE%'"
}

sup_start
ok $? "supervisor reports healthy"
grep -q "table 'public.n_profiles' (a collection of sync section 'customers'): column 'customer_id' is not in its replica identity.*ALTER TABLE public.n_profiles REPLICA IDENTITY FULL" "$T/sup.log"
ok $? "a child whose foreign key is not in its replica identity is warned about, with the ALTER"
ok $([ "$(psql_q -c "select count(*) from pg_publication_tables where pubname = '$S'")" = 7 ]; echo $?) \
	"the child, junction and counted tables joined the publication"

both_equal 60
ok $? "loaded: every parent equals its SQL query"
grep -q "1 parent matched more than one row of 'public.n_profiles' ('profile' is single; the lowest key is embedded); the worst, parent 5, matched 2" "$T/sup.log"
ok $? "a single child's second row is one warning naming the collection, count and parent"

psql_q <<'SQL'
insert into n_orders values (1001, 3, 9.99, 'open', '2024-06-01 10:00:00+00', 'new');
update n_orders set total = 77.70, status = 'open' where id = 5;
delete from n_orders where id = 6;
update n_orders set customer_id = 26 where id = 7;
insert into n_tickets values (1001, 26, 'open');
update n_tickets set status = 'closed' where id = 2;
update n_tickets set customer_id = 27 where id = 4;
update n_profiles set bio = 'changed' where customer_id = 2;
insert into n_profiles values (200, 29, 'late', true);
update n_customers set name = 'renamed' where id = 1;
SQL
both_equal 30
ok $? "child inserts, updates, deletes, moves, counted rows and a parent update: every parent equals its query"
ok $(curl -sS "$OS_URL/n_customers/_doc/26" | jq -e '._source.orders | map(.id) | index(7) != null' >/dev/null; echo $?) \
	"a moved order is under its new customer"
ok $(curl -sS "$OS_URL/n_customers/_doc/8" | jq -e '._source.orders | map(.id) | index(7) == null' >/dev/null; echo $?) \
	"and gone from its old one"

psql_q <<'SQL'
delete from n_product_tags where product_id = 1 and tag_id = 2;
insert into n_product_tags values (1, 1);
update n_tags set label = 'renamed' where id = 5;
delete from n_customers where id = 30;
SQL
both_equal 30
ok $? "a junction row deleted and one added, a tag renamed, a parent deleted: every parent equals its query"

before=$(refetches)
psql_q -c "begin; insert into n_orders select g, 10, g, 'open', '2024-06-01 10:00:00+00', 'x' from generate_series(5001, 5040) g; commit;"
both_equal 30
after=$(refetches)
ok $([ $((after - before)) = 1 ]; echo $?) \
	"40 children of one parent in one transaction: $((after - before)) collection query (pg_stat_statements)"

written() {	# documents the writer has written, by its own counter
	metrics_text | awk '$1 == "pg2osync_documents_total{op=\"index\"}" {print $2}'
}
sleep 2; ver0=$(written)
before=$(refetches)
t0=$(date +%s.%N)
psql_q -c "begin; insert into n_orders select g, 1 + g % 20, g, 'done', '2024-06-01 10:00:00+00', 'y' from generate_series(10001, 12000) g; commit;"
both_equal 60
t1=$(date +%s.%N)
after=$(refetches)
sleep 2; ver1=$(written)
ok $([ $((after - before)) = 1 ] && [ $((ver1 - ver0)) = 20 ]; echo $?) \
	"2,000 children across 20 parents in one transaction: $((after - before)) query, $((ver1 - ver0)) documents written, current in $(printf '%.2f' "$(echo "$t1 - $t0" | bc)") s"
diag "2000 children / 20 parents: queries=$((after - before)) documents=$((ver1 - ver0)) seconds=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)")"

# a burst of one-child transactions: the capture reads what the server
# had already sent as one burst, so its parents are read once for many
# commits (without that, exactly one read per transaction)
for i in $(seq 1 200); do
	echo "update n_orders set total = total + 1 where id = $i;"
done > "$T/burst.sql"
before=$(refetches)
t0=$(date +%s.%N)
psql_q -f "$T/burst.sql"
both_equal 60
ok $? "200 one-child transactions in a burst: every parent equals its query"
t1=$(date +%s.%N)
after=$(refetches)
ok $([ $((after - before)) -lt 200 ] && [ $((after - before)) -ge 1 ]; echo $?) \
	"their parents were read in $((after - before)) queries for 200 commits"
diag "burst of 200 one-child transactions: queries=$((after - before)) current in $(printf '%.2f' "$(echo "$t1 - $t0" | bc)") s"

psql_q -c "truncate n_tickets"
wait_for 30 grep -q "table 'public.n_tickets' was truncated; the documents of sync section 'customers' still embed its rows and are not rewritten: touching the parents rewrites them (UPDATE public.n_customers SET id = id)" "$T/sup.log"
ok $? "a child's truncate is not applied to the parents, and says what rebuilds them"
psql_q -c "update n_customers set id = id"
both_equal 30
ok $? "which it does"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
drop_slot $S
done_testing
