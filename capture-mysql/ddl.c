/*
 * ddl.c - what a QUERY event's statement is, as far as the stream cares:
 * a transaction's BEGIN, COMMIT or ROLLBACK, an XA statement, and the
 * statements that change a table (TRUNCATE, DROP, ALTER, RENAME, CREATE)
 * with the tables they name, each with its database (the event's default
 * for a bare name). A lexer of MySQL's SQL text, not a parser: words in
 * any case, blanks and comments (C-style, -- and #) skipped, names bare
 * or `quoted` (`` inside a quoted one is a backquote). A statement it does
 * not recognise is DDL_OTHER, never an error: the binlog only holds
 * statements the server ran.
 *
 * Pure: no I/O; knows nothing of the configured tables (txn.c decides
 * what a named table means for the stream). Never exits.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "binlog.h"
#include "xio.h"

struct sql {
	const char *p, *end;
};

static void
skip(struct sql *s)
{
	for (;;) {
		while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
		    *s->p == '\n' || *s->p == '\r'))
			s->p++;
		if (s->end - s->p >= 2 && s->p[0] == '/' && s->p[1] == '*') {
			const char *e;

			for (e = s->p + 2; e + 1 < s->end &&
			    !(e[0] == '*' && e[1] == '/'); e++)
				;
			s->p = e + 1 < s->end ? e + 2 : s->end;
			continue;
		}
		if ((s->end - s->p >= 2 && s->p[0] == '-' && s->p[1] == '-') ||
		    (s->p < s->end && s->p[0] == '#')) {
			while (s->p < s->end && *s->p != '\n')
				s->p++;
			continue;
		}
		return;
	}
}

/* the next word, case-insensitively equal to w: taken (1), or 0 */
static int
word(struct sql *s, const char *w)
{
	size_t n = strlen(w);

	skip(s);
	if ((size_t)(s->end - s->p) < n || strncasecmp(s->p, w, n) != 0)
		return 0;
	if (s->p + n < s->end && (s->p[n] == '_' ||
	    (s->p[n] >= 'a' && s->p[n] <= 'z') ||
	    (s->p[n] >= 'A' && s->p[n] <= 'Z') ||
	    (s->p[n] >= '0' && s->p[n] <= '9')))
		return 0;
	s->p += n;
	return 1;
}

/* the statement is the word w alone (then only ';' or blanks) */
static int
alone(const char *sql, size_t len, const char *w)
{
	struct sql s = { sql, sql + len };

	if (!word(&s, w))
		return 0;
	skip(&s);
	return s.p == s.end || *s.p == ';';
}

/* the next character after blanks and comments is c: taken (1), or 0 */
static int
punct(struct sql *s, char c)
{
	skip(s);
	if (s->p >= s->end || *s->p != c)
		return 0;
	s->p++;
	return 1;
}

/* an identifier, bare or `quoted`, unquoted onto out: 1, or 0 when there
 * is none (out as it was) */
static int
ident(struct sql *s, struct sbuf *out)
{
	size_t start = out->len;

	skip(s);
	if (s->p < s->end && *s->p == '`') {
		for (s->p++; s->p < s->end; s->p++) {
			if (*s->p == '`') {
				if (s->p + 1 < s->end && s->p[1] == '`') {
					sbuf_addc(out, '`');
					s->p++;
					continue;
				}
				s->p++;
				return 1;
			}
			sbuf_addc(out, *s->p);
		}
		out->len = start;
		return 0;
	}
	while (s->p < s->end && (*s->p == '_' || *s->p == '$' ||
	    (*s->p >= 'a' && *s->p <= 'z') || (*s->p >= 'A' && *s->p <= 'Z') ||
	    (*s->p >= '0' && *s->p <= '9') || (unsigned char)*s->p >= 0x80))
		sbuf_addc(out, *s->p++);
	return out->len > start;
}

static struct ddl_table *
add_table(struct ddl *d)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 4;
		d->t = xrealloc(d->t, (size_t)d->cap * sizeof(*d->t));
	}
	memset(&d->t[d->n], 0, sizeof(d->t[0]));
	return &d->t[d->n++];
}

