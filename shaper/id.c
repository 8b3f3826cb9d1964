/*
 * id.c - document ids (framing.md §7). The only code that turns key values
 * into an id, so a streamed row, a copied row and a delete can never
 * disagree about one. It reads the raw key values, before any projection,
 * and never invents an id: a NULL or missing key value is an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shaper.h"

/* column names are at most 64 bytes in PostgreSQL and MySQL; a longer one
 * still works, through the heap */
#define NAME_BUF	256

/* the text of one scalar key value; composite keys escape the separator */
static void
add_value(struct sbuf *id, struct jspan v, int escape)
{
	const char *s = v.p;
	size_t n = v.n, i;
	char *heap = NULL;

	if (jspan_type(v) == J_STRING) {
		s = v.p + 1;
		n = v.n - 2;
		/* most keys have no escapes: their bytes are the text */
		if (memchr(s, '\\', n) != NULL) {
			heap = jstr_dup(v);
			s = heap;
			n = strlen(heap);
		}
	}
	if (!escape) {
		sbuf_add(id, s, n);
	} else {
		for (i = 0; i < n; i++) {
			if (s[i] == '%')
				sbuf_add(id, "%25", 3);
			else if (s[i] == '|')
				sbuf_add(id, "%7C", 3);
			else
				sbuf_addc(id, s[i]);
		}
	}
	free(heap);
}

/* a string value whose text would stop at a NUL byte cannot be an id */
static int
has_nul_escape(struct jspan v)
{
	return jspan_type(v) == J_STRING && memmem(v.p, v.n, "\\u0000", 6);
}

int
id_render(struct jspan keys, struct jspan row, struct sbuf *id, char *err,
    size_t errlen)
{
	struct jiter it;
	struct jspan name, val;
	char buf[NAME_BUF], *heapname;
	const char *cname;
	int nkeys = 0, found;

	if (jspan_type(keys) != J_ARRAY || jiter_init(&it, keys) == -1) {
		snprintf(err, errlen, "\"key\" is not an array");
		return -1;
	}
	if (jspan_type(row) != J_OBJECT) {
		snprintf(err, errlen, "row image is not an object");
		return -1;
	}
	/* one key column is rendered as is; several are escaped, so count */
	while (jiter_elem(&it, &name))
		nkeys++;
	if (nkeys == 0) {
		snprintf(err, errlen, "\"key\" names no column");
		return -1;
	}

	jiter_init(&it, keys);
	for (int i = 0; jiter_elem(&it, &name); i++) {
		if (jspan_type(name) != J_STRING) {
			snprintf(err, errlen, "\"key\" holds a non-string");
			return -1;
		}
		heapname = NULL;
		cname = buf;
		if (jstr_copy(name, buf, sizeof(buf)) == -1)
			cname = heapname = jstr_dup(name);
		found = jobj_get(row, cname, &val);
		if (!found || jspan_type(val) == J_NULL || has_nul_escape(val)) {
			snprintf(err, errlen, "key column '%s' is %s", cname,
			    !found ? "missing" :
			    jspan_type(val) == J_NULL ? "null" :
			    "a string holding a NUL character");
			free(heapname);
			return -1;
		}
		free(heapname);
		if (i > 0)
			sbuf_addc(id, '|');
		/* an array or object key (a PostgreSQL int[] key, say) is
		 * rendered as its JSON text, which the capture writes compact */
		add_value(id, val, nkeys > 1);
	}
	return 0;
}
