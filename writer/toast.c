/*
 * toast.c - completing documents whose unchanged TOAST columns were not
 * sent: the listed fields are copied from the document the target stores,
 * or from an earlier write of the same document that the target may not
 * hold yet - in the same flush, or in an earlier flush still open - since
 * the stored copy is stale then. Values are spliced in as the bytes they
 * are stored as, so a completion never changes a number's precision.
 * Performs no I/O: the _mget request and response are built and read here,
 * sent by the writer's loop.
 */
#include <stdlib.h>
#include <string.h>

#include "writer.h"

int
toast_needed(const struct batch *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!toast_settled(&b->ops[i]))
			return 1;
	return 0;
}

int
toast_settled(const struct op *op)
{
	return op->kind != OP_INDEX || !op->toast || op->completed;
}

struct jspan
toast_source(const struct batch *b, const struct op *op)
{
	struct jspan s = { NULL, 0 };

	if (op->kind != OP_INDEX)
		return s;
	if (op->completed) {
		s.p = op->completed;
		s.n = op->completed_len;
		return s;
	}
	return batch_span(b, op->doc);
}

/* a document is (index, id, routing), compared as raw JSON bytes; the id
 * is passed apart so an update whose key changed can look for the document
 * under its old id (toast_id). Pointers, not spans: a reference from one
 * batch is looked up in another. */
struct docref {
	const char *index, *id, *routing;
	size_t	 ilen, idlen, rlen;
};

static struct docref
ref_of(const struct batch *b, const struct op *op, int old)
{
	struct docref r;

	r.index = b->arena.buf + op->index.off;
	r.ilen = op->index.len;
	r.routing = b->arena.buf + op->routing.off;
	r.rlen = op->routing.len;
	if (old && op->toast_id) {
		r.id = op->toast_id;
		r.idlen = strlen(op->toast_id);
	} else {
		r.id = b->arena.buf + op->id.off;
		r.idlen = op->id.len;
	}
	return r;
}

static uint32_t
fnv(uint32_t h, const char *p, size_t n)
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
key_hash(const struct docref *r)
{
	uint32_t h = 2166136261u;

	h = fnv(h, r->index, r->ilen);
	h = fnv(h, r->id, r->idlen);
	return fnv(h, r->routing, r->rlen);
}

static int
same_doc(const struct docref *x, const struct docref *y)
{
	return x->idlen == y->idlen && memcmp(x->id, y->id, x->idlen) == 0 &&
	    x->ilen == y->ilen && memcmp(x->index, y->index, x->ilen) == 0 &&
	    x->rlen == y->rlen && memcmp(x->routing, y->routing, x->rlen) == 0;
}

/* an open-addressing table of the ops of b: slot[] holds op indexes */
static int *
table_new(int n, int *nslot)
{
	int *slot, i;

	*nslot = 16;
	while (*nslot < 2 * n)
		*nslot *= 2;
	slot = xmalloc(*nslot * sizeof(*slot));
	for (i = 0; i < *nslot; i++)
		slot[i] = -1;
	return slot;
}

/* the slot of the last write of document r, or of its empty end */
static uint32_t
probe(const struct batch *b, const int *slot, uint32_t mask,
    const struct docref *r)
{
	uint32_t h = key_hash(r) & mask;
	struct docref o;

	while (slot[h] != -1) {
		o = ref_of(b, &b->ops[slot[h]], 0);
		if (same_doc(&o, r))
			break;
		h = (h + 1) & mask;
	}
	return h;
}

static int
is_data(const struct op *op)
{
	return op->kind == OP_INDEX || op->kind == OP_DELETE;
}

/* the last op of b writing document r, or -1. The table is built on the
 * first question and kept: a flush's ops do not change once cut. */
static int
last_write(struct batch *b, const struct docref *r)
{
	struct docref own;
	int i;

	if (b->writers == NULL) {
		b->writers = table_new(b->nops, &b->nwriters);
		for (i = 0; i < b->nops; i++) {
			if (!is_data(&b->ops[i]))
				continue;
			own = ref_of(b, &b->ops[i], 0);
			b->writers[probe(b, b->writers, b->nwriters - 1,
			    &own)] = i;
		}
	}
	return b->writers[probe(b, b->writers, b->nwriters - 1, r)];
}

int
toast_plan(const struct batch *b, int n, struct batch *const *earlier,
    int nearlier, struct toast_from *from)
{
	const struct op *op;
	struct docref own, want;
	int *slot, nslot, i, j, k, nread = 0, blocked = 0;

	/* over b itself: slot holds the last write so far, so an op sees
	 * only the writes before it */
	slot = table_new(n, &nslot);
	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		from[i].b = NULL;
		from[i].i = -1;
		if (!is_data(op))
			continue;
		if (!toast_settled(op)) {
			want = ref_of(b, op, 1);
			j = slot[probe(b, slot, nslot - 1, &want)];
			if (j >= 0) {
				from[i].b = b;
				from[i].i = j;
			} else {
				for (k = nearlier - 1; k >= 0; k--)
					if ((j = last_write(earlier[k],
					    &want)) >= 0)
						break;
				if (k < 0)
					nread++;
				else {
					from[i].b = earlier[k];
					from[i].i = j;
					if (!toast_settled(&earlier[k]->ops[j]))
						blocked = 1;
				}
			}
		}
		own = ref_of(b, op, 0);
		slot[probe(b, slot, nslot - 1, &own)] = i;
	}
	free(slot);
	return blocked ? -1 : nread;
}

