/*
 * bulk.c - the _bulk request body. Owns the action line of every index and
 * delete operation (the target's protocol; what the frame said is decoded
 * by lib/msg.h) and the rule that a document's bytes are copied as they
 * arrived in the frame, never parsed into a tree or re-encoded. Performs no
 * I/O.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "writer.h"

/* OpenSearch stores external versions as a signed 64-bit long */
#define VERSION_MAX	((uint64_t)INT64_MAX)

static void
add_raw(struct sbuf *out, struct jspan s, struct aspan *where)
{
	where->off = out->len;
	where->len = s.n;
	sbuf_add(out, s.p, s.n);
}

int
bulk_add_entry(struct sbuf *out, const struct msg_op *m, struct op *op,
    char *err, size_t errlen)
{
	int is_delete = m->kind == MSG_DELETE;
	size_t start = out->len;

	if (m->v > VERSION_MAX) {
		snprintf(err, errlen, "%s version %llu does not fit the "
		    "target's signed 64-bit versions", msg_kind_name(m->kind),
		    (unsigned long long)m->v);
		return -1;
	}
	op->kind = is_delete ? OP_DELETE : OP_INDEX;
	op->v = m->v;
	op->entry.off = start;
	op->action.off = start;
	sbuf_adds(out, is_delete ? "{\"delete\":{\"_index\":" :
	    "{\"index\":{\"_index\":");
	add_raw(out, m->index, &op->index);
	sbuf_adds(out, ",\"_id\":");
	add_raw(out, m->id, &op->id);
	sbuf_adds(out, ",\"version\":");
	sbuf_add_u64(out, m->v);
	sbuf_adds(out, ",\"version_type\":\"external_gte\"");
	op->routing.off = op->routing.len = 0;
	if (m->routing.p) {
		sbuf_adds(out, ",\"routing\":");
		add_raw(out, m->routing, &op->routing);
	}
	/* an ingest pipeline runs on index actions only */
	if (m->pipeline.p && !is_delete) {
		sbuf_adds(out, ",\"pipeline\":");
		sbuf_add(out, m->pipeline.p, m->pipeline.n);
	}
	sbuf_adds(out, "}}");
	op->action.len = out->len - start;
	sbuf_addc(out, '\n');
	op->doc.off = op->doc.len = 0;
	if (!is_delete) {
		add_raw(out, m->doc, &op->doc);
		sbuf_addc(out, '\n');
	}
	op->entry.len = out->len - start;
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
bulk_body(const struct batch *b, int n, struct sbuf *body, int *sent)
{
	const struct op *op;
	int i, nsent = 0;

	sbuf_reset(body);
	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		if ((op->kind != OP_INDEX && op->kind != OP_DELETE) ||
		    op->written)
			continue;
		if (op->completed) {
			sbuf_add(body, b->arena.buf + op->action.off,
			    op->action.len);
			sbuf_addc(body, '\n');
			sbuf_add(body, op->completed, op->completed_len);
			sbuf_addc(body, '\n');
		} else
			sbuf_add(body, b->arena.buf + op->entry.off,
			    op->entry.len);
		sent[nsent++] = i;
	}
	return nsent;
}
