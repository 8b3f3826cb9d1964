/*
 * t-jscan.c - the strict JSON validator and the span readers: a table of
 * valid and invalid texts, member lookup, iteration, unescaping and the
 * integer limits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "tap.h"

struct vcase {
	const char *json;
	size_t len;		/* 0: strlen */
	int valid;
};

#define V(s)	{ s, sizeof(s) - 1, 1 }
#define I(s)	{ s, sizeof(s) - 1, 0 }

static const struct vcase cases[] = {
	/* valid */
	V("{}"), V("[]"), V("0"), V("-0"), V("1"), V("-1"), V("123456789"),
	V("1.5"), V("-0.0"), V("1e10"), V("1E+10"), V("1e-10"), V("0.5e5"),
	V("18446744073709551616"), V("true"), V("false"), V("null"),
	V("\"\""), V("\"abc\""), V(" \t\r\n{} \t\r\n"),
	V("{\"a\":1}"), V("{\"a\":[1,2,{\"b\":null}],\"c\":\"d\"}"),
	V("[1,\"a\",true,false,null,{},[]]"),
	V("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\""),
	V("\"\\u0041\\u00e9\\u20AC\""), V("\"\\ud83d\\ude00\""),
	V("\"\\uDBFF\\uDFFF\""), V("\"\xc3\xa9\""), V("\"\xe2\x82\xac\""),
	V("\"\xf0\x9f\x98\x80\""), V("\"\xf4\x8f\xbf\xbf\""),
	V("\"\xed\x9f\xbf\""), V("\"\xee\x80\x80\""), V("\"\x7f\""),
	V("{ \"a\" : 1 , \"b\" : 2 }"), V("[ ]"), V("{ }"),
	V("{\"\":\"\"}"), V("{\"a\":1,\"a\":2}"),
	V("\"a long string that is longer than eight bytes, to take "
	    "the word-at-a-time path\""),
	/* invalid */
	I(""), I(" "), I("{"), I("}"), I("["), I("]"), I("[1,]"), I("{\"a\":1,}"),
	I("[,1]"), I("{,}"), I("{\"a\"}"), I("{\"a\":}"), I("{\"a\" 1}"),
	I("{a:1}"), I("{'a':1}"), I("[1 2]"), I("{\"a\":1 \"b\":2}"),
	I("01"), I("-01"), I("00"), I("1."), I(".5"), I("-"), I("+1"),
	I("1e"), I("1e+"), I("0x10"), I("NaN"), I("Infinity"), I("-Infinity"),
	I("tru"), I("nul"), I("True"), I("falsey"), I("nulll"),
	I("\"abc"), I("\"\\\""), I("\"\\x\""), I("\"\\u12\""), I("\"\\u12G4\""),
	I("\"\\ud83d\""), I("\"\\ud83d\\u0041\""), I("\"\\ude00\""),
	I("\"\\ud83dx\""), I("\"a\tb\""), I("\"a\nb\""), I("\"\x01\""),
	{ "\"a\0b\"", 5, 0 },
	I("\"\x80\""), I("\"\xc0\xaf\""), I("\"\xc1\xbf\""), I("\"\xe0\x80\xaf\""),
	I("\"\xed\xa0\x80\""), I("\"\xf0\x80\x80\xaf\""),
	I("\"\xf4\x90\x80\x80\""), I("\"\xf5\x80\x80\x80\""), I("\"\xff\""),
	I("\"\xc3\""), I("\"\xe2\x82\""), I("\"\xf0\x9f\x98\""),
	I("\"\xc3\x28\""), I("{} {}"), I("1 2"), I("[]]"), I("{}}"),
	I("\xef\xbb\xbf{}"), I("/* */{}"), I("[1,2"), I("{\"a\":1"),
	I("\"\\U0041\""), I("[\x0c]"),
};

static void
test_table(void)
{
	size_t i, off;
	const char *why;
	int rc, good = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = NULL;
		rc = jscan_validate(cases[i].json, cases[i].len, &off, &why);
		if ((rc == 0) == cases[i].valid) {
			good++;
			continue;
		}
		ok(0, "case %zu '%.*s' should be %s (why: %s)", i,
		    (int)cases[i].len, cases[i].json,
		    cases[i].valid ? "valid" : "invalid", why ? why : "-");
	}
	is_int(good, sizeof(cases) / sizeof(cases[0]),
	    "%d validation cases behave", good);
	ok(sizeof(cases) / sizeof(cases[0]) >= 60, "the table has %zu cases",
	    sizeof(cases) / sizeof(cases[0]));
}