int
toast_mget_body(const struct batch *b, int n, const struct toast_from *from,
    struct sbuf *body, int *asked)
{
	const struct op *op;
	int i, nasked = 0;

	sbuf_reset(body);
	sbuf_adds(body, "{\"docs\":[");
	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		if (toast_settled(op) || from[i].b != NULL)
			continue;
		if (nasked)
			sbuf_addc(body, ',');
		sbuf_adds(body, "{\"_index\":");
		sbuf_add(body, b->arena.buf + op->index.off, op->index.len);
		sbuf_adds(body, ",\"_id\":");
		if (op->toast_id)
			sbuf_adds(body, op->toast_id);
		else
			sbuf_add(body, b->arena.buf + op->id.off, op->id.len);
		if (op->routing.len) {
			sbuf_adds(body, ",\"routing\":");
			sbuf_add(body, b->arena.buf + op->routing.off,
			    op->routing.len);
		}
		sbuf_addc(body, '}');
		asked[nasked++] = i;
	}
	sbuf_adds(body, "]}");
	return nasked;
}

int
toast_mget_parse(const char *body, size_t len, int nasked,
    struct jspan *found)
{
	struct jspan root, docs, d, v, err, type;
	struct jiter it;
	size_t off;
	const char *why;
	int i = 0;

	if (jscan_validate(body, len, &off, &why) == -1)
		return -1;
	root.p = body;
	root.n = len;
	/* jscan spans exclude surrounding whitespace */
	while (root.n && (*root.p == ' ' || *root.p == '\n' ||
	    *root.p == '\r' || *root.p == '\t')) {
		root.p++;
		root.n--;
	}
	while (root.n && (root.p[root.n - 1] == ' ' ||
	    root.p[root.n - 1] == '\n' || root.p[root.n - 1] == '\r' ||
	    root.p[root.n - 1] == '\t'))
		root.n--;
	if (jspan_type(root) != J_OBJECT || !jobj_get(root, "docs", &docs) ||
	    jiter_init(&it, docs) == -1 || jspan_type(docs) != J_ARRAY)
		return -1;
	while (jiter_elem(&it, &d) == 1) {
		if (i == nasked || jspan_type(d) != J_OBJECT)
			return -1;
		found[i].p = NULL;
		found[i].n = 0;
		if (jobj_get(d, "error", &err)) {
			/* a missing index holds no document; anything else
			 * (a shard failure) says nothing about the document */
			if (jspan_type(err) != J_OBJECT ||
			    !jobj_get(err, "type", &type) ||
			    !jstr_eq(type, "index_not_found_exception"))
				return -1;
		} else if (!jobj_get(d, "found", &v))
			return -1;
		else if (jspan_type(v) == J_TRUE) {
			if (!jobj_get(d, "_source", &v) ||
			    jspan_type(v) != J_OBJECT)
				return -1;
			found[i] = v;
		}
		i++;
	}
	return i == nasked ? 0 : -1;
}

int
toast_complete(struct sbuf *out, struct jspan doc, struct jspan fields,
    struct jspan source)
{
	struct jspan name, prev, val, key;
	struct jiter it, pit, dit;
	char *plain;
	int copied = 0, dup, present, nonempty;

	if (jspan_type(doc) != J_OBJECT || jspan_type(fields) != J_ARRAY ||
	    (source.p && jspan_type(source) != J_OBJECT))
		return -1;
	if (!source.p) {
		sbuf_add(out, doc.p, doc.n);
		return 0;
	}
	jiter_init(&dit, doc);
	nonempty = jiter_member(&dit, &key, &val) == 1;
	/* the document without its closing brace, then the fields */
	sbuf_add(out, doc.p, doc.n - 1);
	jiter_init(&it, fields);
	while (jiter_elem(&it, &name) == 1) {
		if (jspan_type(name) != J_STRING)
			return -1;
		plain = jstr_dup(name);
		dup = 0;
		jiter_init(&pit, fields);
		while (jiter_elem(&pit, &prev) == 1 && prev.p != name.p)
			if (jstr_eq(prev, plain))
				dup = 1;
		present = jobj_get(doc, plain, &val);
		if (!dup && !present && jobj_get(source, plain, &val)) {
			if (nonempty || copied)
				sbuf_addc(out, ',');
			sbuf_add(out, name.p, name.n);
			sbuf_addc(out, ':');
			sbuf_add(out, val.p, val.n);
			copied++;
		}
		free(plain);
	}
	sbuf_addc(out, '}');
	return copied;
}
