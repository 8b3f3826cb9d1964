/*
 * range.c - how a table is cut: how many ranges, how large a sample
 * finds their boundaries, which sampled keys become boundaries, and the
 * WHERE clause that selects one range. Pure arithmetic and text, no I/O:
 * the queries themselves are table.c's.
 *
 * A range is selected by comparisons on the key written out column by
 * column, never by a row constructor, so that a planner that only knows
 * how to use an index for a comparison on one column still can.
 */
#include <stdlib.h>
#include <string.h>

#include "loader.h"

/*
 * TABLESAMPLE SYSTEM picks whole pages, and the rows of one page tend to
 * hold neighbouring keys: what makes a boundary land near its quantile is
 * the number of pages behind it, so the sample asks for pages. Without a
 * page count it asks for rows. The total is capped because every sampled
 * key crosses to the client.
 */
#define SAMPLE_PAGES_PER_RANGE	50
#define SAMPLE_ROWS_PER_RANGE	200
#define SAMPLE_ROWS_MAX		2000000

int
range_count(uint64_t rows, uint64_t range_rows)
{
	uint64_t n, fine;

	if (range_rows == 0)
		return 1;
	n = rows / range_rows + (rows % range_rows != 0);
	fine = rows / LOAD_RANGE_ROWS_MIN;
	/* the default size only: a size asked for is taken as asked */
	if (range_rows == LOAD_RANGE_ROWS && n < LOAD_RANGES_MIN && fine > n)
		n = fine < LOAD_RANGES_MIN ? fine : LOAD_RANGES_MIN;
	if (n < 1)
		n = 1;
	return n > LOAD_RANGES_MAX ? LOAD_RANGES_MAX : (int)n;
}

double
range_sample_percent(uint64_t rows, uint64_t pages, int nranges)
{
	double pct, cap;

	if (nranges <= 1 || rows == 0)
		return 0;
	if (pages > 0)
		pct = 100.0 * SAMPLE_PAGES_PER_RANGE * nranges / pages;
	else
		pct = 100.0 * SAMPLE_ROWS_PER_RANGE * nranges / rows;
	/* at least the rows the boundaries need, at most what the client
	 * should hold */
	if (pct < 100.0 * SAMPLE_ROWS_PER_RANGE * nranges / rows)
		pct = 100.0 * SAMPLE_ROWS_PER_RANGE * nranges / rows;
	cap = 100.0 * SAMPLE_ROWS_MAX / rows;
	if (pct > cap)
		pct = cap;
	return pct > 100 ? 100 : pct;
}

int
range_pick(size_t nsample, int nranges, size_t *idx)
{
	size_t at;
	int i, n = 0;

	if (nsample == 0)
		return 0;
	/* the i-th of nranges quantiles; a sample smaller than the ranges
	 * asked for repeats indexes, and a repeated boundary would make an
	 * empty range */
	for (i = 1; i < nranges; i++) {
		at = (size_t)((unsigned long long)i * nsample / nranges);
		if (n > 0 && at <= idx[n - 1])
			continue;
		idx[n++] = at;
	}
	return n;
}

/* (k1 OP1 v1) for column c with every earlier column equal: the
 * disjuncts of a comparison on the whole key */
static void
disjunct(struct sbuf *sql, const struct ld_key *keys, char *const *lit,
    int c, const char *op)
{
	int i;

	sbuf_addc(sql, '(');
	for (i = 0; i < c; i++)
		sbuf_addf(sql, "%s = %s::%s AND ", keys[i].ident, lit[i],
		    keys[i].type);
	sbuf_addf(sql, "%s %s %s::%s)", keys[c].ident, op, lit[c],
	    keys[c].type);
}

/*
 * key >= v (lower) or key < v (upper), column by column. With several
 * columns the first is also bounded on its own (k1 >= v1, k1 <= v1):
 * implied by the disjunction, and what lets the planner read a range of
 * the index instead of a union of open-ended ones.
 */
static void
bound(struct sbuf *sql, const struct ld_key *keys, int nkeys,
    char *const *lit, int lower)
{
	int c;

	if (nkeys == 1) {
		sbuf_addf(sql, "%s %s %s::%s", keys[0].ident,
		    lower ? ">=" : "<", lit[0], keys[0].type);
		return;
	}
	sbuf_addf(sql, "%s %s %s::%s AND (", keys[0].ident,
	    lower ? ">=" : "<=", lit[0], keys[0].type);
	for (c = 0; c < nkeys; c++) {
		if (c > 0)
			sbuf_adds(sql, " OR ");
		disjunct(sql, keys, lit, c, c < nkeys - 1 ?
		    (lower ? ">" : "<") : (lower ? ">=" : "<"));
	}
	sbuf_addc(sql, ')');
}

/* the literals of one boundary; 0 or -1 (those quoted are freed) */
static int
quote_all(char **lit, const char *const *v, int nkeys, range_quote_fn q,
    void *arg)
{
	int i;

	for (i = 0; i < nkeys; i++)
		if ((lit[i] = q(arg, v[i])) == NULL) {
			while (i-- > 0) {
				free(lit[i]);
				lit[i] = NULL;
			}
			return -1;
		}
	return 0;
}

int
range_where(struct sbuf *sql, const struct ld_key *keys, int nkeys,
    const char *const *lo, const char *const *hi, range_quote_fn q,
    void *arg)
{
	char **llit, **hlit;
	int i, rc = -1;

	if (lo == NULL && hi == NULL)
		return 0;
	llit = xcalloc(nkeys, sizeof(*llit));
	hlit = xcalloc(nkeys, sizeof(*hlit));
	if (lo != NULL && quote_all(llit, lo, nkeys, q, arg) == -1)
		goto out;
	if (hi != NULL && quote_all(hlit, hi, nkeys, q, arg) == -1)
		goto out;
	sbuf_adds(sql, " WHERE ");
	if (lo != NULL) {
		sbuf_addc(sql, '(');
		bound(sql, keys, nkeys, llit, 1);
		sbuf_addc(sql, ')');
	}
	if (lo != NULL && hi != NULL)
		sbuf_adds(sql, " AND ");
	if (hi != NULL) {
		sbuf_addc(sql, '(');
		bound(sql, keys, nkeys, hlit, 0);
		sbuf_addc(sql, ')');
	}
	rc = 0;
out:
	for (i = 0; i < nkeys; i++) {
		free(llit[i]);
		free(hlit[i]);
	}
	free(llit);
	free(hlit);
	return rc;
}
