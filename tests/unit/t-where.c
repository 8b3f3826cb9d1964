/*
 * t-where.c - the row filter (lib/where.c): what the subset accepts and
 * the message for what it refuses, SQL's three-valued logic on JSON
 * values, byte-wise strings, exact numeric comparison of numbers and
 * strings holding them, and the SQL the loader pushes down. Then the
 * templates (lib/template.c): parts, globs, overlaps.
 */
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "tap.h"
#include "template.h"
#include "where.h"

static int
get(void *arg, const char *name, struct jspan *val)
{
	struct jspan row = { arg, strlen(arg) };

	return jobj_get(row, name, val);
}

/* 1 match, 0 no match, -1 refused */
static int
match(const char *expr, const char *row)
{
	struct where *w;
	char why[512];
	int r;

	if ((w = where_parse(expr, why, sizeof(why))) == NULL)
		return -1;
	r = where_match(w, get, (void *)row);
	where_free(w);
	return r;
}

/* "NOT NOT ... a = 1", n NOTs, in buf */
static const char *
nots(struct sbuf *buf, int n)
{
	int i;

	sbuf_reset(buf);
	for (i = 0; i < n; i++)
		sbuf_adds(buf, "NOT ");
	sbuf_adds(buf, "a = 1");
	return buf->buf;
}

static const char *
refusal(const char *expr)
{
	static char why[512];
	struct where *w;

	if ((w = where_parse(expr, why, sizeof(why))) != NULL) {
		where_free(w);
		return "(accepted)";
	}
	return why;
}

static char *
quote(void *arg, const char *s, int ident)
{
	struct sbuf q = SBUF_INIT;

	sbuf_addc(&q, ident ? '"' : '\'');
	sbuf_adds(&q, s);
	sbuf_addc(&q, ident ? '"' : '\'');
	return q.buf;
}

/* names bare, as the parser reads them back */
static char *
bare(void *arg, const char *s, int ident)
{
	struct sbuf q = SBUF_INIT;

	(void)arg;
	if (!ident)
		sbuf_addc(&q, '\'');
	sbuf_adds(&q, s);
	if (!ident)
		sbuf_addc(&q, '\'');
	return q.buf;
}

/* expr parsed and written back (names bare), and that parsed again: both
 * parses succeed and, with same, the second writing equals the first */
static int
reads_back(const char *expr, int same)
{
	struct sbuf out = SBUF_INIT, out2 = SBUF_INIT;
	struct where *w, *back = NULL;
	int r;

	if ((w = where_parse(expr, NULL, 0)) != NULL) {
		where_sql(w, &out, bare, NULL);
		back = out.buf ? where_parse(out.buf, NULL, 0) : NULL;
	}
	if (back != NULL)
		where_sql(back, &out2, bare, NULL);
	r = w != NULL && back != NULL && (!same ||
	    (out2.buf != NULL && strcmp(out.buf, out2.buf) == 0));
	where_free(w);
	where_free(back);
	sbuf_release(&out);
	sbuf_release(&out2);
	return r;
}

static const char *
sql(const char *expr)
{
	static struct sbuf out = SBUF_INIT;
	struct where *w;
	char why[512];

	sbuf_reset(&out);
	if ((w = where_parse(expr, why, sizeof(why))) == NULL)
		return "(refused)";
	where_sql(w, &out, quote, NULL);
	where_free(w);
	return out.buf;
}

