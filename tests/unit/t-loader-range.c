/*
 * t-loader-range.c - how the loader cuts a table (range.c): the number of
 * ranges, the sample size, which sampled keys become boundaries, and the
 * WHERE clause of a range for keys of one, two and three columns.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "sbuf.h"
#include "../../loader/loader.h"

/*
 * What PQescapeLiteral writes with standard_conforming_strings on: quotes
 * doubled, and the E'' form with backslashes doubled when there is one.
 * A value named "FAIL" fails, as an encoding error would.
 */
static char *
quote(void *arg, const char *s)
{
	struct sbuf b = SBUF_INIT;
	int *calls = arg;

	(*calls)++;
	if (strcmp(s, "FAIL") == 0)
		return NULL;
	if (strchr(s, '\\'))
		sbuf_adds(&b, " E");
	sbuf_addc(&b, '\'');
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			sbuf_addc(&b, *s);
		sbuf_addc(&b, *s);
	}
	sbuf_addc(&b, '\'');
	return b.buf;
}

static void
where(const struct ld_key *keys, int nkeys, const char *const *lo,
    const char *const *hi, const char *want, const char *what)
{
	struct sbuf sql = SBUF_INIT;
	int calls = 0, rc;

	sbuf_adds(&sql, "SELECT");
	rc = range_where(&sql, keys, nkeys, lo, hi, quote, &calls);
	ok(rc == 0, "%s: built", what);
	is_str(sql.buf, want, "%s", what);
	is_int(calls, (lo ? nkeys : 0) + (hi ? nkeys : 0),
	    "%s: each value quoted once", what);
	sbuf_release(&sql);
}

static void
counts(void)
{
	is_int(range_count(0, 250000), 1, "an empty table is one range");
	is_int(range_count(10000, 250000), 1, "a small table "
	    "is one range");
	is_int(range_count(250001, 250000), 8, "a table worth resuming is "
	    "cut in at least 8");
	is_int(range_count(1000000, 250000), 8, "1M rows make 8 ranges");
	is_int(range_count(200000, 250000), 8, "so do 200,000");
	is_int(range_count(100000, 250000), 5, "100,000: no range under "
	    "20,000 rows");
	is_int(range_count(30000, 250000), 1, "30,000: one range");
	is_int(range_count(4000000, 250000), 16, "4M rows: 250,000 a range");
	is_int(range_count(250001, 100000), 3, "a size asked for is taken as "
	    "asked");
	is_int(range_count(1000000000000ULL, 250000), LOAD_RANGES_MAX,
	    "a huge table is capped at the most ranges");
	is_int(range_count(10, 0), 1, "no range size: one range");
}

static int
near(double got, double want)
{
	return got > want * 0.999 && got < want * 1.001;
}

static void
sample_size(void)
{
	double p;

	ok(range_sample_percent(1000000, 10000, 1) == 0, "one range: no "
	    "sample");
	p = range_sample_percent(1000000, 10000, 4);
	ok(near(p, 2.0), "50 pages per range: 2 %% of 10,000 pages (%g)", p);
	p = range_sample_percent(300000, 2000, 2);
	ok(near(p, 5.0), "small table: 5 %% (%g)", p);
	p = range_sample_percent(40000, 100, 4);
	ok(p == 100, "more pages than the table has: all of it (%g)", p);
	p = range_sample_percent(1000000, 0, 4);
	ok(near(p, 0.08), "no page count: 200 rows per range (%g)", p);
	p = range_sample_percent(1000000, 1000000, 4);
	ok(near(p, 0.08), "wide rows: at least 200 rows per range (%g)", p);
	p = range_sample_percent(1000000000ULL, 10000000, 2000);
	ok(near(p, 0.2), "a billion rows: capped at 2M sampled rows (%g)", p);
}

static void
pick(size_t nsample, int nranges, const size_t *want, int nwant)
{
	size_t idx[64];
	int n, i, same;

	n = range_pick(nsample, nranges, idx);
	same = n == nwant;
	for (i = 0; same && i < n; i++)
		same = idx[i] == want[i];
	ok(same, "%zu sampled keys, %d ranges: %d boundaries", nsample,
	    nranges, nwant);
	if (!same)
		for (i = 0; i < n; i++)
			diag("idx[%d] = %zu", i, idx[i]);
}

