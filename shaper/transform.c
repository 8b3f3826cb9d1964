/*
 * transform.c - the transform operations (docs/config.md "transform") on
 * one JSON value: hash, redact, json, split, number, date, pseudonym and
 * lookup. A closed set with at most one literal parameter each (a
 * pseudonym's key and scope, a lookup's map, count as one), applied to a
 * value as it arrived; no chaining and nothing evaluated.
 *
 * Every operation gives a replayed row the same result, and all but
 * redact and lookup leave a value already in the target shape as it is. A
 * value an operation cannot convert is written as it arrived - except by
 * pseudonym, which fails closed and writes a fixed marker, never the
 * clear value - and the caller counts it. NULL stays NULL. Pure: no I/O.
 */
#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "datepat.h"
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
	t->p = jstr_text(v, &t->n, &t->heap);
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

/* an empty string is no element, as string_to_array has it; sep is a
 * string of any length */
static int
op_split(struct jspan v, const char *sep, struct sbuf *out)
{
	struct text t;
	size_t seplen = strlen(sep), start = 0, i;
	const char *hit;
	int ok;

	if ((ok = as_is(v, J_ARRAY, out)) != -1)
		return ok;
	text_of(v, &t);
	sbuf_addc(out, '[');
	for (i = 0; t.n > 0; i++) {
		hit = seplen ? memmem(t.p + start, t.n - start, sep, seplen) :
		    NULL;
		if (i > 0)
			sbuf_addc(out, ',');
		sbuf_add_jstr(out, t.p + start, hit ? (size_t)(hit - t.p) -
		    start : t.n - start);
		if (hit == NULL)
			break;
		start = (size_t)(hit - t.p) + seplen;
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

static int
op_date(struct jspan v, const char *pattern, struct sbuf *out)
{
	struct text t;
	int ok = 1;

	if (jspan_type(v) != J_STRING) {
		sbuf_add(out, v.p, v.n);
		return 0;
	}
	text_of(v, &t);
	switch (datepat_convert(pattern, t.p, t.n, out)) {
	case DATEPAT_CONVERTED:
		break;
	case DATEPAT_ISO:
		sbuf_add(out, v.p, v.n);
		break;
	default:
		sbuf_add(out, v.p, v.n);
		ok = 0;
		break;
	}
	free(t.heap);
	return ok;
}

/* a scalar's text form: a string's text, a number or boolean as written;
 * 0 for an array or an object, which has none */
static int
scalar_text(struct jspan v, struct text *t)
{
	switch (jspan_type(v)) {
	case J_STRING:
		text_of(v, t);
		return 1;
	case J_NUMBER:
	case J_TRUE:
	case J_FALSE:
		t->p = v.p;
		t->n = v.n;
		t->heap = NULL;
		return 1;
	default:
		return 0;
	}
}

/*
 * The value's token. Fails closed: a value with no text form (an array,
 * an object), or one the cipher could not seal, becomes the fixed marker.
 * A string that is a token of this key and scope already stays.
 */
static int
op_pseudonym(const struct sync_pseudonym *p, struct jspan v,
    struct sbuf *out)
{
	struct text t;
	int ok = 0;

	if (scalar_text(v, &t)) {
		if (jspan_type(v) == J_STRING &&
		    pseudonym_is_token(p, t.p, t.n)) {
			sbuf_add(out, v.p, v.n);
			ok = 1;
		} else
			ok = pseudonym_seal(p, t.p, t.n, out);
		if (t.heap != NULL)
			OPENSSL_cleanse(t.heap, t.n);
		free(t.heap);
	}
	if (!ok)
		sbuf_add_jstr(out, XF_PSEUDONYM_MARKER,
		    strlen(XF_PSEUDONYM_MARKER));
	return ok;
}

/* text (n bytes) against a map key: memcmp's order, shorter first */
static int
key_cmp(const char *text, size_t n, const char *key)
{
	size_t kn = strlen(key);
	int c = memcmp(text, key, n < kn ? n : kn);

	return c != 0 ? c : n < kn ? -1 : n > kn;
}

/* the label of the value's text form; an array or an object never
 * matches */
static enum xf_result
op_lookup(const struct sync_lookup *l, struct jspan v, struct sbuf *out)
{
	struct text t;
	int lo = 0, hi = l->nmap - 1, mid, c;
	const char *hit = NULL;

	if (scalar_text(v, &t)) {
		while (lo <= hi && hit == NULL) {
			mid = lo + (hi - lo) / 2;
			if ((c = key_cmp(t.p, t.n, l->map[mid].name)) == 0)
				hit = l->map[mid].json;
			else if (c < 0)
				hi = mid - 1;
			else
				lo = mid + 1;
		}
		free(t.heap);
	}
	if (hit != NULL) {
		sbuf_adds(out, hit);
		return XF_CONVERTED;
	}
	if (l->def_json != NULL)
		sbuf_adds(out, l->def_json);
	else
		sbuf_add(out, v.p, v.n);
	return XF_MISSED;
}

enum xf_result
xf_apply(const struct sync_transform *t, struct jspan v, struct sbuf *out)
{
	if (jspan_type(v) == J_NULL) {
		sbuf_add(out, v.p, v.n);
		return XF_CONVERTED;
	}
	switch (t->kind) {
	case XF_HASH:
		return op_hash(v, out) ? XF_CONVERTED : XF_UNCONVERTED;
	case XF_REDACT:
		sbuf_add_jstr(out, t->param, strlen(t->param));
		return XF_CONVERTED;
	case XF_JSON:
		return op_json(v, out) ? XF_CONVERTED : XF_UNCONVERTED;
	case XF_SPLIT:
		return op_split(v, t->param, out) ? XF_CONVERTED :
		    XF_UNCONVERTED;
	case XF_NUMBER:
		return op_number(v, out) ? XF_CONVERTED : XF_UNCONVERTED;
	case XF_DATE:
		return op_date(v, t->param, out) ? XF_CONVERTED :
		    XF_UNCONVERTED;
	case XF_PSEUDONYM:
		return op_pseudonym(&t->pseudonym, v, out) ? XF_CONVERTED :
		    XF_UNCONVERTED;
	case XF_LOOKUP:
		return op_lookup(&t->lookup, v, out);
	}
	/* no kind: a transform the configuration did not finish */
	sbuf_add(out, v.p, v.n);
	return XF_UNCONVERTED;
}