/* [db.]table appended to the tables named: 1, or 0 when no name is there
 * (nothing appended) */
static int
table(struct ddl *d, struct sql *s, const char *db, size_t dblen)
{
	size_t at = d->names.len, a_len;
	struct ddl_table *t;

	/* the names are offsets into one buffer: there is one from here,
	 * even when every name is empty */
	sbuf_grow(&d->names, 1);
	if (!ident(s, &d->names))
		return 0;
	a_len = d->names.len - at;
	if (punct(s, '.')) {
		if (!ident(s, &d->names)) {
			d->names.len = at;
			return 0;
		}
		t = add_table(d);
		t->named = 1;
		t->db = at;
		t->dblen = a_len;
		t->table = at + a_len;
		t->tablelen = d->names.len - at - a_len;
		return 1;
	}
	sbuf_add(&d->names, db, dblen);
	t = add_table(d);
	t->named = 1;
	t->table = at;
	t->tablelen = a_len;
	t->db = at + a_len;
	t->dblen = dblen;
	return 1;
}

void
ddl_init(struct ddl *d)
{
	memset(d, 0, sizeof(*d));
	sbuf_init(&d->names);
}

void
ddl_release(struct ddl *d)
{
	free(d->t);
	sbuf_release(&d->names);
	memset(d, 0, sizeof(*d));
}

const char *
ddl_db(const struct ddl *d, int i, size_t *len)
{
	*len = d->t[i].dblen;
	return d->names.buf + d->t[i].db;
}

const char *
ddl_name(const struct ddl *d, int i, size_t *len)
{
	*len = d->t[i].tablelen;
	return d->names.buf + d->t[i].table;
}

void
ddl_read(struct ddl *d, const char *sql, size_t len, const char *db,
    size_t dblen)
{
	struct sql s = { sql, sql + len };

	d->verb = DDL_OTHER;
	d->n = 0;
	sbuf_reset(&d->names);
	if (alone(sql, len, "BEGIN")) {
		d->verb = DDL_BEGIN;
		return;
	}
	if (alone(sql, len, "COMMIT") || alone(sql, len, "ROLLBACK")) {
		d->verb = DDL_COMMIT;
		return;
	}
	if (word(&s, "XA")) {
		d->verb = DDL_XA;
		return;
	}
	if (word(&s, "TRUNCATE")) {
		d->verb = DDL_TRUNCATE;
		word(&s, "TABLE");
		table(d, &s, db, dblen);
		return;
	}
	if (word(&s, "DROP")) {
		word(&s, "TEMPORARY");
		if (!word(&s, "TABLE") && !word(&s, "TABLES"))
			return;
		d->verb = DDL_DROP;
		if (word(&s, "IF"))
			word(&s, "EXISTS");
		while (table(d, &s, db, dblen) && punct(&s, ','))
			;
		return;
	}
	if (word(&s, "ALTER")) {
		word(&s, "ONLINE");
		word(&s, "IGNORE");
		if (!word(&s, "TABLE"))
			return;
		d->verb = DDL_ALTER;
		table(d, &s, db, dblen);
		return;
	}
	if (word(&s, "RENAME")) {
		if (!word(&s, "TABLE") && !word(&s, "TABLES"))
			return;
		d->verb = DDL_RENAME;
		/* pairs, from then to; a to that is no name is kept as one
		 * not named, so the pair's from still counts */
		while (table(d, &s, db, dblen)) {
			if (!word(&s, "TO")) {
				d->n--;
				break;
			}
			if (!table(d, &s, db, dblen))
				add_table(d);
			if (!punct(&s, ','))
				break;
		}
		return;
	}
	if (word(&s, "CREATE")) {
		if (word(&s, "OR"))
			word(&s, "REPLACE");
		word(&s, "TEMPORARY");
		if (!word(&s, "TABLE"))
			return;
		d->verb = DDL_CREATE;
		if (word(&s, "IF")) {
			word(&s, "NOT");
			word(&s, "EXISTS");
		}
		table(d, &s, db, dblen);
	}
}
