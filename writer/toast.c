/*
 * toast.c - completing documents whose unchanged TOAST columns were not
 * sent: the listed fields are copied from the document the target stores,
 * or from an earlier operation of the same batch on the same document (the
 * stored copy is stale then). Values are spliced in as the bytes they are
 * stored as, so a completion never changes a number's precision. Performs
 * no I/O: the _mget request and response are built and read here, sent by
 * sink.c.
 */
#include <stdlib.h>
#include <string.h>

#include "writer.h"

int
toast_needed(const struct batch *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (b->ops[i].kind == OP_INDEX && b->ops[i].toast)
			return 1;
	return 0;
}

/* a document is (index, id, routing), compared as raw JSON bytes; the id
 * is passed apart so an update whose key changed can look for the document
 * under its old id (toast_id) */
struct docref {
	struct aspan index, routing;
	const char *id;
	size_t	 idlen;
};

static struct docref
ref_of(const struct batch *b, const struct op *op, int old)
{
	struct docref r;

	r.index = op->index;
	r.routing = op->routing;
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
key_hash(const struct batch *b, const struct docref *r)
{
	uint32_t h = 2166136261u;

	h = fnv(h, b->arena.buf + r->index.off, r->index.len);
	h = fnv(h, r->id, r->idlen);
	return fnv(h, b->arena.buf + r->routing.off, r->routing.len);
}

static int
span_eq(const struct batch *b, struct aspan x, struct aspan y)
{
	return x.len == y.len &&
	    memcmp(b->arena.buf + x.off, b->arena.buf + y.off, x.len) == 0;
}

static int
same_doc(const struct batch *b, const struct docref *x, const struct docref *y)
{
	return x->idlen == y->idlen && memcmp(x->id, y->id, x->idlen) == 0 &&
	    span_eq(b, x->index, y->index) && span_eq(b, x->routing, y->routing);
}

/* the slot of the last pending write of document r, or of its empty end */
static uint32_t
probe(const struct batch *b, const int *slot, uint32_t mask,
    const struct docref *r)
{
	uint32_t h = key_hash(b, r) & mask;
	struct docref o;

	while (slot[h] != -1) {
		o = ref_of(b, &b->ops[slot[h]], 0);
		if (same_doc(b, &o, r))
			break;
		h = (h + 1) & mask;
	}
	return h;
}

int
toast_plan(const struct batch *b, int n, int *src)
{
	const struct op *op;
	struct docref own, from;
	int *slot, nslot, i, nread = 0;

	/* open addressing over the batch: slot holds the last writer */
	nslot = 16;
	while (nslot < 2 * n)
		nslot *= 2;
	slot = xmalloc(nslot * sizeof(*slot));
	for (i = 0; i < nslot; i++)
		slot[i] = -1;
	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		src[i] = -2;
		if (op->kind != OP_INDEX && op->kind != OP_DELETE)
			continue;
		if (op->kind == OP_INDEX && op->toast) {
			from = ref_of(b, op, 1);
			src[i] = slot[probe(b, slot, nslot - 1, &from)];
			if (src[i] == -1)
				nread++;
		}
		own = ref_of(b, op, 0);
		slot[probe(b, slot, nslot - 1, &own)] = i;
	}
	free(slot);
	return nread;
}

int
toast_mget_body(const struct batch *b, int n, const int *src,
    struct sbuf *body, int *asked)
{
	const struct op *op;
	int i, nasked = 0;

	sbuf_reset(body);
	sbuf_adds(body, "{\"docs\":[");
	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		if (op->kind != OP_INDEX || !op->toast || src[i] != -1)
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
