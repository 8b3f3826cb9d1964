/*
 * tombstone.c - the tombstone window: which documents the change stream
 * removed, and at what version, while a copy still to come could be older,
 * so that such a copy is dropped instead of written.
 *
 * Versions alone do not make the overlap of load and stream safe: a
 * versioned delete leaves a tombstone the target keeps only for
 * index.gc_deletes (60 s by default), and once it is gone any version
 * is accepted again — a copy starved behind a busy stream would put the
 * document back. A truncate clears a table's documents the same way,
 * so a clear is remembered by table. The load's own
 * protocol bounds what must be remembered: a wave's rows, then its mark,
 * and the next wave's position is read only after that mark is written.
 * At a mark, a removal at or below the version of the wave before it is
 * older than any copy still to come and is forgotten; a newer one is kept
 * for the next wave, which may be read while the mark is stored. Memory is
 * about two waves' removals.
 *
 * Pure: no I/O, no logging.
 */
#include <stdlib.h>
#include <string.h>

#include "shaper.h"

#define TOMB_MIN	64	/* slots of an empty table's first growth */

/* FNV-1a over index, a NUL, and id */
static uint64_t
hash(const char *index, size_t ilen, const char *id, size_t idlen)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < ilen; i++)
		h = (h ^ (unsigned char)index[i]) * 1099511628211ULL;
	h = (h ^ 0) * 1099511628211ULL;
	for (i = 0; i < idlen; i++)
		h = (h ^ (unsigned char)id[i]) * 1099511628211ULL;
	return h;
}

void
tomb_init(struct tombstones *w)
{
	memset(w, 0, sizeof(*w));
}

void
tomb_forget(struct tombstones *w)
{
	size_t i;

	for (i = 0; i < w->cap; i++)
		free(w->slot[i].key);
	free(w->slot);
	w->slot = NULL;
	w->cap = w->n = 0;
	for (i = 0; i < (size_t)w->nclears; i++)
		free(w->clears[i].rel);
	free(w->clears);
	w->clears = NULL;
	w->nclears = 0;
}

void
tomb_release(struct tombstones *w)
{
	tomb_forget(w);
}

static struct tomb_slot *
find(const struct tombstones *w, const char *index, size_t ilen, const char *id,
    size_t idlen, uint64_t h)
{
	struct tomb_slot *s;
	size_t i, klen = ilen + 1 + idlen;

	if (w->cap == 0)
		return NULL;
	for (i = h & (w->cap - 1);; i = (i + 1) & (w->cap - 1)) {
		s = &w->slot[i];
		if (s->key == NULL)
			return s;
		if (s->hash == h && s->klen == klen &&
		    memcmp(s->key, index, ilen) == 0 && s->key[ilen] == '\0' &&
		    memcmp(s->key + ilen + 1, id, idlen) == 0)
			return s;
	}
}

/* the entries moved into a table of cap slots (a power of two, or 0),
 * leaving out (and freeing) those at or below upto when forget is set */
static void
rehash(struct tombstones *w, size_t cap, int forget, uint64_t upto)
{
	struct tomb_slot *old = w->slot;
	size_t oldcap = w->cap, i, j;

	w->cap = cap;
	w->n = 0;
	w->slot = cap ? xcalloc(cap, sizeof(*w->slot)) : NULL;
	for (i = 0; i < oldcap; i++) {
		if (old[i].key == NULL)
			continue;
		if (forget && old[i].v <= upto) {
			free(old[i].key);
			continue;
		}
		for (j = old[i].hash & (cap - 1); w->slot[j].key;
		    j = (j + 1) & (cap - 1))
			;
		w->slot[j] = old[i];
		w->n++;
	}
	free(old);
}

static void
grow(struct tombstones *w)
{
	rehash(w, w->cap ? w->cap * 2 : TOMB_MIN, 0, 0);
}

void
tomb_delete(struct tombstones *w, const char *index, size_t ilen,
    const char *id, size_t idlen, uint64_t v)
{
	uint64_t h = hash(index, ilen, id, idlen);
	struct tomb_slot *s;

	/* at most half full: probes stay short */
	if ((w->n + 1) * 2 > w->cap)
		grow(w);
	s = find(w, index, ilen, id, idlen, h);
	if (s->key == NULL) {
		s->key = xmalloc(ilen + 1 + idlen);
		memcpy(s->key, index, ilen);
		s->key[ilen] = '\0';
		memcpy(s->key + ilen + 1, id, idlen);
		s->klen = ilen + 1 + idlen;
		s->hash = h;
		s->v = v;
		w->n++;
	} else if (v > s->v)
		s->v = v;
}

void
tomb_clear(struct tombstones *w, const char *rel, size_t rlen, uint64_t v)
{
	int i;

	for (i = 0; i < w->nclears; i++)
		if (strlen(w->clears[i].rel) == rlen &&
		    memcmp(w->clears[i].rel, rel, rlen) == 0) {
			if (v > w->clears[i].v)
				w->clears[i].v = v;
			return;
		}
	w->clears = xrealloc(w->clears, (size_t)(w->nclears + 1) *
	    sizeof(*w->clears));
	w->clears[w->nclears].rel = xstrndup(rel, rlen);
	w->clears[w->nclears++].v = v;
}

int
tomb_drops(const struct tombstones *w, const char *rel, size_t rlen,
    const char *index, size_t ilen, const char *id, size_t idlen, uint64_t v)
{
	const struct tomb_slot *s;
	int i;

	/* a truncate removed the table's documents wherever they are: in
	 * every index its template rendered, or its half of a join */
	for (i = 0; i < w->nclears; i++)
		if (strlen(w->clears[i].rel) == rlen &&
		    memcmp(w->clears[i].rel, rel, rlen) == 0 &&
		    w->clears[i].v > v)
			return 1;
	s = find(w, index, ilen, id, idlen, hash(index, ilen, id, idlen));
	return s != NULL && s->key != NULL && s->v > v;
}

void
tomb_forget_upto(struct tombstones *w, uint64_t v)
{
	size_t i, kept = 0, cap = 0;
	int k, left = 0;

	for (i = 0; i < w->cap; i++)
		kept += w->slot[i].key != NULL && w->slot[i].v > v;
	/* at most half full, as tomb_delete keeps it */
	if (kept > 0)
		for (cap = TOMB_MIN; cap < kept * 2; cap *= 2)
			;
	rehash(w, cap, 1, v);
	for (k = 0; k < w->nclears; k++) {
		if (w->clears[k].v <= v)
			free(w->clears[k].rel);
		else
			w->clears[left++] = w->clears[k];
	}
	w->nclears = left;
	if (left == 0) {
		free(w->clears);
		w->clears = NULL;
	}
}
