/*
 * mychunk.c - the statement that reads one chunk of a MySQL or MariaDB
 * table: every column in ordinal order (what a row image holds), the rows
 * whose key comes after the last key written, in key order, at most a
 * chunk of them. Pure: the quoting of a string is the caller's (it
 * depends on the connection), everything else is decided here. Never
 * talks to a server.
 *
 * The key comparison is written out column by column, never as a row
 * constructor: (a > x) OR (a = x AND b > y). Both servers read a row
 * constructor comparison correctly, but neither turns it into a range on
 * the primary key in every version, and a chunk that scans the table
 * from its start is a load that slows down as it goes. A leading
 * a >= x gives the optimizer the range outright.
 *
 * A key value goes back to the server as the literal that means exactly
 * the value the server returned: digits bare (a quoted number would be
 * compared as a double, which loses a bigint's last digits), bytes as a
 * hex literal (a binary key is not text in any character set), text and
 * temporal values quoted (compared in the column's collation, and in the
 * session's time zone, which is the one they were read in). Key columns
 * whose order the server's > does not follow (ENUM and SET sort by their
 * ordinal, not their label; BIT; floating point, whose text is not the
 * stored value) are refused before the first chunk.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysql/mycat.h"
#include "mysql/myconn.h"
#include "mysql/myval.h"
#include "where.h"
#include "loader.h"

int
mychunk_pageable(const struct my_col *c)
{
	switch (c->kind) {
	case MK_INT: case MK_UINT: case MK_YEAR: case MK_DECIMAL:
	case MK_TEXT: case MK_BINARY: case MK_DATE: case MK_TIME:
	case MK_DATETIME: case MK_TIMESTAMP:
		return 1;
	default:
		return 0;
	}
}

#define ident	myconn_ident

/* an optional sign, digits, an optional fraction: what the text
 * protocol prints for an integer, a YEAR or a DECIMAL */
static int
is_number(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	if (n > 0 && s[0] == '-')
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (i < n && s[i] == '.' && digits > 0) {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (s[i - 1] == '.')
			return 0;
	}
	return digits > 0 && i == n;
}

static int
literal(struct sbuf *sql, const struct my_col *c, const struct copy_field *v,
    myquote_fn q, void *arg)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	switch (c->kind) {
	case MK_INT: case MK_UINT: case MK_YEAR: case MK_DECIMAL:
		if (!is_number(v->p, v->n))
			return -1;
		sbuf_add(sql, v->p, v->n);
		return 0;
	case MK_BINARY:
		sbuf_adds(sql, "X'");
		for (i = 0; i < v->n; i++) {
			sbuf_addc(sql, hex[(unsigned char)v->p[i] >> 4]);
			sbuf_addc(sql, hex[(unsigned char)v->p[i] & 15]);
		}
		sbuf_addc(sql, '\'');
		return 0;
	case MK_TEXT: case MK_DATE: case MK_TIME: case MK_DATETIME:
	case MK_TIMESTAMP:
		q(arg, sql, v->p, v->n);
		return 0;
	default:
		return -1;
	}
}

/* (k0 >= v0 AND ((k0 > v0) OR (k0 = v0 AND k1 > v1) OR ...)) */
static int
after_clause(struct sbuf *sql, const struct my_table *t,
    const struct copy_field *after, myquote_fn q, void *arg)
{
	const struct my_col *c;
	int i, k;

	c = &t->cols[t->keys[0]];
	if (t->nkeys > 1) {
		ident(sql, c->name);
		sbuf_adds(sql, " >= ");
		if (literal(sql, c, &after[0], q, arg) == -1)
			return -1;
		sbuf_adds(sql, " AND (");
	}
	for (i = 0; i < t->nkeys; i++) {
		if (i > 0)
			sbuf_adds(sql, " OR ");
		sbuf_addc(sql, '(');
		for (k = 0; k <= i; k++) {
			c = &t->cols[t->keys[k]];
			if (k > 0)
				sbuf_adds(sql, " AND ");
			ident(sql, c->name);
			sbuf_adds(sql, k < i ? " = " : " > ");
			if (literal(sql, c, &after[k], q, arg) == -1)
				return -1;
		}
		sbuf_addc(sql, ')');
	}
	if (t->nkeys > 1)
		sbuf_addc(sql, ')');
	return 0;
}

/* what the filter's quoting needs */
struct filter_arg {
	const struct my_table *t;
	myquote_fn q;
	void	*arg;
};

