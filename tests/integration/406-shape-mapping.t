#!/usr/bin/env bash
# Issue 37's mapping options on real servers: pseudonyms (AES-SIV tokens,
# checked against an independent implementation, equal across two tables
# sharing a scope, failing closed on a JSON value), lookups with their
# misses counted, a split by a string, strptime-style dates, typed
# constants, a fan-out of a delimited text column, and a join whose
# fan-out elements each name their parent. Each table's documents are the
# same when the initial load wrote them, when the stream rewrote them,
# after a resnapshot and after a kill -9 replayed the changes since the
# checkpoint (pg2osync verify then finds nothing); no key byte and no
# clear value is in a log line or an argv. Last, the key rotation guide
# of docs/config.md, followed step by step.
. "$(dirname "$0")/../lib.sh"

S=p2o_shape_mp
TABLES="mp_people mp_orders mp_posts mp_topics mp_notes mp_mark"
drop_slot $S; drop_loads $S $TABLES
for i in mp_people mp_orders mp_posts mp_board mp_mark; do os_drop $i; done
JOIN=
has_module parent-join && JOIN=1

KEY=$(python3 -c 'import os; print(os.urandom(64).hex())')
KEY2=$(python3 -c 'import os; print(os.urandom(64).hex())')
export P2O_TEST_PSEUDONYM_KEY=$KEY
# token KEYHEX SCOPE TEXT: the token an independent AES-SIV gives
token() {
	python3 - "$@" <<'PY'
import base64, sys
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
key, scope, text = bytes.fromhex(sys.argv[1]), sys.argv[2], sys.argv[3]
sealed = AESSIV(key).encrypt(text.encode(), [scope.encode()])
print(base64.urlsafe_b64encode(sealed).decode().rstrip("="))
PY
}

psql_q <<'SQL'
drop table if exists mp_people, mp_orders, mp_posts, mp_topics, mp_notes, mp_mark;
create table mp_people (id int primary key, email text, phone text, prefs jsonb,
	status int, country text, tags text, born text);
create table mp_orders (id int primary key, buyer_email text, total numeric(10,2));
create table mp_posts (id int primary key, title text, tag_csv text);
alter table mp_posts replica identity full;
create table mp_topics (id int primary key, name text);
create table mp_notes (id int primary key, body text, topic_ids text);
alter table mp_notes replica identity full;
create table mp_mark (id int primary key);
insert into mp_people values
	(1, 'ann@example.org', '+44 20 7946 0001', '{"news": true}', 1, 'GB', 'a | b', '05 Mar 1990'),
	(2, 'bob@example.org', '', null, 7, 'DE', '', '31 Dec 1999');
insert into mp_orders values (10, 'ann@example.org', 12.50), (11, 'cid@example.org', 3);
insert into mp_posts values (1, 'lamp', 'red, blue,,'), (2, 'desk', ' oak ');
insert into mp_topics values (1, 'news'), (2, 'sport'), (3, 'art');
insert into mp_notes values (7, 'hello', '1;2'), (8, 'bye', '3');
SQL
METRICS_PORT=$(free_port)
CKPT_MS=3000 mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  people:
    table: mp_people
    transform:
      email: {pseudonym: {key_env: P2O_TEST_PSEUDONYM_KEY, scope: email}}
      phone: {pseudonym: {key_env: P2O_TEST_PSEUDONYM_KEY}}
      prefs: {pseudonym: {key_env: P2O_TEST_PSEUDONYM_KEY}}
      status:
        lookup:
          map: {"1": active, "2": closed}
          default: unknown
      country: {lookup: {map: {GB: United Kingdom, FR: France}}}
      tags: {split: " | "}
      born: {date: "%d %b %Y"}
    constants:
      version: 3
      vip: false
      kind: person
  orders:
    table: mp_orders
    transform:
      buyer_email: {pseudonym: {key_env: P2O_TEST_PSEUDONYM_KEY, scope: email}}
  posts:
    table: mp_posts
    fan_out: {column: tag_csv, by: ",", id: "{id}-{tag}", element: tag}
  mark:
    table: mp_mark
