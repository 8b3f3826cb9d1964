/*
 * entry.c - the one form of an entry line for the modules whose writes
 * are procedures over their own lines rather than _bulk bodies
 * (meilisearch_write.c, qdrant_write.c): written by their encode, read
 * back when the procedure plans its requests. Pure; never trusts a line
 * it reads to be one it wrote.
 */
#include <string.h>

#include "entry.h"

void
tentry_put(struct sbuf *out, const struct target_write *w,
    struct target_entry *e)
{
	size_t start = out->len;

	e->entry.off = e->head.off = start;
	sbuf_adds(out, "{\"index\":");
	target_span_add(out, w->index, &e->index);
	sbuf_adds(out, ",\"id\":");
	target_span_add(out, w->id, &e->id);
	e->routing.off = e->routing.len = 0;
	e->pipeline.off = e->pipeline.len = 0;
	e->doc.off = e->doc.len = 0;
	if (w->del) {
		sbuf_adds(out, ",\"delete\":true}\n");
		e->head.len = out->len - start;
	} else {
		sbuf_adds(out, ",\"doc\":");
		e->head.len = out->len - start;
		target_span_add(out, w->doc, &e->doc);
		sbuf_adds(out, "}\n");
	}
	e->entry.len = out->len - start;
}

/* the index after the JSON string opening at s[i], 0 if there is none */
static size_t
string_end(const char *s, size_t n, size_t i)
{
	if (i >= n || s[i] != '"')
		return 0;
	for (i++; i < n; i++)
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	return 0;
}

static int
has_at(const char *s, size_t n, size_t i, const char *lit)
{
	size_t l = strlen(lit);

	return n - i >= l && memcmp(s + i, lit, l) == 0;
}

int
tentry_read(const char *body, size_t len, size_t at, struct tentry *e,
    size_t *next)
{
	const char *nl = memchr(body + at, '\n', len - at);
	size_t end = nl ? (size_t)(nl - body) : len, i = at, j;

	*next = nl ? end + 1 : len;
	if (!has_at(body, end, i, "{\"index\":"))
		return -1;
	i += 9;
	if ((j = string_end(body, end, i)) == 0)
		return -1;
	e->ioff = i, e->ilen = j - i;
	if (!has_at(body, end, j, ",\"id\":"))
		return -1;
	i = j + 6;
	if ((j = string_end(body, end, i)) == 0)
		return -1;
	e->idoff = i, e->idlen = j - i;
	e->doff = e->dlen = 0;
	if ((e->del = has_at(body, end, j, ",\"delete\":true}")))
		return end - j == 15 ? 0 : -1;
	if (!has_at(body, end, j, ",\"doc\":") || body[end - 1] != '}')
		return -1;
	e->doff = j + 7;
	if (end - 1 <= e->doff + 1 || body[e->doff] != '{')
		return -1;
	e->dlen = end - 1 - e->doff;
	return 0;
}
