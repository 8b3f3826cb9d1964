/*
 * entry.c - the one form of an entry line for the modules whose writes
 * are procedures over their own lines rather than _bulk bodies
 * (meilisearch_write.c, qdrant_write.c; postgres.c ends its own lines,
 * which carry a version, with tentry_end): written by their encode, read
 * back when the procedure plans its requests, each reduced to what it
 * leaves behind. Pure; never trusts a line it reads to be one it wrote.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
	tentry_end(out, w, e, start, ",\"delete\":true}\n");
}

void
tentry_end(struct sbuf *out, const struct target_write *w,
    struct target_entry *e, size_t start, const char *delmark)
{
	e->routing.off = e->routing.len = 0;
	e->pipeline.off = e->pipeline.len = 0;
	e->doc.off = e->doc.len = 0;
	if (w->del) {
		sbuf_adds(out, delmark);
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
	if (end > UINT32_MAX)
		return -1;
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

static int
same_doc(const char *body, const struct tentry *a, const struct tentry *b)
{
	return a->ilen == b->ilen && a->idlen == b->idlen &&
	    memcmp(body + a->ioff, body + b->ioff, a->ilen) == 0 &&
	    memcmp(body + a->idoff, body + b->idoff, a->idlen) == 0;
}

static uint32_t
doc_hash(const char *body, const struct tentry *e)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < e->ilen; i++)
		h = (h ^ (unsigned char)body[e->ioff + i]) * 16777619u;
	h = (h ^ 0xff) * 16777619u;
	for (i = 0; i < e->idlen; i++)
		h = (h ^ (unsigned char)body[e->idoff + i]) * 16777619u;
	return h;
}

/* each entry's last entry of its document: the one its write ends as */
static void
reduce(const char *body, struct tentry *ents, int n)
{
	size_t cap = 16, k;
	int *slot, i, pass;

	while (cap < (size_t)n * 2)
		cap *= 2;
	slot = xmalloc(cap * sizeof(*slot));
	memset(slot, 0xff, cap * sizeof(*slot));
	/* the first pass files each document under its latest entry, the
	 * second reads that back for every entry */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			k = doc_hash(body, &ents[i]) & (cap - 1);
			while (slot[k] != -1 &&
			    !same_doc(body, &ents[slot[k]], &ents[i]))
				k = (k + 1) & (cap - 1);
			if (pass == 0)
				slot[k] = i;
			else
				ents[i].last = slot[k];
		}
	free(slot);
}

size_t
tentry_units_at(size_t head, int n)
{
	size_t at = head + (size_t)n * sizeof(struct tentry);
	size_t a = _Alignof(max_align_t);

	return (at + a - 1) / a * a;
}

int
tentry_plan(struct sbuf *plan, size_t head, size_t unitsize,
    const char *body, size_t len)
{
	struct tentry *ents;
	size_t at, next, need;
	int n = 0, i;

	for (at = 0; at < len; at = next, n++) {
		const char *nl = memchr(body + at, '\n', len - at);

		next = nl ? (size_t)(nl - body) + 1 : len;
	}
	if (n == 0)
		return -1;
	need = tentry_units_at(head, n) + (size_t)n * unitsize;
	sbuf_reset(plan);
	sbuf_grow(plan, need);
	memset(plan->buf, 0, need);
	plan->len = need;
	ents = (struct tentry *)(void *)(plan->buf + head);
	for (at = 0, i = 0; i < n; i++, at = next)
		if (tentry_read(body, len, at, &ents[i], &next) == -1) {
			sbuf_reset(plan);
			return -1;
		}
	reduce(body, ents, n);
	return n;
}

void
tentry_verdict(struct item_result *it, int del, enum item_verdict v,
    long status, const char *type, const char *reason)
{
	it->verdict = v;
	it->del = del;
	it->status = (int)status;
	snprintf(it->type, sizeof(it->type), "%.*s",
	    (int)sizeof(it->type) - 1, type);
	snprintf(it->reason, sizeof(it->reason), "%.*s",
	    (int)sizeof(it->reason) - 1, reason);
}

void
tentry_replaced(const struct tentry *ents, int n, struct item_result *items)
{
	int i;

	for (i = 0; i < n; i++)
		if (ents[i].last != i) {
			items[i] = items[ents[i].last];
			items[i].del = ents[i].del;
		}
}
