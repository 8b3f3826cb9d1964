/*
 * transform.c - the six transform operations (docs/config.md "transform")
 * on one JSON value: hash, redact, json, split, number, date. A closed set
 * with at most one literal parameter each, applied to a value as it
 * arrived; no chaining and nothing evaluated.
 *
 * Every operation is idempotent: a value already in the target shape is
 * left as it is, so a replayed row, or a document completed from its
 * stored copy, never changes again. A value an operation cannot convert is
 * written as it arrived, and the caller counts it: the target's mapping
 * decides what a field may hold. NULL stays NULL. Pure: no I/O.
 */
#include <ctype.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "shaper.h"

/* a string value's bytes, unescaped (heap when it had escapes) */
struct text {
	const char *p;
	size_t	 n;
	char	*heap;
};

static void
text_of(struct jspan v, struct text *t)
{
	t->heap = NULL;
	t->p = v.p + 1;
	t->n = v.n - 2;
	if (memchr(t->p, '\\', t->n) != NULL) {
		t->heap = xmalloc(v.n);
		t->n = jstr_unescape(v, t->heap);
		t->p = t->heap;
	}
}

static int
is_hex64(const char *p, size_t n)
{
	size_t i;

	if (n != 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' &&
		    p[i] <= 'f')))
			return 0;
	return 1;
}

/* sha256 of a string's text or another value's JSON text, in hex */
static int
op_hash(struct jspan v, struct sbuf *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;
	struct text t = { v.p, v.n, NULL };

	if (jspan_type(v) == J_STRING) {
		text_of(v, &t);
		/* a hash already: hashing it again would drift from what a
		 * fresh write of the row produces */
		if (is_hex64(t.p, t.n)) {
			sbuf_add(out, v.p, v.n);
			free(t.heap);
			return 1;
		}
	}
	EVP_Digest(t.p, t.n, md, &mdlen, EVP_sha256(), NULL);
	free(t.heap);
	sbuf_addc(out, '"');
	for (i = 0; i < mdlen; i++) {
		sbuf_addc(out, hex[md[i] >> 4]);
		sbuf_addc(out, hex[md[i] & 15]);
	}
	sbuf_addc(out, '"');
	return 1;
}

/* JSON text without the whitespace between tokens: a frame holds no LF */
static void
add_compact(struct sbuf *out, const char *p, size_t n)
{
	size_t i;
	int in_str = 0;

	for (i = 0; i < n; i++) {
		if (in_str) {
			sbuf_addc(out, p[i]);
			if (p[i] == '\\' && i + 1 < n)
				sbuf_addc(out, p[++i]);
			else if (p[i] == '"')
				in_str = 0;
			continue;
		}
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
		    p[i] == '\r')
			continue;
		if (p[i] == '"')
			in_str = 1;
		sbuf_addc(out, p[i]);
	}
}

static int
op_json(struct jspan v, struct sbuf *out)
{
	struct text t;
	struct jspan inner;
	const char *why;
	size_t off;
	int ok = 0;

	if (jspan_type(v) != J_STRING) {
		sbuf_add(out, v.p, v.n);
		return 1;
	}
	text_of(v, &t);
	if (jscan_validate(t.p, t.n, &off, &why) == 0) {
		inner.p = t.p;
		inner.n = t.n;
		while (inner.n && isspace((unsigned char)inner.p[0]))
			inner.p++, inner.n--;
		ok = jspan_type(inner) == J_OBJECT ||
		    jspan_type(inner) == J_ARRAY;
	}
	if (ok)
		add_compact(out, t.p, t.n);
	else
		sbuf_add(out, v.p, v.n);
	free(t.heap);
	return ok;
}

/* a value already in the target shape (1), or one that is not a string
 * and so cannot be converted (0), is copied as it is; -1: convert it */
static int
as_is(struct jspan v, enum jtype done, struct sbuf *out)
{
	enum jtype t = jspan_type(v);

	if (t == J_STRING)
		return -1;
	sbuf_add(out, v.p, v.n);
	return t == done;
}

static int
op_split(struct jspan v, char sep, struct sbuf *out)
{
	struct text t;
	size_t i, start = 0;
	int ok;

	if ((ok = as_is(v, J_ARRAY, out)) != -1)
		return ok;
	text_of(v, &t);
	sbuf_addc(out, '[');
	/* an empty string is no element, as string_to_array has it */
	for (i = 0; t.n > 0 && i <= t.n; i++) {
		if (i < t.n && t.p[i] != sep)
			continue;
		if (start > 0)
			sbuf_addc(out, ',');
		sbuf_add_jstr(out, t.p + start, i - start);
		start = i + 1;
	}
	sbuf_addc(out, ']');
	free(t.heap);
	return 1;
}

/* the JSON number grammar, exactly: what the target can parse as one */
static int
is_json_number(const char *p, size_t n)
{
	struct jspan s = { p, n };
	const char *why;
	size_t off;

	if (n == 0 || isspace((unsigned char)p[0]) ||
	    isspace((unsigned char)p[n - 1]))
		return 0;
	return jscan_validate(p, n, &off, &why) == 0 &&
	    jspan_type(s) == J_NUMBER;
}

static int
op_number(struct jspan v, struct sbuf *out)
{
	struct text t;
	int ok;

	if ((ok = as_is(v, J_NUMBER, out)) != -1)
		return ok;
	text_of(v, &t);
	if ((ok = is_json_number(t.p, t.n)))
		sbuf_add(out, t.p, t.n);
	else
		sbuf_add(out, v.p, v.n);
	free(t.heap);
	return ok;
}

/* ---- date ---- */

struct when {
	int	 y, mo, d, h, mi, s;
	int	 has_time, has_sec;
};

