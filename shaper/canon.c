/*
 * canon.c - the canonical JSON text of a row (framing.md §7), what an
 * append-only row is filed under the hash of. The same row must hash the
 * same from the stream and from the load, whatever whitespace, member
 * order or string escapes either used, so the text is rebuilt:
 *
 *   - no whitespace outside strings;
 *   - an object's members sorted by name, comparing the names' unescaped
 *     UTF-8 bytes (a name that is a prefix of another sorts first);
 *   - strings re-escaped the one way sbuf_add_jstr does: \" \\ \b \f \n
 *     \r \t, \u00XX (lowercase hex) for other control characters, every
 *     other character as its UTF-8 bytes;
 *   - numbers, true, false and null as the frame carries them.
 *
 * Pure: no I/O. Input must have passed jscan_validate.
 */
#include <stdlib.h>
#include <string.h>

#include "shaper.h"

struct member {
	char	*name;		/* unescaped */
	size_t	 len;
	struct jspan val;
};

static int
by_name(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int r = memcmp(x->name, y->name, n);

	if (r != 0)
		return r;
	return x->len < y->len ? -1 : x->len > y->len;
}

static void
add_string(struct sbuf *out, struct jspan s)
{
	char *buf = xmalloc(s.n);
	size_t n = jstr_unescape(s, buf);

	sbuf_add_jstr(out, buf, n);
	free(buf);
}

void
canon_json(struct jspan v, struct sbuf *out)
{
	struct jiter it;
	struct jspan name, val;
	struct member *m = NULL;
	size_t n = 0, cap = 0, i;
	int first = 1;

	switch (jspan_type(v)) {
	case J_STRING:
		add_string(out, v);
		return;
	case J_ARRAY:
		sbuf_addc(out, '[');
		jiter_init(&it, v);
		while (jiter_elem(&it, &val)) {
			if (!first)
				sbuf_addc(out, ',');
			first = 0;
			canon_json(val, out);
		}
		sbuf_addc(out, ']');
		return;
	case J_OBJECT:
		break;
	default:
		sbuf_add(out, v.p, v.n);
		return;
	}
	jiter_init(&it, v);
	while (jiter_member(&it, &name, &val)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			m = xrealloc(m, cap * sizeof(*m));
		}
		m[n].name = xmalloc(name.n);
		m[n].len = jstr_unescape(name, m[n].name);
		m[n++].val = val;
	}
	if (n > 1)
		qsort(m, n, sizeof(*m), by_name);
	sbuf_addc(out, '{');
	for (i = 0; i < n; i++) {
		if (i > 0)
			sbuf_addc(out, ',');
		sbuf_add_jstr(out, m[i].name, m[i].len);
		sbuf_addc(out, ':');
		canon_json(m[i].val, out);
		free(m[i].name);
	}
	sbuf_addc(out, '}');
	free(m);
}
