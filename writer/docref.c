/*
 * docref.c - which document an operation writes, and where in a batch the
 * writes of each document are: TOAST completion looks for an earlier
 * write to copy from, the window for an earlier write of the same version
 * that a new flush must not overtake. A document is (index, id) compared
 * as the raw JSON bytes of the action line, never unescaped. The routing
 * is carried but not compared: two routings may lead to one shard, where
 * the same id is the same document, so writes of one id under two
 * routings are ordered as writes of one document. Also the writer's one
 * hash, FNV-1a. Performs no I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "writer.h"

struct docref
docref_of(const struct batch *b, const struct op *op, int old)
{
	struct docref r;

	r.index = b->arena.buf + op->index.off;
	r.ilen = op->index.len;
	r.routing = b->arena.buf + op->routing.off;
	r.rlen = op->routing.len;
	/* a completion reads where the document was before it moved */
	if (old && op->toast_index) {
		r.index = op->toast_index;
		r.ilen = strlen(op->toast_index);
	}
	if (old && op->toast_routing) {
		r.routing = op->toast_routing;
		r.rlen = strlen(op->toast_routing);
	}
	if (old && op->toast_id) {
		r.id = op->toast_id;
		r.idlen = strlen(op->toast_id);
	} else {
		r.id = b->arena.buf + op->id.off;
		r.idlen = op->id.len;
	}
	return r;
}

uint32_t
hash_bytes(uint32_t h, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 16777619u;
	}
	h ^= 0xff;
	return h * 16777619u;
}

static uint32_t
doc_hash(const struct docref *r)
{
	return hash_bytes(hash_bytes(HASH_INIT, r->index, r->ilen), r->id,
	    r->idlen);
}

static int
same_doc(const struct docref *x, const struct docref *y)
{
	return x->idlen == y->idlen && memcmp(x->id, y->id, x->idlen) == 0 &&
	    x->ilen == y->ilen && memcmp(x->index, y->index, x->ilen) == 0;
}

void
doctab_init(struct doctab *t, int n)
{
	int i;

	t->nslot = 16;
	while (t->nslot < 2 * n)
		t->nslot *= 2;
	t->slot = xmalloc(t->nslot * sizeof(*t->slot));
	for (i = 0; i < t->nslot; i++)
		t->slot[i] = -1;
}

void
doctab_release(struct doctab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->nslot = 0;
}

int *
doctab_find(const struct doctab *t, const struct batch *b,
    const struct docref *r)
{
	uint32_t mask = t->nslot - 1, h = doc_hash(r) & mask;
	struct docref o;

	/* open addressing: the table is at most half full */
	while (t->slot[h] != -1) {
		o = docref_of(b, &b->ops[t->slot[h]], 0);
		if (same_doc(&o, r))
			break;
		h = (h + 1) & mask;
	}
	return &t->slot[h];
}

int
docref_same_routing(const struct docref *x, const struct docref *y)
{
	return x->rlen == y->rlen && memcmp(x->routing, y->routing,
	    x->rlen) == 0;
}

int
batch_last_write(struct batch *b, const struct docref *r)
{
	struct docref own;
	int i;

	/* built on the first question and kept: a cut batch does not
	 * change (batch.c drops it when it does) */
	if (b->writers.slot == NULL) {
		doctab_init(&b->writers, b->nops);
		for (i = 0; i < b->nops; i++) {
			if (b->ops[i].kind != OP_INDEX &&
			    b->ops[i].kind != OP_DELETE)
				continue;
			own = docref_of(b, &b->ops[i], 0);
			*doctab_find(&b->writers, b, &own) = i;
		}
	}
	return *doctab_find(&b->writers, b, r);
}
