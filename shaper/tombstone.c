/*
 * tombstone.c - the tombstone window: which documents the change stream
 * removed or wrote, and at what version, while a copy still to come could
 * be older, so that such a copy is dropped instead of written.
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
 * about two waves' removals and writes.
 *
 * A stream write is remembered too: a copy older than it would only lose
 * to it by version, but the writer completes a later update's unchanged
 * TOAST values from the last write of the document it holds in memory,
 * whatever its version, and a stale copy must not be that write.
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

/* the slot of a document, added when new */
static struct tomb_slot *
slot_for(struct tombstones *w, const char *index, size_t ilen,
    const char *id, size_t idlen)
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
		w->n++;
	}
	return s;
}

void
tomb_delete(struct tombstones *w, const char *index, size_t ilen,
    const char *id, size_t idlen, uint64_t v)
{
	struct tomb_slot *s = slot_for(w, index, ilen, id, idlen);

	if (v > s->v)
		s->v = v;
	if (v > s->gone)
		s->gone = v;
}

void
tomb_write(struct tombstones *w, const char *index, size_t ilen,
    const char *id, size_t idlen, uint64_t v)
{
	struct tomb_slot *s = slot_for(w, index, ilen, id, idlen);

	if (v > s->v)
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
	/* a load before any stream change: no hash of each copy's id */
	if (w->n == 0)
		return 0;
	s = find(w, index, ilen, id, idlen, hash(index, ilen, id, idlen));
	return s != NULL && s->key != NULL && s->v > v;
}