static void
test_logic(void)
{
	const char *row = "{\"s\":\"paid\",\"n\":\"12.50\",\"i\":7,"
	    "\"z\":null,\"b\":true,\"u\":\"caf\\u00e9\",\"arr\":[1]}";

	is_int(match("s = 'paid'", row), 1, "string equality");
	is_int(match("s <> 'paid'", row), 0, "<>");
	is_int(match("s != 'open'", row), 1, "!=");
	is_int(match("n > 10", row), 1, "a numeric string against a number");
	is_int(match("n = 12.5", row), 1, "numerically equal: 12.50 = 12.5");
	is_int(match("n = '12.5'", row), 0,
	    "two strings compare byte-wise: '12.50' <> '12.5'");
	is_int(match("i >= 7 AND i <= 7.0", row), 1, "a JSON number");
	is_int(match("i < 1e1", row), 1, "an exponent");
	is_int(match("i > -8", row), 1, "a negative literal");
	is_int(match("z = 1", row), 0, "NULL = 1 is unknown: no match");
	is_int(match("NOT z = 1", row), 0, "NOT unknown is unknown");
	is_int(match("z IS NULL", row), 1, "IS NULL");
	is_int(match("missing IS NULL", row), 1, "a missing column is NULL");
	is_int(match("s IS NOT NULL", row), 1, "IS NOT NULL");
	is_int(match("z = 1 OR s = 'paid'", row), 1, "unknown OR true");
	is_int(match("z = 1 AND s = 'paid'", row), 0, "unknown AND true");
	is_int(match("NOT (z = 1 AND s = 'nope')", row), 1,
	    "NOT (unknown AND false) is true");
	is_int(match("s IN ('open', 'paid')", row), 1, "IN");
	is_int(match("s NOT IN ('open', 'paid')", row), 0, "NOT IN");
	is_int(match("z IN (1, 2)", row), 0, "NULL IN (...) is unknown");
	is_int(match("z NOT IN (1, 2)", row), 0, "so is NOT IN");
	is_int(match("i IN ('7', 8)", row), 1,
	    "a number against a string holding one");
	is_int(match("s > 5", row), 0,
	    "a string that holds no number against a number: unknown");
	is_int(match("u = 'caf\xc3\xa9'", row), 1, "escapes unescaped");
	is_int(match("u > 'cafe'", row), 1, "byte-wise: é sorts after e");
	is_int(match("b = 'true'", row), 1, "a boolean against its text");
	is_int(match("arr = 1", row), 0, "an array compares as unknown");
	is_int(match("s = s AND n = n", row), 1, "a column on both sides");
	is_int(match("it''s = 1", row), -1, "a quote outside a literal");
	is_int(match("s = 'it''s'", "{\"s\":\"it's\"}"), 1, "'' in a literal");
	is_int(match("(((s = 'paid')))", row), 1, "parentheses");
	is_int(match("a = 1 OR b = 'true' AND c = 2", row), 0,
	    "AND binds tighter than OR");
	is_int(match("created_at >= '2024-01-01'",
	    "{\"created_at\":\"2024-03-05T10:00:00Z\"}"), 1,
	    "ISO 8601 text orders as strings");
}

/*
 * TRUE and FALSE: a PostgreSQL boolean arrives as JSON true/false and
 * compares as a boolean; a MySQL BOOLEAN (tinyint(1)) arrives as a number,
 * and TRUE/FALSE are 1 and 0 there. Each case says which server's answer
 * it gives.
 */