static void
boundaries(void)
{
	static const size_t q4[] = { 25, 50, 75 }, q3[] = { 2, 4 },
	    few[] = { 0, 1, 2 }, one[] = { 0 };

	pick(100, 4, q4, 3);
	pick(7, 3, q3, 2);
	pick(3, 10, few, 3);
	pick(1, 5, one, 1);
	pick(0, 5, NULL, 0);
	pick(10, 1, NULL, 0);
}

static void
predicates(void)
{
	struct ld_key k1[] = { { "id", "\"id\"", "bigint" } };
	struct ld_key k2[] = { { "a", "\"a\"", "integer" },
	    { "b", "\"b\"", "text" } };
	struct ld_key k3[] = { { "tenant", "\"tenant\"", "text" },
	    { "Day", "\"Day\"", "date" }, { "n", "\"n\"", "numeric" } };
	const char *lo1[] = { "100" }, *hi1[] = { "200" };
	const char *lo2[] = { "1", "x" }, *hi2[] = { "5", "y" };
	const char *lo3[] = { "O'Brien", "2026-01-01", "1.5" };
	const char *hi3[] = { "a\\b \xe6\x97\xa5", "2026-12-31", "-0.000001" };
	const char *bad[] = { "FAIL" };
	struct sbuf sql = SBUF_INIT;
	int calls = 0;

	where(k1, 1, NULL, NULL, "SELECT", "one range: no WHERE");
	where(k1, 1, NULL, hi1, "SELECT WHERE (\"id\" < '200'::bigint)",
	    "1 column, first range");
	where(k1, 1, lo1, NULL, "SELECT WHERE (\"id\" >= '100'::bigint)",
	    "1 column, last range");
	where(k1, 1, lo1, hi1, "SELECT WHERE (\"id\" >= '100'::bigint) AND "
	    "(\"id\" < '200'::bigint)", "1 column, a middle range");
	where(k2, 2, lo2, hi2, "SELECT WHERE (\"a\" >= '1'::integer AND "
	    "((\"a\" > '1'::integer) OR (\"a\" = '1'::integer AND "
	    "\"b\" >= 'x'::text))) AND (\"a\" <= '5'::integer AND "
	    "((\"a\" < '5'::integer) OR (\"a\" = '5'::integer AND "
	    "\"b\" < 'y'::text)))", "2 columns, expanded, no row constructor");
	where(k3, 3, lo3, hi3, "SELECT WHERE (\"tenant\" >= 'O''Brien'::text "
	    "AND ((\"tenant\" > 'O''Brien'::text) OR (\"tenant\" = "
	    "'O''Brien'::text AND \"Day\" > '2026-01-01'::date) OR "
	    "(\"tenant\" = 'O''Brien'::text AND \"Day\" = '2026-01-01'::date "
	    "AND \"n\" >= '1.5'::numeric))) AND (\"tenant\" <=  E'a\\\\b "
	    "\xe6\x97\xa5'::text AND ((\"tenant\" <  E'a\\\\b \xe6\x97\xa5'::text) "
	    "OR (\"tenant\" =  E'a\\\\b \xe6\x97\xa5'::text AND \"Day\" < "
	    "'2026-12-31'::date) OR (\"tenant\" =  E'a\\\\b \xe6\x97\xa5'::text "
	    "AND \"Day\" = '2026-12-31'::date AND \"n\" < '-0.000001'::numeric)"
	    "))", "3 columns: quotes, backslashes, unicode, quoted names");
	where(k3, 3, NULL, hi3, "SELECT WHERE (\"tenant\" <=  E'a\\\\b "
	    "\xe6\x97\xa5'::text AND ((\"tenant\" <  E'a\\\\b \xe6\x97\xa5'::text) "
	    "OR (\"tenant\" =  E'a\\\\b \xe6\x97\xa5'::text AND \"Day\" < "
	    "'2026-12-31'::date) OR (\"tenant\" =  E'a\\\\b \xe6\x97\xa5'::text "
	    "AND \"Day\" = '2026-12-31'::date AND \"n\" < '-0.000001'::numeric)"
	    "))", "3 columns, first range");

	ok(range_where(&sql, k1, 1, bad, NULL, quote, &calls) == -1,
	    "a value that cannot be quoted fails the range");
	ok(range_where(&sql, k2, 2, lo2, (const char *[]){ "1", "FAIL" },
	    quote, &calls) == -1, "also when it is the last one quoted");
	sbuf_release(&sql);
}

int
main(void)
{
	counts();
	sample_size();
	boundaries();
	predicates();
	return done_testing();
}