uint64_t
tomb_removed(const struct tombstones *w, const char *rel, size_t rlen,
    const char *index, size_t ilen, const char *id, size_t idlen)
{
	const struct tomb_slot *s;
	uint64_t v = 0;
	int i;

	for (i = 0; i < w->nclears; i++)
		if (strlen(w->clears[i].rel) == rlen &&
		    memcmp(w->clears[i].rel, rel, rlen) == 0 &&
		    w->clears[i].v > v)
			v = w->clears[i].v;
	s = find(w, index, ilen, id, idlen, hash(index, ilen, id, idlen));
	if (s != NULL && s->key != NULL && s->gone > v)
		v = s->gone;
	return v;
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

/*
 * The TOAST window: unchanged out-of-line values the stream could not
 * complete because the copy that holds them is still to come.
 *
 * An update whose unchanged TOAST column arrives as a marker is completed
 * by the writer from the document's last write, in memory or stored.
 * During the load that write may be a copy read before the update but
 * shaped after it (the loader's rows wait behind the stream): the update
 * is then written without the value, and the copy, older, loses to it by
 * version. Such a copy still holds the value the update left unchanged:
 * a change of it between the copy's version and the update's would have
 * been a stream write carrying it in full, written before the update and
 * read by its completion.
 *
 * So every update with markers starts or extends a chain: the row's
 * documents since it last had its values in full (its identity may move:
 * a key, an index or a routing the update changed), the fields that have
 * been markers all along, and the head, the document the last of those
 * updates wrote. A write of the head with every value, or its delete,
 * ends the chain. A copy of a document the chain passed through, of a
 * version at which the row had that identity and older than the head's
 * last write, is the value's source: the shaper follows it with a fill of
 * the head (framing.md §5), which the writer applies to the stored
 * document only where it still lacks the field. The identity's interval
 * starts after its last removal (a delete, a truncate) that the tombstone
 * window knows of: a copy from before the row's values went is no source.
 *
 * Forgotten at a mark like the removals: a copy still to come is newer
 * than the wave just marked, so a chain whose head was written at or
 * below its version can no longer be completed from one; that copy wins
 * by its version. Pure, like the rest of this file.
 */

#define TW_OPEN	UINT64_MAX	/* a segment the row still has */

void
tw_init(struct toastwin *w)
{
	memset(w, 0, sizeof(*w));
}

static void
chain_free(struct tw_chain *c)
{
	free(c->fields);
	free(c->index);
	free(c->id);
	free(c->routing);
	memset(c, 0, sizeof(*c));
	c->dead = 1;
}

void
tw_release(struct toastwin *w)
{
	size_t i;
	int k;

	for (i = 0; i < w->cap; i++)
		free(w->seg[i].key);
	free(w->seg);
	for (k = 0; k < w->nchain; k++)
		chain_free(&w->chain[k]);
	free(w->chain);
	memset(w, 0, sizeof(*w));
}

static int
seg_is(const struct tw_seg *s, const struct twdoc *d, uint64_t h)
{
	return s->hash == h && s->klen == d->ilen + 1 + d->idlen &&
	    memcmp(s->key, d->index, d->ilen) == 0 && s->key[d->ilen] == '\0' &&
	    memcmp(s->key + d->ilen + 1, d->id, d->idlen) == 0;
}

/* the chain whose head is d (its open segment), or -1 */
static int
head_of(const struct toastwin *w, const struct twdoc *d)
{
	const struct tw_seg *s;
	uint64_t h;
	size_t i;

	if (w->n == 0)
		return -1;
	h = hash(d->index, d->ilen, d->id, d->idlen);
	for (i = h & (w->cap - 1); w->seg[i].key; i = (i + 1) & (w->cap - 1)) {
		s = &w->seg[i];
		if (s->to == TW_OPEN && !w->chain[s->chain].dead &&
		    seg_is(s, d, h))
			return s->chain;
	}
	return -1;
}

/* the segments moved into a table of cap slots, those of dead chains left
 * out; a table keeps several segments of one document (they are told
 * apart by their versions), so it is probed to the first empty slot */
static void
seg_rehash(struct toastwin *w, size_t cap)
{
	struct tw_seg *old = w->seg;
	size_t oldcap = w->cap, i, j;

	w->cap = cap;
	w->n = 0;
	w->seg = cap ? xcalloc(cap, sizeof(*w->seg)) : NULL;
	for (i = 0; i < oldcap; i++) {
		if (old[i].key == NULL)
			continue;
		if (w->chain[old[i].chain].dead) {
			free(old[i].key);
			continue;
		}
		for (j = old[i].hash & (cap - 1); w->seg[j].key;
		    j = (j + 1) & (cap - 1))
			;
		w->seg[j] = old[i];
		w->n++;
	}
	free(old);
}

static void
seg_add(struct toastwin *w, const struct twdoc *d, uint64_t from, int chain)
{
	struct tw_seg *s;
	uint64_t h = hash(d->index, d->ilen, d->id, d->idlen);
	size_t i;

	if ((w->n + 1) * 2 > w->cap)
		seg_rehash(w, w->cap ? w->cap * 2 : TOMB_MIN);
	for (i = h & (w->cap - 1); w->seg[i].key; i = (i + 1) & (w->cap - 1))
		;
	s = &w->seg[i];
	s->klen = d->ilen + 1 + d->idlen;
	s->key = xmalloc(s->klen);
	memcpy(s->key, d->index, d->ilen);
	s->key[d->ilen] = '\0';
	memcpy(s->key + d->ilen + 1, d->id, d->idlen);
	s->hash = h;
	s->from = from;
	s->to = TW_OPEN;
	s->chain = chain;
	w->n++;
}

/* the open segment of chain k, which is at d, ends at v */
static void
seg_close(struct toastwin *w, const struct twdoc *d, int k, uint64_t v)
{
	uint64_t h = hash(d->index, d->ilen, d->id, d->idlen);
	size_t i;

	for (i = h & (w->cap - 1); w->seg[i].key; i = (i + 1) & (w->cap - 1))
		if (w->seg[i].chain == k && w->seg[i].to == TW_OPEN &&
		    seg_is(&w->seg[i], d, h))
			w->seg[i].to = v;
}

static void
set_head(struct tw_chain *c, const struct twdoc *d)
{
	free(c->index);
	free(c->id);
	free(c->routing);
	c->index = xstrndup(d->index, d->ilen);
	c->id = xstrndup(d->id, d->idlen);
	c->routing = d->routing ? xstrndup(d->routing, d->rlen) : NULL;
}

/* the names of list a (a raw JSON array of strings) that b holds too, as
 * a raw array; NULL when none */
static char *
intersect(const char *a, struct jspan b)
{
	struct jspan as = { a, strlen(a) }, x, y;
	struct jiter ia, ib;
	struct sbuf out = SBUF_INIT;
	int n = 0, both;

	sbuf_addc(&out, '[');
	jiter_init(&ia, as);
	while (jiter_elem(&ia, &x) == 1) {
		both = 0;
		jiter_init(&ib, b);
		while (!both && jiter_elem(&ib, &y) == 1)
			both = x.n == y.n && memcmp(x.p, y.p, x.n) == 0;
		if (!both)
			continue;
		if (n++)
			sbuf_addc(&out, ',');
		sbuf_add(&out, x.p, x.n);
	}
	sbuf_addc(&out, ']');
	if (n == 0) {
		sbuf_release(&out);
		return NULL;
	}
	return out.buf;
}

void
tw_update(struct toastwin *w, const struct twdoc *src, uint64_t before,
    const struct twdoc *dst, struct jspan fields, uint64_t v)
{
	struct tw_chain *c;
	char *keep;
	int k, moved, other;

	moved = !(src->ilen == dst->ilen && src->idlen == dst->idlen &&
	    memcmp(src->index, dst->index, dst->ilen) == 0 &&
	    memcmp(src->id, dst->id, dst->idlen) == 0);
	/* a document another row's chain ends in is overwritten: that
	 * chain's values are not this document's any more */
	if (moved && (other = head_of(w, dst)) >= 0)
		chain_free(&w->chain[other]);
	if ((k = head_of(w, src)) >= 0) {
		c = &w->chain[k];
		/* a field this update carried in full is known now */
		keep = intersect(c->fields, fields);
		if (keep == NULL) {
			chain_free(c);
			return;
		}
		free(c->fields);
		c->fields = keep;
		if (moved) {
			seg_close(w, src, k, v);
			seg_add(w, dst, v, k);
		}
		set_head(c, dst);
		c->last_v = v;
		return;
	}
	if (w->nchain == w->capchain) {
		w->capchain = w->capchain ? w->capchain * 2 : 16;
		w->chain = xrealloc(w->chain, (size_t)w->capchain *
		    sizeof(*w->chain));
	}
	k = w->nchain++;
	c = &w->chain[k];
	memset(c, 0, sizeof(*c));
	c->fields = xstrndup(fields.p, fields.n);
	set_head(c, dst);
	c->last_v = v;
	seg_add(w, src, before, k);
	if (moved) {
		seg_close(w, src, k, v);
		seg_add(w, dst, v, k);
	}
}

void
tw_gone(struct toastwin *w, const struct twdoc *d)
{
	int k;

	if ((k = head_of(w, d)) >= 0)
		chain_free(&w->chain[k]);
}

void
tw_end(struct toastwin *w, int k)
{
	if (k >= 0 && k < w->nchain && !w->chain[k].dead)
		chain_free(&w->chain[k]);
}

int
tw_match(const struct toastwin *w, const struct twdoc *d, uint64_t v,
    int *chains, int max)
{
	const struct tw_seg *s;
	const struct tw_chain *c;
	uint64_t h;
	size_t i;
	int n = 0;

	if (w->n == 0)
		return 0;
	h = hash(d->index, d->ilen, d->id, d->idlen);
	for (i = h & (w->cap - 1); w->seg[i].key && n < max;
	    i = (i + 1) & (w->cap - 1)) {
		s = &w->seg[i];
		c = &w->chain[s->chain];
		/* the row had this identity at v, and the head was written
		 * after: a copy newer than the head wins on its own */
		if (!c->dead && seg_is(s, d, h) && s->from <= v && v < s->to &&
		    v < c->last_v)
			chains[n++] = s->chain;
	}
	return n;
}

void
tw_forget_upto(struct toastwin *w, uint64_t v)
{
	size_t cap = 0, kept = 0, i;
	int k, live = 0, *renum;

	for (k = 0; k < w->nchain; k++) {
		if (!w->chain[k].dead && w->chain[k].last_v <= v)
			chain_free(&w->chain[k]);
		live += !w->chain[k].dead;
	}
	if (live == 0) {
		tw_release(w);
		return;
	}
	/* the live chains packed to the front, their segments renumbered */
	renum = xcalloc((size_t)w->nchain, sizeof(*renum));
	for (k = 0, live = 0; k < w->nchain; k++) {
		renum[k] = w->chain[k].dead ? -1 : live;
		if (!w->chain[k].dead)
			w->chain[live++] = w->chain[k];
	}
	for (i = 0; i < w->cap; i++) {
		if (w->seg[i].key == NULL)
			continue;
		if (renum[w->seg[i].chain] < 0) {
			free(w->seg[i].key);
			w->seg[i].key = NULL;
			continue;
		}
		w->seg[i].chain = renum[w->seg[i].chain];
		kept++;
	}
	free(renum);
	w->nchain = live;
	for (k = 0; k < live; k++)
		w->chain[k].dead = 0;
	/* at most half full, as seg_add keeps it; the freed slots above
	 * broke probe runs, so every segment goes in again */
	for (cap = TOMB_MIN; cap < kept * 2; cap *= 2)
		;
	seg_rehash(w, cap);
}