static void
test_booleans(void)
{
	const char *pg_t = "{\"active\":true,\"deleted\":false}";
	const char *pg_n = "{\"active\":null,\"deleted\":null}";
	const char *my_1 = "{\"active\":1,\"deleted\":0}";
	const char *my_2 = "{\"active\":2,\"deleted\":null}";

	is_int(match("active = true", pg_t), 1, "pg: true = TRUE");
	is_int(match("active = false", pg_t), 0, "pg: true = FALSE is false");
	is_int(match("NOT active = false", pg_t), 1, "pg: NOT (true = FALSE)");
	is_int(match("active <> FALSE", pg_t), 1, "pg: true <> FALSE");
	is_int(match("active > false", pg_t), 1, "pg: FALSE < TRUE");
	is_int(match("deleted < true", pg_t), 1, "pg: false < TRUE");
	is_int(match("active = true", pg_n), 0, "pg: NULL = TRUE is unknown");
	is_int(match("NOT active = true", pg_n), 0, "NOT unknown is unknown");
	is_int(match("deleted = false OR deleted IS NULL", pg_t), 1,
	    "pg: false = FALSE OR ...");
	is_int(match("deleted = false OR deleted IS NULL", pg_n), 1,
	    "pg: ... OR NULL IS NULL");
	is_int(match("deleted = false OR deleted IS NULL",
	    "{\"deleted\":true}"), 0, "pg: true is neither");
	is_int(match("active IN (TRUE)", pg_t), 1, "pg: IN (TRUE)");
	is_int(match("active NOT IN (false)", pg_t), 1, "pg: NOT IN (FALSE)");
	is_int(match("active = deleted", pg_t), 0, "pg: two boolean columns");
	is_int(match("active = 't'", pg_t), 1,
	    "pg: 't' is a boolean literal to PostgreSQL");
	is_int(match("active = ' Yes '", pg_t), 1, "pg: so is ' Yes '");
	is_int(match("deleted = 'of'", pg_t), 1, "pg: 'of' is a prefix of off");
	is_int(match("active = 'o'", pg_t), 0,
	    "pg: 'o' names no boolean alone: unknown");
	is_int(match("NOT active = 'o'", pg_t), 0, "... and NOT of it too");
	is_int(match("active = '1' AND deleted = '0'", pg_t), 1, "pg: '1', '0'");
	is_int(match("active = 'maybe'", pg_t), 0, "pg: no boolean: unknown");
	is_int(match("active = 1", pg_t), 0,
	    "pg: a boolean against a number is unknown (no bool = int)");
	is_int(match("NOT active = 1", pg_t), 0, "... and NOT of it too");

	is_int(match("active = true", my_1), 1, "mysql: 1 = TRUE");
	is_int(match("deleted = false", my_1), 1, "mysql: 0 = FALSE");
	is_int(match("active = false", my_1), 0, "mysql: 1 = FALSE is false");
	is_int(match("active = true", my_2), 0,
	    "mysql: 2 = TRUE is false (TRUE is 1)");
	is_int(match("active = false", my_2), 0, "mysql: and 2 = FALSE too");
	is_int(match("active > true", my_2), 1, "mysql: 2 > TRUE");
	is_int(match("deleted = false OR deleted IS NULL", my_2), 1,
	    "mysql: NULL IS NULL");
	is_int(match("deleted = false OR deleted IS NULL", my_1), 1,
	    "mysql: 0 = FALSE");
	is_int(match("active IN (true, 5)", my_1), 1, "mysql: IN (TRUE, 5)");
	is_int(match("active = true", "{\"active\":\"1\"}"), 1,
	    "a string holding 1 against TRUE: as against the number 1");
	is_int(match("active = true", "{\"active\":\"yes\"}"), 0,
	    "a string holding no number against TRUE: unknown");
	is_int(match("active = true", "{\"active\":1.0}"), 1, "1.0 = TRUE");
	is_int(match("TRUE = TRUE AND NOT FALSE = TRUE", "{}"), 1,
	    "two literals");

	is_int(match("active = TRUE AND tenant <> 'hidden'",
	    "{\"active\":true,\"tenant\":\"acme\"}"), 1,
	    "the filter that was refused before");
	is_int(match("Active = True aNd NoT tenant In ('hidden') oR tenant Is "
	    "nUlL", "{\"Active\":true,\"tenant\":\"acme\"}"), 1,
	    "keywords and literals in any letter case");
	is_str(sql("active = true AND deleted in (False)"),
	    "((\"active\" = TRUE) AND (\"deleted\" IN (FALSE)))",
	    "written back as TRUE and FALSE, which both servers read");
}

static void
test_numbers(void)
{
	is_int(where_numcmp("12.50", 5, "12.5", 4), 0, "trailing zeros");
	is_int(where_numcmp("0.0", 3, "-0", 2), 0, "zero and minus zero");
	is_int(where_numcmp("1e3", 3, "999.999", 7), 1, "1e3 > 999.999");
	is_int(where_numcmp("-5", 2, "-50", 3), 1, "-5 > -50");
	is_int(where_numcmp("123456789012345678901234567890.1", 32,
	    "123456789012345678901234567890.01", 33), 1,
	    "exact beyond a double's precision");
	is_int(where_numcmp("0.001", 5, "1e-3", 4), 0, "exponents");
	is_int(where_numcmp("NaN", 3, "1", 1), 2, "NaN is not a number here");
	is_int(where_numcmp("1.2.3", 5, "1", 1), 2, "nor is 1.2.3");
}