static void
test_errors(void)
{
	size_t off = 99;
	const char *why = NULL;

	ok(jscan_validate("{\"a\":1,}", 8, &off, &why) < 0, "trailing comma");
	is_int(off, 7, "offset of a trailing comma's closer");
	is_str(why, "expected a member name", "why for a trailing comma");
	jscan_validate("[01]", 4, &off, &why);
	is_int(off, 1, "offset of a leading zero");
	is_str(why, "leading zero in number", "why for a leading zero");
	jscan_validate("\"ab\x01\"", 5, &off, &why);
	is_int(off, 3, "offset of a control character");
	is_str(why, "control character in string", "why for a control char");
	jscan_validate("[\"\xed\xa0\x80\"]", 6, &off, &why);
	is_int(off, 2, "offset of an encoded surrogate");
	is_str(why, "invalid UTF-8", "why for an encoded surrogate");
	jscan_validate("{}x", 3, &off, &why);
	is_int(off, 2, "offset of trailing data");
}

static void
test_depth(void)
{
	char buf[1100];
	int i;

	for (i = 0; i < 512; i++) {
		buf[i] = '[';
		buf[1024 - 1 - i] = ']';
	}
	ok(jscan_validate(buf, 1024, NULL, NULL) == 0, "512 levels are valid");
	for (i = 0; i < 513; i++) {
		buf[i] = '[';
		buf[1026 - 1 - i] = ']';
	}
	ok(jscan_validate(buf, 1026, NULL, NULL) < 0, "513 levels are not");
	/* objects and arrays alternate on the stack: the kind of each level
	 * must be remembered across 64-bit words */
	{
		char *s = malloc(512 * 6 + 16), *p = s;
		const char *why = NULL;
		size_t off;

		for (i = 0; i < 256; i++) {
			memcpy(p, "{\"a\":[", 6);
			p += 6;
		}
		for (i = 0; i < 256; i++) {
			memcpy(p, "]}", 2);
			p += 2;
		}
		ok(jscan_validate(s, p - s, &off, &why) == 0,
		    "alternating 512 levels are valid (%s)", why ? why : "-");
		s[p - s - 2] = '}';
		ok(jscan_validate(s, p - s, &off, &why) < 0,
		    "a mismatched closer deep inside is invalid");
		free(s);
	}
}

static struct jspan
span(const char *s)
{
	struct jspan v = { s, strlen(s) };

	return v;
}

static void
test_members(void)
{
	const char *doc = "{ \"k\" : \"row\", \"op\":\"u\",\"n\\u0061me\":\"x\","
	    "\"new\":{\"id\":7,\"t\":\"a\\\"b\"}, \"arr\":[1, [2,3] ,{\"x\":\"]\"}],"
	    "\"v\":18446744073709551615, \"e\":\"\" }";
	struct jspan o = span(doc), v, k, e;
	struct jiter it;
	char buf[64];
	uint64_t u;
	int n;

	ok(jscan_validate(o.p, o.n, NULL, NULL) == 0, "member doc is valid");
	is_int(jspan_type(o), J_OBJECT, "object type");
	ok(jobj_get(o, "k", &v) && jstr_eq(v, "row"), "k is row");
	ok(jobj_get(o, "name", &v) && jstr_eq(v, "x"),
	    "a member name with an escape is found by its unescaped form");
	ok(!jobj_get(o, "nothere", &v), "absent member");
	ok(!jobj_get(o, "ro", &v), "no prefix match on names");
	ok(jobj_get(o, "new", &v) && jspan_type(v) == J_OBJECT, "new is object");
	ok(v.n == strlen("{\"id\":7,\"t\":\"a\\\"b\"}") &&
	    memcmp(v.p, "{\"id\":7,\"t\":\"a\\\"b\"}", v.n) == 0,
	    "nested object span is exact");
	ok(jobj_get(v, "t", &e) && jstr_eq(e, "a\"b"), "escaped quote value");
	ok(jobj_get(v, "id", &e) && jnum_u64(e, &u) == 0 && u == 7, "id 7");
	ok(jobj_get(o, "v", &v) && jnum_u64(v, &u) == 0 && u == UINT64_MAX,
	    "v is 2^64-1");
	ok(jobj_get(o, "e", &v) && jstr_eq(v, "") && !jstr_eq(v, "x"),
	    "empty string");

	ok(jobj_get(o, "arr", &v) && jiter_init(&it, v) == 0, "iterate arr");
	n = 0;
	while (jiter_elem(&it, &e)) {
		n++;
		if (n == 2)
			ok(e.n == 5 && memcmp(e.p, "[2,3]", 5) == 0,
			    "second element span '[2,3]'");
		if (n == 3)
			ok(jobj_get(e, "x", &k) && jstr_eq(k, "]"),
			    "a bracket inside a string does not end the array");
	}
	is_int(n, 3, "arr has 3 elements");

	ok(jiter_init(&it, o) == 0, "iterate members");
	n = 0;
	buf[0] = '\0';
	while (jiter_member(&it, &k, &v)) {
		n++;
		if (n == 3)
			jstr_copy(k, buf, sizeof(buf));
	}
	is_int(n, 7, "7 members");
	is_str(buf, "name", "third key unescaped");
	ok(jiter_init(&it, span("\"s\"")) < 0, "a string is not iterable");
	ok(jiter_init(&it, span("{}")) == 0 && !jiter_member(&it, &k, &v),
	    "empty object has no members");
	ok(jiter_init(&it, span("[ ]")) == 0 && !jiter_elem(&it, &v),
	    "empty array has no elements");
	ok(jiter_init(&it, span("[ 1 ]")) == 0 && jiter_elem(&it, &v) &&
	    v.n == 1 && !jiter_elem(&it, &v), "one element with spaces");
}

