/*
 * progress.c - the progress object: what a mark tells the supervisor
 * about a table and what a later run resumes from. The supervisor stores
 * it without reading it; only this file knows its members.
 *
 *   {"done":5,"of":12,"rows":1250000,"key":["id"],"types":["bigint"],
 *    "bounds":[["104211"],["208733"],...]}
 *
 * The boundaries are stored because they cannot be found again: a second
 * sample would cut the table elsewhere, and "5 ranges done" would then
 * name other rows. They are the key values' text, which the type's input
 * function reads back exactly (the session fixes every setting that
 * shapes that text). The key's names and types say which key they cut;
 * another key makes them meaningless.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"

/* PostgreSQL's INDEX_MAX_KEYS */
#define KEY_COLUMNS_MAX		32

void
progress_init(struct progress *p)
{
	memset(p, 0, sizeof(*p));
}

void
progress_free_strings(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
progress_release(struct progress *p)
{
	progress_free_strings(p->key, p->nkeys);
	progress_free_strings(p->types, p->nkeys);
	progress_free_strings(p->bounds, p->of > 1 ?
	    (size_t)(p->of - 1) * p->nkeys : 0);
	progress_init(p);
}

const char *const *
progress_bound(const struct progress *p, int b)
{
	return (const char *const *)p->bounds + (size_t)b * p->nkeys;
}

void
progress_put_strings(struct sbuf *out, char *const *v, int n)
{
	int i;

	sbuf_addc(out, '[');
	for (i = 0; i < n; i++) {
		if (i > 0)
			sbuf_addc(out, ',');
		sbuf_add_jstr(out, v[i], strlen(v[i]));
	}
	sbuf_addc(out, ']');
}

void
progress_put(struct sbuf *out, const struct progress *p)
{
	int b;

	sbuf_addf(out, "{\"done\":%d,\"of\":%d,\"rows\":", p->done, p->of);
	sbuf_add_u64(out, p->rows);
	sbuf_adds(out, ",\"key\":");
	progress_put_strings(out, p->key, p->nkeys);
	sbuf_adds(out, ",\"types\":");
	progress_put_strings(out, p->types, p->nkeys);
	sbuf_adds(out, ",\"bounds\":[");
	for (b = 0; b < p->of - 1; b++) {
		if (b > 0)
			sbuf_addc(out, ',');
		progress_put_strings(out, p->bounds + (size_t)b * p->nkeys,
		    p->nkeys);
	}
	sbuf_adds(out, "]}");
}

static int
bad(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "progress %s", what);
	return -1;
}

int
progress_get_strings(struct jspan arr, char **v, int max, int *n)
{
	struct jiter it;
	struct jspan s;

	*n = 0;
	if (arr.p == NULL || jspan_type(arr) != J_ARRAY ||
	    jiter_init(&it, arr) < 0)
		return -1;
	while (jiter_elem(&it, &s)) {
		if (jspan_type(s) != J_STRING || *n == max)
			return -1;
		v[(*n)++] = jstr_dup(s);
	}
	return 0;
}

static int
get_int(struct jspan num, int max, int *v)
{
	uint64_t u;

	if (num.p == NULL || jspan_type(num) != J_NUMBER ||
	    jnum_u64(num, &u) == -1 || u > (uint64_t)max)
		return -1;
	*v = (int)u;
	return 0;
}

int
progress_parse(struct jspan obj, struct progress *p, char *err,
    size_t errlen)
{
	static const char *const names[] = { "done", "of", "rows", "key",
	    "types", "bounds" };
	struct jspan m[6], b;
	struct jiter it;
	char *keys[KEY_COLUMNS_MAX];
	int n, nb, got;

	progress_init(p);
	if (jspan_type(obj) != J_OBJECT)
		return bad(err, errlen, "is not an object");
	jobj_pick(obj, names, 6, m);
	if (get_int(m[1], LOAD_RANGES_MAX, &p->of) == -1 || p->of < 1) {
		bad(err, errlen, "has no \"of\" from 1 to the most ranges");
		goto fail;
	}
	if (get_int(m[0], p->of, &p->done) == -1) {
		bad(err, errlen, "has no \"done\" from 0 to \"of\"");
		goto fail;
	}
	if (m[2].p == NULL || jspan_type(m[2]) != J_NUMBER ||
	    jnum_u64(m[2], &p->rows) == -1) {
		bad(err, errlen, "has no \"rows\" count");
		goto fail;
	}
	/* a keyless (append-only) table is read as one range */
	if (progress_get_strings(m[3], keys, KEY_COLUMNS_MAX, &n) == -1 ||
	    (n == 0 && p->of != 1)) {
		while (n > 0)
			free(keys[--n]);
		bad(err, errlen, "has no \"key\" of 1 to 32 names (none only "
		    "for a table read as one range)");
		goto fail;
	}
	p->nkeys = n;
	p->key = xcalloc(n ? n : 1, sizeof(char *));
	memcpy(p->key, keys, n * sizeof(char *));
	p->types = xcalloc(n ? n : 1, sizeof(char *));
	p->bounds = xcalloc(p->of > 1 ? (size_t)(p->of - 1) * n : 1,
	    sizeof(char *));
	if (progress_get_strings(m[4], p->types, n, &got) == -1 ||
	    got != n) {
		bad(err, errlen, "has no \"types\" for every key column");
		goto fail;
	}
	if (m[5].p == NULL || jspan_type(m[5]) != J_ARRAY ||
	    jiter_init(&it, m[5]) < 0) {
		bad(err, errlen, "has no \"bounds\" array");
		goto fail;
	}
	for (nb = 0; jiter_elem(&it, &b); nb++)
		if (nb >= p->of - 1 || progress_get_strings(b, p->bounds +
		    (size_t)nb * n, n, &got) == -1 || got != n) {
			nb = -1;
			break;
		}
	if (nb != p->of - 1) {
		bad(err, errlen, "\"bounds\" do not hold \"of\" - 1 "
		    "boundaries of one text per key column");
		goto fail;
	}
	return 0;
fail:
	progress_release(p);
	return -1;
}