static void
test_refusals(void)
{
	const char *why;

	why = refusal("name LIKE 'a%'");
	ok(strstr(why, "'LIKE'") && strstr(why, "IS [NOT] NULL"),
	    "LIKE is refused, with the list of what is supported: %s", why);
	ok(strstr(refusal("lower(name) = 'a'"), "function call") != NULL,
	    "a function call");
	ok(strstr(refusal("a = 1; drop table x"), "';'") != NULL,
	    "a second statement");
	ok(strstr(refusal("\"Name\" = 1"), "quoted column name") != NULL,
	    "a quoted identifier");
	ok(strstr(refusal("a = 'x\\y'"), "backslash") != NULL,
	    "a backslash, which MySQL and PostgreSQL read differently");
	ok(strstr(refusal("a BETWEEN 1 AND 2"), "'BETWEEN'") != NULL,
	    "BETWEEN");
	ok(strstr(refusal("a IS TRUE"), "IS without NULL") != NULL,
	    "IS TRUE is not in the subset (MySQL's reads any non-zero)");
	ok(strstr(refusal("TRUE"), "without a comparison") != NULL,
	    "a bare TRUE is no predicate");
	ok(strstr(refusal("a = TRUEx"), "(accepted)") != NULL,
	    "TRUEx is a column name, not TRUE");
	ok(strstr(refusal("a = 'x' AND b IN (c)"), "boolean literal in an IN "
	    "list") != NULL, "the IN list message names the literals");
	ok(strstr(refusal("a = 1 +"), "byte") != NULL, "an arithmetic tail");
	ok(strstr(refusal("a IS 1"), "IS without NULL") != NULL, "IS 1");
	ok(strstr(refusal("a IN (b)"), "IN list") != NULL,
	    "a column in an IN list");
	ok(strstr(refusal("(a = 1"), "without its ')'") != NULL,
	    "an open parenthesis");
	ok(strstr(refusal("a = 'x"), "closing quote") != NULL,
	    "an open string");
	ok(strstr(refusal("a"), "without a comparison") != NULL,
	    "a bare column");
	ok(strstr(refusal(""), "end of the expression") != NULL, "nothing");
	{
		struct sbuf deep = SBUF_INIT;
		int i;

		ok(strstr(refusal(nots(&deep, 100)), "64 levels") != NULL,
		    "nesting is bounded");
		ok(strstr(refusal(nots(&deep, 65)), "64 levels") != NULL,
		    "65 NOTs are one level too many");
		is_str(refusal(nots(&deep, 64)), "(accepted)", "64 NOTs are not");
		sbuf_reset(&deep);
		for (i = 0; i < 300; i++)
			sbuf_addc(&deep, '(');
		sbuf_adds(&deep, "a = 1");
		for (i = 0; i < 300; i++)
			sbuf_addc(&deep, ')');
		ok(strstr(refusal(deep.buf), "256 levels") != NULL,
		    "redundant parentheses are bounded for the stack");
		sbuf_release(&deep);
	}
	{
		struct sbuf chain = SBUF_INIT;
		int i;

		for (i = 0; i <= 1000; i++)
			sbuf_addf(&chain, "%sa = %d", i ? " AND " : "", i);
		ok(strstr(refusal(chain.buf), "more than 1000") != NULL,
		    "comparisons are bounded");
		sbuf_release(&chain);
	}
}