YAML
[ -n "$JOIN" ] && cat >> "$T/cfg.yaml" <<'YAML'
  topics:
    table: mp_topics
    index: mp_board
    id: "t{id}"
    join: {field: rel, name: topic}
  notes:
    table: mp_notes
    index: mp_board
    id: "n{id}"
    fan_out: {column: topic_ids, by: ";", id: "n{id}-{tid}", element: tid}
    join: {field: rel, name: note, parent: "{element}"}
YAML
INDICES="mp_people mp_orders mp_posts"
[ -n "$JOIN" ] && INDICES="$INDICES mp_board"

# the refusals at start: the variable unset, then not a key; neither the
# key nor the variable's value is ever printed
unset P2O_TEST_PSEUDONYM_KEY
timeout 60 pg2osync-supervise -c "$T/cfg.yaml" > "$T/nokey.out" 2>&1; st=$?
line=$(grep -n 'email: {pseudonym' "$T/cfg.yaml" | cut -d: -f1)
ok $([ $st = 78 ] && grep -q "cfg.yaml:$line: 'sync.people.transform.email.pseudonym.key_env' names 'P2O_TEST_PSEUDONYM_KEY', which is not set" "$T/nokey.out"; echo $?) \
	"no key: the supervisor refuses to start (exit $st), naming the variable at its line"
export P2O_TEST_PSEUDONYM_KEY=${KEY:0:100}
timeout 60 pg2osync-supervise -c "$T/cfg.yaml" > "$T/badkey.out" 2>&1; st=$?
ok $([ $st = 78 ] && grep -q "which must hold 128 hexadecimal digits" "$T/badkey.out" &&
	! grep -qF "${KEY:0:16}" "$T/badkey.out"; echo $?) "a short key: refused the same way, its value not printed (exit $st)"
pg2osync validate -c "$T/cfg.yaml" > "$T/validate.out" 2>&1
ok $(grep -q "^FAIL.*transform secret: .*'P2O_TEST_PSEUDONYM_KEY', which must hold 128" "$T/validate.out"; echo $?) \
	"validate says so on its own line"
export P2O_TEST_PSEUDONYM_KEY=$KEY

sup_start; ok $? "supervisor reports healthy"
found() { curl -sS "$OS_URL/$1/_doc/$2${3:+?routing=$3}" | jq -e .found >/dev/null; }
# every document of an index, sorted by id: _id, _routing and _source
dump() {
	curl -sS -XPOST "$OS_URL/$1/_refresh" >/dev/null
	curl -sS "$OS_URL/$1/_search?size=1000" |
		jq -cS '[.hits.hits[] | {_id, _routing, _source}] | sort_by(._id)'
}
dump_all() { local i; for i in $INDICES; do echo "$i $(dump "$i")"; done; }
# settled: a row written after the changes is indexed, so they are too
marker=0
settled() {
	marker=$((marker + 1))
	psql_q -c "insert into mp_mark values ($marker)"
	wait_for 60 found mp_mark $marker
}
loaded() {
	[ "$(os_count mp_people)" = 2 ] && [ "$(os_count mp_orders)" = 2 ] &&
	    [ "$(os_count mp_posts)" = 3 ] &&
	    { [ -z "$JOIN" ] || [ "$(os_count mp_board)" = 6 ]; }
}
wait_for 120 loaded
ok $? "the initial load wrote every document ($(for i in $INDICES; do echo -n "$i $(os_count $i) "; done))"

doc=$(curl -sS "$OS_URL/mp_people/_doc/1" | jq -c ._source)
ok $(echo "$doc" | jq -e --arg e "$(token "$KEY" email ann@example.org)" \
	--arg p "$(token "$KEY" public.mp_people.phone '+44 20 7946 0001')" \
	'.email == $e and .phone == $p' >/dev/null; echo $?) \
	"pseudonyms are the AES-SIV tokens an independent implementation gives (scoped email, default scope phone)"
ok $(echo "$doc" | jq -e '.prefs == "[unconvertible]"' >/dev/null; echo $?) \
	"a JSON value fails closed: the marker, not the value"
