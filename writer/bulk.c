/*
 * bulk.c - the _bulk request body. Owns the action line of every index and
 * delete operation and the rule that a document's bytes are copied as they
 * arrived in the frame, never parsed into a tree or re-encoded. Performs no
 * I/O.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "writer.h"

/* OpenSearch stores external versions as a signed 64-bit long */
#define VERSION_MAX	((uint64_t)INT64_MAX)

/* a picked string member: present (when required), a string, not empty */
static int
member_string(struct jspan val, const char *name, int required, char *err,
    size_t errlen)
{
	if (val.p == NULL) {
		if (required)
			snprintf(err, errlen, "operation has no \"%s\"", name);
		return required ? -1 : 0;
	}
	if (jspan_type(val) != J_STRING) {
		snprintf(err, errlen, "operation member \"%s\" is not a string",
		    name);
		return -1;
	}
	if (val.n <= 2 && required) {
		snprintf(err, errlen, "operation member \"%s\" is empty", name);
		return -1;
	}
	return 0;
}

static void
add_raw(struct sbuf *out, struct jspan s, struct aspan *where)
{
	where->off = out->len;
	where->len = s.n;
	sbuf_add(out, s.p, s.n);
}

int
bulk_add_entry(struct sbuf *out, struct jspan obj, int is_delete,
    struct op *op, char *err, size_t errlen)
{
	/* one pass over the frame: the document is most of its bytes and is
	 * the last member, so each lookup on its own would skip it again */
	static const char *const names[] = { "index", "id", "routing",
	    "pipeline", "toast_id", "v", "doc", "toast", "rel" };
	struct jspan m[9], index, id, routing, pipeline, v, doc, toast,
	    toast_id, el;
	struct jiter it;
	uint64_t version;
	size_t start = out->len;

	jobj_pick(obj, names, 9, m);
	index = m[0], id = m[1], routing = m[2], pipeline = m[3];
	toast_id = m[4], v = m[5];
	if (member_string(index, "index", 1, err, errlen) == -1 ||
	    member_string(id, "id", 1, err, errlen) == -1 ||
	    member_string(routing, "routing", 0, err, errlen) == -1 ||
	    member_string(pipeline, "pipeline", 0, err, errlen) == -1 ||
	    member_string(toast_id, "toast_id", 0, err, errlen) == -1 ||
	    member_string(m[8], "rel", 0, err, errlen) == -1)
		return -1;
	if (v.p == NULL || jspan_type(v) != J_NUMBER ||
	    jnum_u64(v, &version) == -1 || version > VERSION_MAX) {
		snprintf(err, errlen, "operation has no \"v\" that fits a "
		    "signed 64-bit version");
		return -1;
	}
	doc.p = NULL;
	doc.n = 0;
	toast.p = NULL;
	if (!is_delete) {
		doc = m[6];
		if (doc.p == NULL || jspan_type(doc) != J_OBJECT) {
			snprintf(err, errlen, "index operation has no \"doc\" "
			    "object");
			return -1;
		}
		toast = m[7];
		if (toast.p) {
			if (jspan_type(toast) != J_ARRAY)
				goto badtoast;
			jiter_init(&it, toast);
			while (jiter_elem(&it, &el) == 1)
				if (jspan_type(el) != J_STRING)
					goto badtoast;
		}
	}

	op->kind = is_delete ? OP_DELETE : OP_INDEX;
	op->entry.off = start;
	op->action.off = start;
	sbuf_adds(out, is_delete ? "{\"delete\":{\"_index\":" :
	    "{\"index\":{\"_index\":");
	add_raw(out, index, &op->index);
	sbuf_adds(out, ",\"_id\":");
	add_raw(out, id, &op->id);
	sbuf_adds(out, ",\"version\":");
	sbuf_add_u64(out, version);
	sbuf_adds(out, ",\"version_type\":\"external_gte\"");
	op->routing.off = op->routing.len = 0;
	if (routing.p) {
		sbuf_adds(out, ",\"routing\":");
		add_raw(out, routing, &op->routing);
	}
	/* an ingest pipeline runs on index actions only */
	if (pipeline.p && !is_delete) {
		sbuf_adds(out, ",\"pipeline\":");
		sbuf_add(out, pipeline.p, pipeline.n);
	}
	sbuf_adds(out, "}}");
	op->action.len = out->len - start;
	sbuf_addc(out, '\n');
	op->doc.off = op->doc.len = 0;
	if (!is_delete) {
		add_raw(out, doc, &op->doc);
		sbuf_addc(out, '\n');
	}
	op->entry.len = out->len - start;
	op->toast = toast.p ? xstrndup(toast.p, toast.n) : NULL;
	op->toast_id = toast.p && toast_id.p ?
	    xstrndup(toast_id.p, toast_id.n) : NULL;
	op->rel = toast.p && m[8].p ? jstr_dup(m[8]) : NULL;
	return 0;

badtoast:
	snprintf(err, errlen, "operation member \"toast\" is not an array of "
	    "strings");
	return -1;
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