static void
test_unescape(void)
{
	char buf[32], *d;

	d = jstr_dup(span("\"a\\u00e9\\u20ac\\ud83d\\ude00\\n\\/\\\\\""));
	is_str(d, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n/\\",
	    "jstr_dup decodes \\u escapes and pairs to UTF-8");
	free(d);
	ok(jstr_eq(span("\"\\u0041b\\t\""), "Ab\t"), "jstr_eq with escapes");
	ok(!jstr_eq(span("\"\\u0041b\\t\""), "Ab\tc"), "jstr_eq longer s");
	ok(!jstr_eq(span("\"\\u0041b\\t\""), "Ab"), "jstr_eq shorter s");
	ok(!jstr_eq(span("\"a\\u0000b\""), "a"), "an embedded NUL is not end");
	ok(jstr_eq(span("\"\\ud83d\\ude00\""), "\xf0\x9f\x98\x80"),
	    "jstr_eq surrogate pair");
	ok(jstr_copy(span("\"hello\""), buf, 6) == 0, "copy fits exactly");
	is_str(buf, "hello", "copy content");
	ok(jstr_copy(span("\"hello\""), buf, 5) < 0, "copy one short fails");
	ok(jstr_copy(span("\"\\u20ac\""), buf, 4) == 0 &&
	    strcmp(buf, "\xe2\x82\xac") == 0, "escaped euro fits in 4");
	ok(jstr_copy(span("\"\\u20ac\""), buf, 3) < 0, "euro needs 4 bytes");
	d = jstr_dup(span("\"\""));
	is_str(d, "", "empty dup");
	free(d);
	{
		struct jspan plain = span("\"a|b\""), esc = span("\"a\\tb\"");
		const char *t;
		char *heap;
		size_t n;

		t = jstr_text(plain, &n, &heap);
		ok(t == plain.p + 1 && n == 3 && heap == NULL,
		    "jstr_text: a string without escapes is its own bytes");
		t = jstr_text(esc, &n, &heap);
		ok(heap != NULL && t == heap && n == 3 &&
		    memcmp(t, "a\tb", 3) == 0,
		    "jstr_text: escapes unescaped into the heap copy");
		free(heap);
	}
}

