/*
 * t-cli-verify.c - what pg2osync verify compares: the digest of a
 * document's content (members in any order and strings however escaped
 * are the same document; any value, key or nesting changed is not;
 * numbers as written, or by value for a target that keeps values only), and
 * the table of rendered documents by index and id, with the write a
 * repair sends kept for the entries that need one.
 */
#include <string.h>

#include "tap.h"
#include "../../cli/cli.h"

static struct jspan
sp(const char *s)
{
	struct jspan j = { s, strlen(s) };

	return j;
}

static uint64_t
dg(const char *s)
{
	return vdoc_digest(sp(s), 0);
}

/* by value, as for a target that gives numbers back as it parsed them */
static uint64_t
dv(const char *s)
{
	return vdoc_digest(sp(s), 1);
}

static void
test_digest(void)
{
	ok(dg("{\"a\":1,\"b\":\"x\"}") == dg("{\"b\":\"x\",\"a\":1}"),
	    "members in another order: the same");
	ok(dg("{\"a\":{\"y\":[1,2],\"x\":null}}") ==
	    dg("{ \"a\" : { \"x\" : null, \"y\" : [ 1, 2 ] } }"),
	    "nested, with white space: the same");
	ok(dg("{\"s\":\"caf\\u00e9\"}") == dg("{\"s\":\"café\"}"),
	    "a string however escaped: the same");
	ok(dg("{\"a\":1}") != dg("{\"a\":2}"), "a value changed differs");
	ok(dg("{\"a\":1}") != dg("{\"b\":1}"), "a key changed differs");
	ok(dg("{\"a\":\"1\"}") != dg("{\"a\":1}"), "a string is not a number");
	ok(dg("{\"a\":[1,2]}") != dg("{\"a\":[2,1]}"), "arrays keep their "
	    "order");
	ok(dg("{\"a\":[\"x\",\"y\"]}") != dg("{\"a\":[\"xy\"]}"),
	    "elements do not run together");
	ok(dg("{\"a\":1}") != dg("{\"a\":1,\"b\":null}"), "a member added "
	    "differs");
	ok(dg("{\"a\":12.50}") != dg("{\"a\":12.5}"), "numbers as written: "
	    "12.50 is not 12.5");
	/* what a Meilisearch server gives back for what it was sent */
	ok(dv("{\"a\":12.50,\"b\":1e3,\"c\":[1.0]}") ==
	    dv("{\"a\":12.5,\"b\":1000.0,\"c\":[1]}"), "by value: 12.50 "
	    "is 12.5, 1e3 is 1000.0, 1.0 is 1");
	ok(dv("{\"a\":100000000000000000000000000001}") ==
	    dv("{\"a\":1e+29}"), "by value: digits past a double's are "
	    "what the target kept");
	ok(dv("{\"a\":12345678901234567890,\"b\":-9223372036854775808}") ==
	    dv("{\"b\":-9223372036854775808,\"a\":12345678901234567890}") &&
	    dv("{\"a\":12345678901234567890}") !=
	    dv("{\"a\":12345678901234567891}"), "by value: a 64-bit integer "
	    "is compared digit for digit");
	ok(dv("{\"a\":12.5}") != dv("{\"a\":12.51}") &&
	    dv("{\"a\":\"12.5\"}") != dv("{\"a\":12.5}"), "by value: "
	    "another value, or a string, differs");
}

static void
test_table(void)
{
	struct vtab t;
	struct msg_op m;
	struct ventry *e;
	struct target_write w;
	char name[64];
	int i;

	vtab_init(&t);
	memset(&m, 0, sizeof(m));
	m.index = sp("\"ix\"");
	m.routing = sp("\"r\"");
	m.doc = sp("{\"id\":1}");
	for (i = 0; i < 3000; i++) {
		char id[16];

		snprintf(id, sizeof(id), "\"%d\"", i);
		m.id = sp(id);
		if (vtab_add(&t, &m) == -1)
			break;
		if (i == 7)
			vtab_keep(&t, &t.e[t.n - 1], &m);
	}
	is_int(t.n, 3000, "3000 documents");
	e = vtab_get(&t, sp("\"ix\""), sp("\"7\""));
	ok(e != NULL && e->digest == dg("{\"id\":1}"), "found by index and "
	    "id, with its digest");
	ok(vtab_get(&t, sp("\"ix\""), sp("\"\\u0037\"")) == e,
	    "an id however escaped");
	ok(vtab_get(&t, sp("\"other\""), sp("\"7\"")) == NULL,
	    "another index's is another document");
	vtab_name(&t, e, name, sizeof(name));
	is_str(name, "ix/7", "named index/id");
	ok(vtab_write(&t, e, &w) == 0 && w.id.n == 3 &&
	    memcmp(w.id.p, "\"7\"", 3) == 0 && w.routing.n == 3 &&
	    w.pipeline.p == NULL && w.doc.n == 8, "its repair write is kept");
	e = vtab_get(&t, sp("\"ix\""), sp("\"8\""));
	ok(e != NULL && vtab_write(&t, e, &w) == -1, "none kept for another");
	vtab_release(&t);
}

int
main(void)
{
	test_digest();
	test_table();
	return done_testing();
}
