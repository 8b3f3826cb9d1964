/*
 * bulk.c - the write entries of the batch and the bodies made of them. An
 * index or delete operation, as the frame said it (lib/msg.h), goes to the
 * target module (lib/target.h), which encodes its entry into the arena:
 * the head it needs, then the document as the bytes it arrived in, never
 * parsed into a tree or re-encoded. A body is its entries one after
 * another; the first attempt of a flush is the arena itself. Performs no
 * I/O and knows nothing of the target's protocol.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "writer.h"

int
bulk_add_entry(struct sbuf *out, const struct target_module *tm,
    const struct msg_op *m, int require_alias, struct op *op,
    struct p2o_err *err)
{
	struct target_write w;
	struct target_entry e = { 0 };
	int is_delete = m->kind == MSG_DELETE;

	w.del = is_delete;
	w.index = m->index;
	w.id = m->id;
	w.routing = m->routing;
	w.pipeline = m->pipeline;
	w.doc = m->doc;
	w.version = m->v;
	w.require_alias = require_alias && !is_delete;
	if (tm->ops->encode(out, &w, &e, err) == -1)
		return -1;
	op->kind = is_delete ? OP_DELETE : OP_INDEX;
	op->v = m->v;
	op->entry = e.entry;
	op->head = e.head;
	op->doc = e.doc;
	op->index = e.index;
	op->id = e.id;
	op->routing = e.routing;
	op->pipeline = e.pipeline;
	op->refusal = NULL;
	op->toast = op->toast_id = op->rel = NULL;
	op->toast_index = op->toast_routing = NULL;
	if (!is_delete && m->toast.p) {
		op->toast = xstrndup(m->toast.p, m->toast.n);
		if (m->toast_id.p)
			op->toast_id = xstrndup(m->toast_id.p, m->toast_id.n);
		if (m->toast_index.p)
			op->toast_index = xstrndup(m->toast_index.p,
			    m->toast_index.n);
		if (m->toast_routing.p)
			op->toast_routing = xstrndup(m->toast_routing.p,
			    m->toast_routing.n);
		if (m->rel.p)
			op->rel = jstr_dup(m->rel);
	}
	return 0;
}

int
bulk_prefix(const struct batch *b, int n, const char **body, size_t *len,
    int *sent)
{
	const struct op *op;
	size_t start = 0, end = 0;
	int i, nsent = 0;

	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		if (op->kind != OP_INDEX && op->kind != OP_DELETE)
			continue;
		if (op->written || op->completed)
			return -1;
		if (nsent == 0)
			start = op->entry.off;
		else if (op->entry.off != end)
			return -1;
		end = op->entry.off + op->entry.len;
		sent[nsent++] = i;
	}
	/* a flush of positions and marks alone may have no arena */
	*body = nsent ? b->arena.buf + start : NULL;
	*len = end - start;
	return nsent;
}

int
bulk_body(const struct batch *b, int n, struct sbuf *body, int *sent)
{
	const struct op *op;
	size_t tail;
	int i, nsent = 0;

	sbuf_reset(body);
	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		if ((op->kind != OP_INDEX && op->kind != OP_DELETE) ||
		    op->written)
			continue;
		if (op->completed) {
			/* the head, the completed document, and what the
			 * entry has after its document */
			tail = op->entry.off + op->entry.len -
			    (op->doc.off + op->doc.len);
			sbuf_add(body, b->arena.buf + op->head.off,
			    op->head.len);
			sbuf_add(body, op->completed, op->completed_len);
			sbuf_add(body, b->arena.buf + op->doc.off +
			    op->doc.len, tail);
		} else
			sbuf_add(body, b->arena.buf + op->entry.off,
			    op->entry.len);
		sent[nsent++] = i;
	}
	return nsent;
}