static void
test_numbers(void)
{
	uint64_t u;
	int64_t i;

	ok(jnum_u64(span("0"), &u) == 0 && u == 0, "u64 0");
	ok(jnum_u64(span("18446744073709551615"), &u) == 0 && u == UINT64_MAX,
	    "u64 max");
	ok(jnum_u64(span("18446744073709551616"), &u) < 0, "u64 max+1");
	ok(jnum_u64(span("99999999999999999999"), &u) < 0, "u64 20 nines");
	ok(jnum_u64(span("18446744073709551610"), &u) == 0 &&
	    u == UINT64_MAX - 5 && jnum_u64(span("18446744073709551620"),
	    &u) < 0, "u64: the last digit's overflow, either side");
	ok(jnum_u64(span("-1"), &u) < 0, "u64 negative");
	ok(jnum_u64(span("-0"), &u) < 0, "u64 minus zero");
	ok(jnum_u64(span("1.0"), &u) < 0, "u64 fraction");
	ok(jnum_u64(span("1e3"), &u) < 0, "u64 exponent");
	ok(jnum_u64(span("\"1\""), &u) < 0, "u64 string");
	ok(jnum_i64(span("-9223372036854775808"), &i) == 0 && i == INT64_MIN,
	    "i64 min");
	ok(jnum_i64(span("9223372036854775807"), &i) == 0 && i == INT64_MAX,
	    "i64 max");
	ok(jnum_i64(span("9223372036854775808"), &i) < 0, "i64 max+1");
	ok(jnum_i64(span("-9223372036854775809"), &i) < 0, "i64 min-1");
	ok(jnum_i64(span("-42"), &i) == 0 && i == -42, "i64 -42");
	ok(jnum_i64(span("-4.2"), &i) < 0, "i64 fraction");
}

static void
test_pick(void)
{
	static const char *const names[] = { "id", "doc", "gone", "k" };
	struct jspan m[4];

	jobj_pick(span("{\"k\":1,\"doc\":{\"id\":9},\"id\":\"a\","
	    "\"\\u0069d\":\"b\",\"k\":2}"), names, 4, m);
	ok(m[0].p && m[0].n == 3 && memcmp(m[0].p, "\"a\"", 3) == 0,
	    "pick: a top-level member, not the nested one of the same name");
	ok(m[1].p && m[1].n == 8 && m[1].p[0] == '{', "pick: an object value");
	ok(m[2].p == NULL && m[2].n == 0, "pick: absent is NULL");
	ok(m[3].p && m[3].p[0] == '1', "pick: the first of duplicates");
	jobj_pick(span("{\"\\u0069d\":7}"), names, 4, m);
	ok(m[0].p && m[0].p[0] == '7', "pick: an escaped name still matches");
	jobj_pick(span("[1]"), names, 4, m);
	ok(m[0].p == NULL && m[1].p == NULL, "pick: not an object");
	{
		/* names sharing first bytes, a name a prefix of another, the
		 * empty name, members in an order other than the names' */
		static const char *const nm[] = { "i", "id", "idx", "", "x" };
		struct jspan v[5];

		jobj_pick(span("{\"x\":5,\"idx\":3,\"\":4,\"id\":2,\"ix\":9,"
		    "\"i\":1,\"x\":6}"), nm, 5, v);
		ok(v[0].p && v[0].p[0] == '1' && v[1].p && v[1].p[0] == '2' &&
		    v[2].p && v[2].p[0] == '3' && v[3].p && v[3].p[0] == '4' &&
		    v[4].p && v[4].p[0] == '5',
		    "pick: like names told apart, the empty name, any order");
		jobj_pick(span("{\"\\u0078\":7,\"id\":2}"), nm, 5, v);
		ok(v[4].p && v[4].p[0] == '7' && v[1].p && v[1].p[0] == '2' &&
		    v[0].p == NULL && v[3].p == NULL,
		    "pick: an escaped name after the plain ones missed it");
	}
}

