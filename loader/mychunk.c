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
#include <stdio.h>
#include <string.h>

#include "../capture-mysql/binlog.h"
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

/* `name`, a backtick inside doubled */
static void
ident(struct sbuf *sql, const char *name)
{
	const char *p;

	sbuf_addc(sql, '`');
	for (p = name; *p; p++) {
		if (*p == '`')
			sbuf_addc(sql, '`');
		sbuf_addc(sql, *p);
	}
	sbuf_addc(sql, '`');
}

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

int
mychunk_sql(struct sbuf *sql, const struct my_table *t,
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
	if (after != NULL) {
		sbuf_adds(sql, " WHERE ");
		if (after_clause(sql, t, after, q, arg) == -1)
			return -1;
	}
	sbuf_adds(sql, " ORDER BY ");
	for (i = 0; i < t->nkeys; i++) {
		if (i > 0)
			sbuf_adds(sql, ", ");
		ident(sql, t->cols[t->keys[i]].name);
	}
	sbuf_addc(sql, ' ');
	sbuf_addf(sql, "LIMIT %llu", (unsigned long long)limit);
	if (tail[0] != '\0') {
		sbuf_addc(sql, ' ');
		sbuf_adds(sql, tail);
	}
	return 0;
}
