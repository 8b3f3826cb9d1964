#!/usr/bin/env bash
# examples/shop.yaml on examples/shop.sql, as a user would run them: the
# rows already there are loaded and later changes streamed, through every
# shaping key the example uses (shared index, routing, transforms, renames,
# constants, fan-out, nested children and a count, a join with its cascade, a pipeline, a templated
# append-only index).
. "$(dirname "$0")/../lib.sh"
needs_module ingest-common parent-join

S=pg2osync_shop
TABLES="tenants customers staff promotions products orders order_lines audit_log"
clean() {
	drop_slot $S
	psql_q -c "drop schema if exists shop cascade" >/dev/null
	for t in $TABLES; do
		curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fload%2Fshop.$t?refresh=true" >/dev/null 2>&1 || true
	done
	os_drop tenants; os_drop people; os_drop product-tags; os_drop products; os_drop orders
	os_drop 'audit-*'
}
clean
psql_q -f "$TOP/examples/shop.sql" >/dev/null
ok $? "examples/shop.sql creates the schema"
curl -sS -XPUT "$OS_URL/_ingest/pipeline/shop-orders" -H 'content-type: application/json' \
	-d '{"processors":[{"set":{"field":"channel","value":"web"}}]}' >/dev/null

# the example as it is, but for where the servers are
cp -r "$TOP/examples/shop" "$T/"
sed -e 's/url_env: P2O_SOURCE_URL/url_env: P2O_TEST_URL/' \
    -e "s#url: http://127.0.0.1:9200#url: $OS_URL#" \
    "$TOP/examples/shop.yaml" > "$T/shop.yaml"
pg2osync-supervise -c "$T/shop.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP

doc() {	# doc INDEX ID [ROUTING] -> _source
	curl -sS "$OS_URL/$1/_doc/$2${3:+?routing=$3}" | jq -c '._source // empty'
}
has() {	# has INDEX ID ROUTING JQ-TEST (jq -e passes on no input: check it)
	local d
	d=$(doc "$1" "$2" "$3") && [ -n "$d" ] && echo "$d" | jq -e "$4" >/dev/null
}

ann=$(printf %s ann@example.com | sha256sum | cut -d' ' -f1)
wait_for 90 has people customer-acme-1 acme ".email_sha256 == \"$ann\""
st=$?; d=$(doc people customer-acme-1 acme)
ok $st "a customer loaded under its id template, routed by tenant, email hashed and renamed: $d"
ok $(has people customer-acme-1 acme '.phone == "(withheld)" and .prefs.newsletter == true and .since == "2024-01-05" and .kind == "customer" and (has("email") | not)'; echo $?) \
	"phone redacted, prefs parsed, date converted, the constant added"
wait_for 30 has people staff-eve@example.com '' '.kind == "staff" and (has("role") | not)'
st=$?; d=$(doc people staff-eve@example.com)
ok $st "staff share the index under their own ids: $d"
wait_for 30 has tenants acme '' '.source == "shop.tenants"'
ok $? "a constant rendered from {schema}.{table}"

wait_for 30 eval '[ "$(os_count product-tags)" = 4 ]'
ok $? "one document per product tag (4, got $(os_count product-tags))"
ok $(has product-tags 2-sale acme '.tag == "sale" and .until == "2025-01-31" and .price == 310 and (has("tags") | not)'; echo $?) \
	"an object element merged, the price a number: $(doc product-tags 2-sale acme)"

wait_for 30 has products 2 acme '.variants == [{"sku":"DESK-OAK","color":"oak"},{"sku":"DESK-ASH","color":"ash"}] and .tags == [{"name":"home"},{"name":"office"},{"name":"sale"}] and .reviews == 2 and .price == 310'
ok $? "a product with its variants, its tags through the junction and its review count: $(doc products 2 acme)"
ok $(has products 1 acme '.variants == [{"sku":"LAMP","color":null}] and .tags == [{"name":"home"}] and .reviews == 1'; echo $?) \
	"and another: $(doc products 1 acme)"

wait_for 30 has orders o100 '' '.channel == "web" and .total == 55.8'
ok $? "an order through the pipeline: $(doc orders o100)"
line() { curl -sS "$OS_URL/orders/_doc/l1000?routing=o100" | jq -e '._routing == "o100" and ._source.order_join.parent == "o100"' >/dev/null; }
wait_for 30 line
ok $? "its line routed to the order's shard, joined to it"
wait_for 30 eval '[ "$(os_count audit-acme)" = 1 ]'
ok $? "an append-only row in its tenant's index, created at first use"
ok $(curl -sS "$OS_URL/audit-acme/_search" | jq -e '.hits.hits[0]._source.at == "2024-06-01T10:29:58"' >/dev/null; echo $?) \
	"its date converted and renamed"

# the stream
psql_q -c "update shop.promotions set tags = '[\"home\"]' where id = 2"
wait_for 30 eval '[ "$(os_count product-tags)" = 3 ]'
ok $? "a tag removed from a promotion removes its document"
psql_q -c "insert into shop.reviews values (4, 2, 1); delete from shop.product_tags where product_id = 2 and tag_id = 3;
	update shop.variants set product_id = 1 where id = 11"
wait_for 30 has products 2 acme '.reviews == 3 and .tags == [{"name":"home"},{"name":"office"}] and .variants == [{"sku":"DESK-OAK","color":"oak"}]'
ok $? "a review, a junction row and a variant moving to another product rewrite the product: $(doc products 2 acme)"
wait_for 30 has products 1 acme '.variants == [{"sku":"DESK-ASH","color":"ash"},{"sku":"LAMP","color":null}]'
ok $? "and the product the variant moved to: $(doc products 1 acme)"
psql_q -c "insert into shop.audit_log values ('acme', 'ann', 'heartbeat', '01/06/2024 10:30:00'), ('acme', 'ann', 'logout', '01/06/2024 10:31:00')"
wait_for 30 eval '[ "$(os_count audit-acme)" = 2 ]'
ok $? "an audit row streamed; the one the filter drops is not"
psql_q -c "update shop.audit_log set actor = 'ann2' where action = 'login'"
ok $? "the application can still update the keyless table"
psql_q -c "delete from shop.orders where id = 100"
wait_for 30 eval '[ "$(os_count orders)" = 0 ]'
ok $? "an order deleted takes its lines along"
psql_q -c "insert into shop.audit_log values ('zeta', 'bob', 'login', '02/06/2024 08:00:00')"
wait_for 30 eval '[ "$(os_count audit-zeta)" = 1 ]'
ok $? "the stream goes on after that update: a new tenant's audit index"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"

# started again, every load is done: none is run again, the templated
# audit index's included
pg2osync-supervise -c "$T/shop.yaml" > "$T/sup2.log" 2>&1 &
SUP=$!; cleanup_add $SUP
psql_q -c "insert into shop.audit_log values ('zeta', 'bob', 'logout', '02/06/2024 08:05:00')"
wait_for 60 eval '[ "$(os_count audit-zeta)" = 2 ]'
ok $? "a restart goes on streaming"
ok $(! grep -q "again from the start" "$T/sup2.log"; echo $?) \
	"and loads nothing again: $(grep -m1 'again from the start' "$T/sup2.log")"
kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; os_get '/people/_search' | sed 's/^/#   /'; }
clean
done_testing