static void
test_sql(void)
{
	is_str(sql("status IN ('paid', 'it''s') AND total >= -1.5e2 OR "
	    "NOT x IS NULL"),
	    "(((\"status\" IN ('paid', 'it's')) AND (\"total\" >= -1.5e2)) OR "
	    "(NOT (\"x\" IS NULL)))",
	    "written back fully parenthesised, names and literals quoted by "
	    "the caller");
	is_str(sql("a != 1"), "(\"a\" <> 1)", "!= as <>");
	{
		struct sbuf chain = SBUF_INIT;
		int i;

		/* 200 terms: written as one list, since nested parentheses
		 * would exceed the depth the parser reads back */
		for (i = 0; i < 200; i++)
			sbuf_addf(&chain, "%sa = %d", i ? " OR " : "", i);
		ok(reads_back(chain.buf, 0), "a long chain reads back");
		sbuf_release(&chain);
	}
	{
		/* the deepest filter the parser takes, alternating operators
		 * and NOTs so no level is a chain: its rendering, which adds
		 * parentheses around every node, reads back all the same */
		struct sbuf deep = SBUF_INIT;
		int i;

		for (i = 0; i < 64; i++)
			sbuf_adds(&deep, i % 3 == 0 ? "NOT (" : i % 3 == 1 ?
			    "a = 1 OR (" : "b = 2 AND (");
		sbuf_adds(&deep, "c = 3");
		for (i = 0; i < 64; i++)
			sbuf_addc(&deep, ')');
		ok(reads_back(deep.buf, 1),
		    "64 levels of nesting read back from their rendering");
		/* 25 NOTs: each renders as "(NOT (...))", the case that once
		 * passed the parser and failed reading its own SQL back */
		ok(reads_back(nots(&deep, 25), 0), "25 NOTs read back");
		sbuf_release(&deep);
	}
	{
		struct where *w = where_parse("b = a AND a > 1 OR c IS NULL",
		    NULL, 0);

		ok(w && where_ncolumns(w) == 3 &&
		    strcmp(where_column(w, 0), "b") == 0 &&
		    strcmp(where_column(w, 1), "a") == 0 &&
		    strcmp(where_column(w, 2), "c") == 0,
		    "its columns, each once, in order");
		where_free(w);
	}
}

static void
test_templates(void)
{
	struct tmpl t;
	char why[256], *g;

	ok(tmpl_parse("tenant-{tenant_id}-{id}", &t, why, sizeof(why)) == 0 &&
	    t.nparts == 4 && t.ncolumns == 2 && t.nliteral == 8 &&
	    strcmp(t.parts[1].text, "tenant_id") == 0 && t.parts[1].column &&
	    strcmp(t.parts[2].text, "-") == 0 && !t.parts[2].column,
	    "literals and placeholders");
	ok(tmpl_names(&t, "id") && !tmpl_names(&t, "tenant"), "tmpl_names");
	g = tmpl_glob(&t);
	is_str(g, "tenant-*-*", "its glob");
	free(g);
	tmpl_release(&t);
	ok(tmpl_parse("a{{b}}{c}{d}", &t, why, sizeof(why)) == 0 &&
	    t.nparts == 3 && strcmp(t.parts[0].text, "a{b}") == 0,
	    "braces doubled are literal");
	g = tmpl_glob(&t);
	is_str(g, "a{b}*", "adjacent placeholders are one star");
	free(g);
	tmpl_release(&t);
	ok(tmpl_parse("a{b", &t, why, sizeof(why)) == -1 &&
	    strstr(why, "without its '}'"), "an open placeholder");
	ok(tmpl_parse("a}b", &t, why, sizeof(why)) == -1, "a lone '}'");
	ok(tmpl_parse("a{}", &t, why, sizeof(why)) == -1, "an empty one");
	ok(glob_match("events-*", "events-acme") &&
	    !glob_match("events-*", "event-acme") &&
	    glob_match("a*b*c", "axxbyyc") && !glob_match("a*b", "ab-"),
	    "glob_match");
	ok(glob_overlap("events-*", "events-acme") &&
	    glob_overlap("e*-x", "ev-*") && !glob_overlap("a-*", "b-*") &&
	    !glob_overlap("logs-*-x", "logs-*-y") &&
	    glob_overlap("*-2024", "logs-*"), "glob_overlap");
}

int
main(void)
{
	test_logic();
	test_booleans();
	test_numbers();
	test_refusals();
	test_sql();
	test_templates();
	return done_testing();
}