static char *
filter_quote(void *arg, const char *s, int is_ident)
{
	struct filter_arg *a = arg;
	struct sbuf out = SBUF_INIT;
	int ix;

	/* every column was checked before: it has an exact form */
	if (is_ident && (ix = mycat_column(a->t, s)) >= 0)
		myval_filter_sql(&a->t->cols[ix], &out);
	else
		a->q(a->arg, &out, s, strlen(s));
	sbuf_add(&out, "", 0);
	return out.buf;
}

/*
 * 1 when the SQL holds a number with an exponent outside its quoted
 * strings and names: MySQL reads 2e3 as a DOUBLE, and compares a BIGINT
 * or DECIMAL with it inexactly, where the shaper compares exactly.
 */
static int
has_exponent(const char *s)
{
	const char *p = s;

	while (*p) {
		if (*p == '\'' || *p == '`') {
			char q = *p++;

			for (; *p && *p != q; p++)
				if (*p == '\\' && p[1] && q == '\'')
					p++;
			if (*p)
				p++;
		} else if (isalpha((unsigned char)*p) || *p == '_') {
			while (isalnum((unsigned char)*p) || *p == '_' ||
			    *p == '$')
				p++;
		} else if (isdigit((unsigned char)*p) || (*p == '.' &&
		    isdigit((unsigned char)p[1]))) {
			while (isdigit((unsigned char)*p) || *p == '.')
				p++;
			if (*p == 'e' || *p == 'E')
				return 1;
		} else
			p++;
	}
	return 0;
}

int
mychunk_filter(struct sbuf *out, const struct my_table *t,
    const struct where *w, myquote_fn q, void *arg, char *why,
    size_t whylen)
{
	struct filter_arg fa = { t, q, arg };
	struct sbuf probe = SBUF_INIT;
	const char *name;
	int i, ix, rc;

	for (i = 0; i < where_ncolumns(w); i++) {
		name = where_column(w, i);
		if ((ix = mycat_column(t, name)) < 0) {
			snprintf(why, whylen, "it names column '%s', which the "
			    "table does not have (a NULL to the filter)", name);
			return 1;
		}
		sbuf_reset(&probe);
		if (myval_filter_sql(&t->cols[ix], &probe) == -1) {
			snprintf(why, whylen, "column '%s' is %s, whose "
			    "document form MySQL cannot compute exactly", name,
			    t->cols[ix].column_type);
			sbuf_release(&probe);
			return 1;
		}
	}
	sbuf_release(&probe);
	sbuf_reset(out);
	if ((rc = where_sql(w, out, filter_quote, &fa)) == -1)
		return -1;
	if (has_exponent(out->buf)) {
		snprintf(why, whylen, "a number with an exponent would be "
		    "compared as a double");
		sbuf_reset(out);
		return 1;
	}
	return 0;
}

int
mychunk_sql(struct sbuf *sql, const struct my_table *t, const char *filter,
    const struct copy_field *after, uint64_t limit, const char *tail,
    myquote_fn q, void *arg)
{
	int i;

	sbuf_reset(sql);
	sbuf_adds(sql, "SELECT ");
	for (i = 0; i < t->ncols; i++) {
		if (i > 0)
			sbuf_adds(sql, ", ");
		/* the text protocol prints a FLOAT to 6 digits; as a DOUBLE
		 * it is exact, and myval_text narrows it back */
		if (t->cols[i].kind == MK_FLOAT) {
			sbuf_adds(sql, "CAST(");
			ident(sql, t->cols[i].name);
			sbuf_adds(sql, " AS DOUBLE)");
		} else
			ident(sql, t->cols[i].name);
	}
	sbuf_adds(sql, " FROM ");
	ident(sql, t->db);
	sbuf_addc(sql, '.');
	ident(sql, t->name);
	if (filter != NULL) {
		sbuf_adds(sql, " WHERE ");
		sbuf_adds(sql, filter);
	}
	if (after != NULL && t->nkeys > 0) {
		sbuf_adds(sql, filter != NULL ? " AND " : " WHERE ");
		if (after_clause(sql, t, after, q, arg) == -1)
			return -1;
	}
	/* without a key there is no order to page by: one statement */
	if (t->nkeys > 0) {
		sbuf_adds(sql, " ORDER BY ");
		for (i = 0; i < t->nkeys; i++) {
			if (i > 0)
				sbuf_adds(sql, ", ");
			ident(sql, t->cols[t->keys[i]].name);
		}
		sbuf_addf(sql, " LIMIT %llu", (unsigned long long)limit);
	}
	if (tail[0] != '\0') {
		sbuf_addc(sql, ' ');
		sbuf_adds(sql, tail);
	}
	return 0;
}
