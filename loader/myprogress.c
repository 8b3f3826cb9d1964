/*
 * myprogress.c - the progress object of a MySQL or MariaDB table: what a
 * mark tells the supervisor and what a later run resumes from. The
 * supervisor stores it without reading it; only this file knows its
 * members.
 *
 *   {"chunks":3,"rows":150000,"key":["id"],"types":["int(11)"],
 *    "after_hex":["313530303030"],"finished":false}
 *
 * A chunked table needs nothing stored but where the last chunk ended:
 * the key of the last row written, which the next chunk starts past. The
 * key values are the bytes the server returned, in hex: a binary key is
 * not text, and the literal that goes back is built from the bytes. The
 * key's names and column types say which key they belong to; after
 * another key the values mean nothing. Pure: no I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"

/* MySQL's MAX_REF_PARTS */
#define KEY_COLUMNS_MAX		16
/* a key value's bytes: MySQL's longest key is 3072 bytes */
#define KEY_VALUE_MAX		65536

void
myprogress_init(struct myprogress *p)
{
	memset(p, 0, sizeof(*p));
}

static void
free_values(struct copy_field *v, int n)
{
	int i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free((char *)v[i].p);
	free(v);
}

void
myprogress_release(struct myprogress *p)
{
	progress_free_strings(p->key, p->nkeys);
	progress_free_strings(p->types, p->nkeys);
	free_values(p->after, p->nkeys);
	myprogress_init(p);
}

void
myprogress_start(struct myprogress *p, int nkeys, const char *const *names,
    const char *const *types)
{
	int i;

	myprogress_init(p);
	p->nkeys = nkeys;
	p->key = xcalloc(nkeys, sizeof(char *));
	p->types = xcalloc(nkeys, sizeof(char *));
	p->after = xcalloc(nkeys, sizeof(*p->after));
	for (i = 0; i < nkeys; i++) {
		p->key[i] = xstrdup(names[i]);
		p->types[i] = xstrdup(types[i]);
	}
}

void
myprogress_after(struct myprogress *p, const struct copy_field *v)
{
	char *c;
	int i;

	for (i = 0; i < p->nkeys; i++) {
		c = xmalloc(v[i].n + 1);
		memcpy(c, v[i].p, v[i].n);
		c[v[i].n] = '\0';
		free((char *)p->after[i].p);
		p->after[i] = (struct copy_field){ c, v[i].n };
	}
	p->have_after = 1;
}

void
myprogress_put(struct sbuf *out, const struct myprogress *p)
{
	static const char hex[] = "0123456789abcdef";
	size_t k;
	int i;

	sbuf_addf(out, "{\"chunks\":%d,\"rows\":", p->chunks);
	sbuf_add_u64(out, p->rows);
	sbuf_adds(out, ",\"key\":");
	progress_put_strings(out, p->key, p->nkeys);
	sbuf_adds(out, ",\"types\":");
	progress_put_strings(out, p->types, p->nkeys);
	if (p->have_after) {
		sbuf_adds(out, ",\"after_hex\":[");
		for (i = 0; i < p->nkeys; i++) {
			sbuf_adds(out, i > 0 ? ",\"" : "\"");
			for (k = 0; k < p->after[i].n; k++) {
				sbuf_addc(out, hex[(unsigned char)
				    p->after[i].p[k] >> 4]);
				sbuf_addc(out, hex[(unsigned char)
				    p->after[i].p[k] & 15]);
			}
			sbuf_addc(out, '"');
		}
		sbuf_addc(out, ']');
	}
	sbuf_addf(out, ",\"finished\":%s}", p->finished ? "true" : "false");
}

static int
bad(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "progress %s", what);
	return -1;
}

static int
unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* the hex texts into bytes, in place; -1 on anything but pairs of
 * lowercase hex digits */
static int
decode(struct myprogress *p, char **texts)
{
	size_t n, i;
	int k, hi, lo;

	for (k = 0; k < p->nkeys; k++) {
		n = strlen(texts[k]);
		if (n % 2 || n / 2 > KEY_VALUE_MAX)
			return -1;
		for (i = 0; i < n / 2; i++) {
			if ((hi = unhex(texts[k][2 * i])) < 0 ||
			    (lo = unhex(texts[k][2 * i + 1])) < 0)
				return -1;
			texts[k][i] = (char)(hi << 4 | lo);
		}
		texts[k][n / 2] = '\0';
		p->after[k] = (struct copy_field){ texts[k], n / 2 };
		texts[k] = NULL;
	}
	return 0;
}

int
myprogress_parse(struct jspan obj, struct myprogress *p, char *err,
    size_t errlen)
{
	static const char *const names[] = { "chunks", "rows", "key",
	    "types", "after_hex", "finished" };
	struct jspan m[6];
	char *texts[KEY_COLUMNS_MAX];
	uint64_t u;
	int n, got, rc;

	myprogress_init(p);
	if (jspan_type(obj) != J_OBJECT)
		return bad(err, errlen, "is not an object");
	jobj_pick(obj, names, 6, m);
	if (m[0].p == NULL || jspan_type(m[0]) != J_NUMBER ||
	    jnum_u64(m[0], &u) == -1 || u > 0x7fffffff)
		return bad(err, errlen, "has no \"chunks\" count");
	p->chunks = (int)u;
	if (m[1].p == NULL || jspan_type(m[1]) != J_NUMBER ||
	    jnum_u64(m[1], &p->rows) == -1)
		return bad(err, errlen, "has no \"rows\" count");
	if (m[5].p == NULL || (jspan_type(m[5]) != J_TRUE &&
	    jspan_type(m[5]) != J_FALSE))
		return bad(err, errlen, "has no \"finished\" flag");
	p->finished = jspan_type(m[5]) == J_TRUE;

	p->key = xcalloc(KEY_COLUMNS_MAX, sizeof(char *));
	p->types = xcalloc(KEY_COLUMNS_MAX, sizeof(char *));
	p->after = xcalloc(KEY_COLUMNS_MAX, sizeof(*p->after));
	rc = progress_get_strings(m[2], p->key, KEY_COLUMNS_MAX, &n);
	p->nkeys = n;
	/* a table without a key (append_only) is read in one chunk */
	if (rc == -1 || (n == 0 && (p->chunks > 1 || !p->finished))) {
		bad(err, errlen, "has no \"key\" of 1 to 16 names (none only "
		    "for a table read in one chunk)");
		goto fail;
	}
	rc = progress_get_strings(m[3], p->types, n, &got);
	if (rc == -1 || got != n) {
		/* what was copied is freed with the rest: nkeys covers it */
		bad(err, errlen, "has no \"types\" for every key column");
		goto fail;
	}
	if (m[4].p == NULL || n == 0) {
		if (n > 0 && p->chunks > 0 && p->rows > 0) {
			bad(err, errlen, "has rows but no \"after_hex\"");
			goto fail;
		}
		return 0;
	}
	memset(texts, 0, sizeof(texts));
	rc = progress_get_strings(m[4], texts, n, &got);
	if (rc == 0 && got != n)
		rc = -1;
	if (rc == 0)
		rc = decode(p, texts);
	for (got = 0; got < KEY_COLUMNS_MAX; got++)
		free(texts[got]);
	if (rc == -1) {
		bad(err, errlen, "has no \"after_hex\" of one hex text per "
		    "key column");
		goto fail;
	}
	p->have_after = 1;
	return 0;
fail:
	myprogress_release(p);
	return -1;
}