ok $(echo "$doc" | jq -e '.status == "active" and .country == "United Kingdom" and .tags == ["a","b"] and
	.born == "1990-03-05" and .version == 3 and .vip == false and .kind == "person"' >/dev/null; echo $?) \
	"lookups, a split by ' | ', a strptime date and typed constants: $(echo "$doc" | jq -c 'del(.email, .phone, .prefs)')"
doc2=$(curl -sS "$OS_URL/mp_people/_doc/2" | jq -c ._source)
ok $(echo "$doc2" | jq -e '.status == "unknown" and .country == "DE" and .tags == [] and .born == "1999-12-31"' >/dev/null; echo $?) \
	"a miss takes the default, or keeps the value without one: $(echo "$doc2" | jq -c '{status, country, tags}')"
ok $(echo "$doc2" | jq -e --arg p "$(token "$KEY" public.mp_people.phone '')" '.phone == $p' >/dev/null; echo $?) \
	"an empty string is sealed too"
ok $([ "$(curl -sS "$OS_URL/mp_orders/_doc/10" | jq -r ._source.buyer_email)" = "$(echo "$doc" | jq -r .email)" ]; echo $?) \
	"two tables' columns sharing a scope hold one token for one value: they still join"
misses() {
	metrics_text | grep -q '^pg2osync_transform_lookup_misses_total{table="public.mp_people",column="status"} 1$' &&
	    metrics_text | grep -q '^pg2osync_transform_lookup_misses_total{table="public.mp_people",column="country"} 1$'
}
wait_for 10 misses
ok $? "misses are counted per table and column"
ok $(grep -q "table 'public.mp_people' column 'prefs': a value the transform could not convert is indexed as the marker '\[unconvertible\]', never in clear" "$T/sup.log"; echo $?) \
	"the marker is said once, naming the column"
ok $([ "$(dump mp_posts | jq -r 'map(._id) | join(" ")')" = "1-blue 1-red 2-oak" ]; echo $?) \
	"fan_out.by: one document per delimited element, trimmed, empty ones dropped"
if [ -n "$JOIN" ]; then
	b=$(dump mp_board)
	ok $(echo "$b" | jq -e 'map(select(._id | startswith("n"))) | map("\(._id)@\(._routing):\(._source.rel.parent)") == ["n7-1@t1:t1","n7-2@t2:t2","n8-3@t3:t3"]' >/dev/null; echo $?) \
		"each element's document is a child of the parent its element names: $(echo "$b" | jq -c 'map("\(._id)@\(._routing // "-")")')"
	n=$(curl -sS "$OS_URL/mp_board/_search" -H 'content-type: application/json' \
		-d '{"query":{"has_parent":{"parent_type":"topic","query":{"ids":{"values":["t2"]}}}}}' | jq -r '[.hits.hits[]._id] | join(" ")')
	ok $([ "$n" = n7-2 ]; echo $?) "the join answers has_parent for t2: $n"
else
	skip "each element's document is a child of its parent (no parent-join on this node)"
	skip "the join answers has_parent (no parent-join on this node)"
fi
dump_all > "$T/load.json"

# the stream writes every row again, unchanged: the same documents
psql_q <<'SQL'
update mp_people set id = id;
update mp_orders set id = id;
update mp_posts set id = id;
update mp_topics set id = id;
update mp_notes set id = id;
SQL
settled
dump_all > "$T/stream.json"
ok $(cmp -s "$T/load.json" "$T/stream.json"; echo $?) "the stream's documents are the load's, byte for byte"
[ $_tap_fail -gt 0 ] && diff "$T/load.json" "$T/stream.json" | head -5 | sed 's/^/#   /'

# a resnapshot of every table: the same documents again
rs=0
for t in people orders posts ${JOIN:+topics notes}; do
	pg2osync resnapshot -c "$T/cfg.yaml" --table $t >> "$T/resnap.out" 2>&1 || rs=1
done
ok $rs "resnapshot of every section"
dump_all > "$T/resnap.json"
ok $(cmp -s "$T/load.json" "$T/resnap.json"; echo $?) "the resnapshot's documents are the load's"

# changes, then kill -9 before the next checkpoint: the restart replays
# them from the slot onto what was written
psql_q <<'SQL'
update mp_people set email = 'ann@example.net', status = 2, tags = 'c | d | e' where id = 1;
insert into mp_people values (3, 'dee@example.org', '555', '[1]', 9, 'FR', 'x', '01 Jan 2001');
update mp_orders set buyer_email = 'ann@example.net' where id = 10;
update mp_posts set tag_csv = 'blue;green, red' where id = 1;
delete from mp_posts where id = 2;
update mp_notes set topic_ids = '2;3' where id = 7;
SQL
sleep 0.5
kill_pipeline
sup_start; ok $? "after a kill -9 of every process the pipeline is up again"
settled
check "pg2osync verify finds every table's documents as a fresh shaping renders them" -- \
	pg2osync verify -c "$T/cfg.yaml"
doc=$(curl -sS "$OS_URL/mp_people/_doc/1" | jq -c ._source)
ok $(echo "$doc" | jq -e --arg e "$(token "$KEY" email ann@example.net)" \
	'.email == $e and .status == "closed" and .tags == ["c","d","e"]' >/dev/null; echo $?) \
	"the replayed change is the new value's token"
ok $([ "$(curl -sS "$OS_URL/mp_orders/_doc/10" | jq -r ._source.buyer_email)" = "$(echo "$doc" | jq -r .email)" ]; echo $?) \
	"and still joins the order's"
ok $([ "$(dump mp_posts | jq -r 'map(._id) | join(" ")')" = "1-blue;green 1-red" ]; echo $?) \
	"the posts' elements follow the replayed update and delete: $(dump mp_posts | jq -r 'map(._id) | join(" ")')"
if [ -n "$JOIN" ]; then
	ok $([ "$(dump mp_board | jq -r 'map(select(._id | startswith("n")) | "\(._id)@\(._routing)") | join(" ")')" = "n7-2@t2 n7-3@t3 n8-3@t3" ]; echo $?) \
		"a note's elements moved to their new parents: the one left deleted under its old routing"
else
	skip "a note's elements moved to their new parents (no parent-join on this node)"
fi
dump_all > "$T/replay.json"
for t in people orders posts ${JOIN:+topics notes}; do
	pg2osync resnapshot -c "$T/cfg.yaml" --table $t >> "$T/resnap.out" 2>&1
done
dump_all > "$T/resnap2.json"
ok $(cmp -s "$T/replay.json" "$T/resnap2.json"; echo $?) "after the replay, a resnapshot writes the same documents"

# nothing secret in a log or an argv
n=$(argv_secrets "$T/" "$KEY" "${KEY:0:32}" ann@example ann%40example)
ok $([ "$n" = 0 ]; echo $?) "no argv of the pipeline holds the key or a clear value ($n)"
leaks=0
for f in "$T"/*.out "$T/sup.log"; do
	for w in "$KEY" "${KEY:0:16}" "${KEY:64:16}" ann@example dee@example '7946 0001' '"news"'; do
		grep -qF -- "$w" "$f" && { leaks=$((leaks + 1)); diag "$(basename "$f") holds '$w'"; }
	done
done
ok $leaks "no log line holds a key byte or a clear value ($(cat "$T"/*.out "$T/sup.log" | wc -l) lines read)"

# rotating the key, as docs/config.md says: a new variable, a restart on
# it, a resnapshot of every pseudonymised section, verify
export P2O_TEST_PSEUDONYM_KEY2=$KEY2
kill -TERM $SUP; wait $SUP
sed -i 's/key_env: P2O_TEST_PSEUDONYM_KEY}/key_env: P2O_TEST_PSEUDONYM_KEY2}/; s/key_env: P2O_TEST_PSEUDONYM_KEY,/key_env: P2O_TEST_PSEUDONYM_KEY2,/' "$T/cfg.yaml"
sup_start; ok $? "restarted on the new key's variable"
pg2osync verify -c "$T/cfg.yaml" --table people > "$T/verify-old.out" 2>&1; st=$?
ok $([ $st = 1 ]; echo $?) "before the resnapshot, verify finds the documents sealed under the old key (exit $st)"
for t in people orders; do pg2osync resnapshot -c "$T/cfg.yaml" --table $t >> "$T/rotate.out" 2>&1; done
check "after it, verify finds nothing" -- pg2osync verify -c "$T/cfg.yaml"
ok $([ "$(curl -sS "$OS_URL/mp_people/_doc/1" | jq -r ._source.email)" = "$(token "$KEY2" email ann@example.net)" ]; echo $?) \
	"the documents hold the new key's tokens"

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 30 | sed 's/^/#   /'; }
drop_slot $S
done_testing
