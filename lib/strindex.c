/*
 * strindex.c - names to positions (strindex.h). At most three quarters
 * full, so a probe always ends on a free slot; FNV-1a, as config_schema.c's
 * table of paths seen.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "strindex.h"

static uint32_t
hash(int tag, const char *s, size_t n)
{
	uint32_t h = 2166136261u ^ (uint32_t)tag;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

void
strindex_init(struct strindex *x, strindex_name_fn *name_of)
{
	memset(x, 0, sizeof(*x));
	x->name_of = name_of;
}

static int
same(const struct strindex *x, const void *arg,
    const struct strindex_slot *sl, uint32_t h, int tag, const char *name,
    size_t len)
{
	const char *s;
	int t;

	if (sl->hash != h)
		return 0;
	s = x->name_of(arg, sl->pos, &t);
	return t == tag && strncmp(s, name, len) == 0 && s[len] == '\0';
}

/* the slot of (tag, name), or the free one it would go in */
static struct strindex_slot *
probe(const struct strindex *x, const void *arg, uint32_t h, int tag,
    const char *name, size_t len)
{
	struct strindex_slot *sl;
	size_t i;

	for (i = h & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		sl = &x->slot[i];
		if (sl->pos < 0 || same(x, arg, sl, h, tag, name, len))
			return sl;
	}
}

int
strindex_get(const struct strindex *x, const void *arg, int tag,
    const char *name, size_t len)
{
	if (x->n == 0)
		return -1;
	return probe(x, arg, hash(tag, name, len), tag, name, len)->pos;
}

static void
empty(struct strindex_slot *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		s[i].pos = -1;
}

static void
grow(struct strindex *x)
{
	struct strindex_slot *old = x->slot;
	size_t i, j, ocap = x->cap;

	x->cap = x->cap ? x->cap * 2 : 16;
	x->slot = xcalloc(x->cap, sizeof(*x->slot));
	empty(x->slot, x->cap);
	/* the names are known apart already: only a free slot is sought */
	for (i = 0; i < ocap; i++) {
		if (old[i].pos < 0)
			continue;
		for (j = old[i].hash & (x->cap - 1); x->slot[j].pos >= 0;
		    j = (j + 1) & (x->cap - 1))
			;
		x->slot[j] = old[i];
	}
	free(old);
}

int
strindex_put(struct strindex *x, const void *arg, int pos)
{
	struct strindex_slot *sl;
	const char *name;
	uint32_t h;
	size_t len;
	int tag;

	if ((x->n + 1) * 4 > x->cap * 3)
		grow(x);
	name = x->name_of(arg, pos, &tag);
	len = strlen(name);
	h = hash(tag, name, len);
	sl = probe(x, arg, h, tag, name, len);
	if (sl->pos >= 0)
		return sl->pos;
	sl->hash = h;
	sl->pos = pos;
	x->n++;
	return pos;
}

void
strindex_clear(struct strindex *x)
{
	empty(x->slot, x->cap);
	x->n = 0;
}

void
strindex_release(struct strindex *x)
{
	free(x->slot);
	x->slot = NULL;
	x->cap = x->n = 0;
}