/* the members noted while validating: the same answers as jobj_pick */
static void
test_top(void)
{
	static const char *const names[] = { "id", "doc", "gone", "k" };
	struct jspan m[4];
	struct jtop top;
	struct sbuf b = SBUF_INIT;
	const char *s = " {\"k\":1,\"doc\":{\"id\":9,\"a\":[{}]},\"id\":\"a\","
	    "\"\\u0069d\":\"b\",\"k\":2 , \"e\":{}} ";
	int i;

	ok(jscan_validate_top(s, strlen(s), &top, NULL, NULL) == 0 &&
	    top.complete && top.n == 6, "top: six members noted");
	ok(top.obj.p == s + 1 && top.obj.n == strlen(s) - 2,
	    "top: the object without the whitespace around it");
	ok(top.key[1].n == 5 && memcmp(top.key[1].p, "\"doc\"", 5) == 0 &&
	    top.val[1].n == 17 && top.val[1].p[0] == '{', "top: a nested value "
	    "is one member");
	ok(top.val[4].n == 1 && top.val[4].p[0] == '2' && top.val[5].n == 2,
	    "top: a number before whitespace, an empty object last");
	jtop_pick(&top, top.obj, names, 4, m);
	ok(m[0].p && memcmp(m[0].p, "\"a\"", 3) == 0 && m[1].n == 17 &&
	    m[2].p == NULL && m[3].p[0] == '1', "top: picks as jobj_pick does");
	jtop_pick(&top, span("{\"id\":5}"), names, 4, m);
	ok(m[0].p && m[0].p[0] == '5' && m[1].p == NULL,
	    "top: another object is walked, not answered from top");
	ok(jscan_validate_top("[1,{\"a\":2}]", 11, &top, NULL, NULL) == 0 &&
	    !top.complete && top.n == 0, "top: an array is not an object");
	ok(jscan_validate_top("{\"a\":1,}", 8, &top, NULL, NULL) == -1 &&
	    !top.complete, "top: nothing complete after an error");
	sbuf_addc(&b, '{');
	for (i = 0; i <= JTOP_MAX; i++)
		sbuf_addf(&b, "%s\"m%d\":%d", i ? "," : "", i, i);
	sbuf_addc(&b, '}');
	ok(jscan_validate_top(b.buf, b.len, &top, NULL, NULL) == 0 &&
	    !top.complete && top.n == JTOP_MAX, "top: one member too many");
	{
		static const char *const last[] = { "m16" };

		jtop_pick(&top, top.obj, last, 1, m);
		ok(m[0].p && memcmp(m[0].p, "16", 2) == 0,
		    "top: past the limit, picked by a walk");
	}
	sbuf_release(&b);
}

/* same as the picks above, through the indexed names: the first member
 * of a name, an escaped spelling, names that share a hash (a chain), and
 * a list longer than the index, picked by a walk */
static int
same_pick(const char *json, struct jnames *nm)
{
	struct jspan a[40], b[40];
	struct jtop top;
	int i;

	if (jscan_validate_top(json, strlen(json), &top, NULL, NULL) == -1)
		return 0;
	jtop_pickn(&top, top.obj, nm, a);
	jobj_pick(top.obj, nm->names, nm->n, b);
	for (i = 0; i < nm->n; i++)
		if (a[i].p != b[i].p || a[i].n != b[i].n)
			return 0;
	return 1;
}

static void
test_pickn(void)
{
	static const char *const op[] = { "index", "id", "v", "routing",
	    "pipeline", "rel", "toast", "toast_id", "toast_index",
	    "toast_routing", "field", "value", "children", "doc" };
	/* "ab" and "ac", "ba" and "bb": two chains */
	static const char *const like[] = { "i", "id", "idx", "", "x", "ab",
	    "ac", "ba", "bb" };
	static const char *many[JNAMES_MAX + 2];
	static char text[JNAMES_MAX + 2][8];
	static struct jnames nop = JNAMES(op), nlike = JNAMES(like);
	static struct jnames nmany = JNAMES(many);
	const char *tests[] = {
		"{\"k\":\"index\",\"index\":\"i\",\"id\":\"1\",\"v\":7,"
		    "\"doc\":{\"id\":1,\"v\":2}}",
		"{\"doc\":{},\"v\":1,\"v\":2,\"toast_routing\":\"r\","
		    "\"toast\":[],\"\\u0069d\":\"e\",\"id\":\"p\"}",
		"{\"x\":5,\"idx\":3,\"\":4,\"id\":2,\"ix\":9,\"i\":1,"
		    "\"x\":6,\"ac\":1,\"bb\":2,\"ab\":3,\"ba\":4,\"ab\":5}",
		"{\"\\u0078\":7,\"id\":2,\"a\\u0062\":8,\"ac\":[1]}",
		"{}", "{\"k\":1}",
	};
	size_t i;
	int good = 0, n = 0;

	for (i = 0; i < JNAMES_MAX + 2; i++) {
		snprintf(text[i], sizeof(text[i]), "m%zu", i);
		many[i] = text[i];
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++, n += 2)
		good += same_pick(tests[i], &nop) + same_pick(tests[i], &nlike);
	is_int(good, n, "pickn: %d of %d picks as jobj_pick's", good, n);
	ok(same_pick("{\"m33\":1,\"m0\":2,\"m32\":3}", &nmany),
	    "pickn: more names than the index holds, picked by a walk");
}

int
main(void)
{
	test_table();
	test_pick();
	test_top();
	test_pickn();
	test_errors();
	test_depth();
	test_members();
	test_unescape();
	test_numbers();
	return done_testing();
}