/* n to m digits at p[*i]: the value, or -1 */
static int
digits(const char *p, size_t len, size_t *i, int min, int max)
{
	int v = 0, k = 0;

	while (*i < len && k < max && isdigit((unsigned char)p[*i])) {
		v = v * 10 + (p[*i] - '0');
		(*i)++;
		k++;
	}
	return k >= min ? v : -1;
}

static int
leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
valid(const struct when *w)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	int dim;

	if (w->y < 1 || w->mo < 1 || w->mo > 12 || w->d < 1)
		return 0;
	dim = mdays[w->mo - 1] + (w->mo == 2 && leap(w->y));
	return w->d <= dim && w->h >= 0 && w->h <= 23 && w->mi >= 0 &&
	    w->mi <= 59 && w->s >= 0 && w->s <= 59;
}

/* YYYY-MM-DD, then optionally sep hh:mm[:ss[.fraction]][Z|+hh[[:]mm]]:
 * 1 with *date_end (the index after the date) when s is exactly that */
static int
iso_like(const char *s, size_t n, char sep, struct when *w)
{
	size_t i = 0;

	memset(w, 0, sizeof(*w));
	if ((w->y = digits(s, n, &i, 4, 4)) < 0 || i >= n || s[i++] != '-' ||
	    (w->mo = digits(s, n, &i, 2, 2)) < 0 || i >= n ||
	    s[i++] != '-' || (w->d = digits(s, n, &i, 2, 2)) < 0)
		return 0;
	if (i == n)
		return valid(w);
	if (s[i++] != sep || (w->h = digits(s, n, &i, 2, 2)) < 0 ||
	    i >= n || s[i++] != ':' || (w->mi = digits(s, n, &i, 2, 2)) < 0)
		return 0;
	w->has_time = 1;
	if (i < n && s[i] == ':') {
		i++;
		if ((w->s = digits(s, n, &i, 2, 2)) < 0)
			return 0;
		w->has_sec = 1;
		if (i < n && s[i] == '.') {
			i++;
			if (digits(s, n, &i, 1, 9) < 0)
				return 0;
		}
	}
	if (i < n && s[i] == 'Z')
		i++;
	else if (i < n && (s[i] == '+' || s[i] == '-')) {
		i++;
		if (digits(s, n, &i, 2, 2) < 0)
			return 0;
		if (i < n && s[i] == ':')
			i++;
		if (i < n && digits(s, n, &i, 2, 2) < 0)
			return 0;
	}
	return i == n && valid(w);
}

/* s by a pattern of YYYY MM DD hh mm ss and literal bytes */
static int
by_pattern(const char *pat, const char *s, size_t n, struct when *w)
{
	size_t i = 0;
	int v;

	memset(w, 0, sizeof(*w));
	while (*pat) {
		if (strncmp(pat, "YYYY", 4) == 0) {
			if ((w->y = digits(s, n, &i, 4, 4)) < 0)
				return 0;
			pat += 4;
			continue;
		}
		if (strncmp(pat, "MM", 2) == 0 || strncmp(pat, "DD", 2) == 0 ||
		    strncmp(pat, "hh", 2) == 0 || strncmp(pat, "mm", 2) == 0 ||
		    strncmp(pat, "ss", 2) == 0) {
			if ((v = digits(s, n, &i, 1, 2)) < 0)
				return 0;
			switch (*pat) {
			case 'M': w->mo = v; break;
			case 'D': w->d = v; break;
			case 'h': w->h = v, w->has_time = 1; break;
			case 'm': w->mi = v; break;
			default: w->s = v, w->has_sec = 1; break;
			}
			pat += 2;
			continue;
		}
		if (i >= n || s[i] != *pat)
			return 0;
		i++;
		pat++;
	}
	return i == n && valid(w);
}

static void
add_iso(struct sbuf *out, const struct when *w)
{
	sbuf_addf(out, "\"%04d-%02d-%02d", w->y, w->mo, w->d);
	if (w->has_time)
		sbuf_addf(out, "T%02d:%02d", w->h, w->mi);
	if (w->has_sec)
		sbuf_addf(out, ":%02d", w->s);
	sbuf_addc(out, '"');
}

static int
op_date(struct jspan v, const char *pattern, struct sbuf *out)
{
	struct text t;
	struct when w;
	char *iso;
	int ok = 1;

	if (jspan_type(v) != J_STRING) {
		sbuf_add(out, v.p, v.n);
		return 0;
	}
	text_of(v, &t);
	if (iso_like(t.p, t.n, 'T', &w))
		sbuf_add(out, v.p, v.n);
	else if (pattern != NULL && by_pattern(pattern, t.p, t.n, &w))
		add_iso(out, &w);
	else if (pattern == NULL && iso_like(t.p, t.n, ' ', &w)) {
		/* the SQL spelling: only the separator differs */
		iso = xstrndup(t.p, t.n);
		iso[10] = 'T';
		sbuf_add_jstr(out, iso, t.n);
		free(iso);
	} else {
		sbuf_add(out, v.p, v.n);
		ok = 0;
	}
	free(t.heap);
	return ok;
}

int
xf_apply(const struct sync_transform *t, struct jspan v, struct sbuf *out)
{
	if (jspan_type(v) == J_NULL) {
		sbuf_add(out, v.p, v.n);
		return 1;
	}
	switch (t->kind) {
	case XF_HASH:
		return op_hash(v, out);
	case XF_REDACT:
		sbuf_add_jstr(out, t->param, strlen(t->param));
		return 1;
	case XF_JSON:
		return op_json(v, out);
	case XF_SPLIT:
		return op_split(v, t->param[0], out);
	case XF_NUMBER:
		return op_number(v, out);
	case XF_DATE:
		return op_date(v, t->param, out);
	}
	sbuf_add(out, v.p, v.n);
	return 0;
}
