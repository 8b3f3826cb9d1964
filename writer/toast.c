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

int
toast_plan(const struct batch *b, int n, struct batch *const *earlier,
    int nearlier, struct toast_from *from)
{
	const struct op *op;
	struct docref own, want;
	struct doctab seen;
	int i, j, k, nread = 0, blocked = 0;

	/* over b itself: seen holds the last write so far, so an op sees
	 * only the writes before it */
	doctab_init(&seen, n);
	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		from[i].b = NULL;
		from[i].i = -1;
		if (op->kind != OP_INDEX && op->kind != OP_DELETE)
			continue;
		if (!toast_settled(op)) {
			want = docref_of(b, op, 1);
			j = *doctab_find(&seen, b, &want);
			/* a move to another routing deletes first (two
			 * routings may be one shard): the stored document is
			 * still there when this flush reads it */
			if (j >= 0 && b->ops[j].kind == OP_DELETE &&
			    op->toast_routing != NULL)
				nread++;
			else if (j >= 0) {
				from[i].b = b;
				from[i].i = j;
			} else {
				for (k = nearlier - 1; k >= 0; k--)
					if ((j = batch_last_write(earlier[k],
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
		own = docref_of(b, op, 0);
		*doctab_find(&seen, b, &own) = i;
	}
	doctab_release(&seen);
	return blocked ? -1 : nread;
}

int
toast_mget_body(const struct batch *b, int n, const struct toast_from *from,
    struct sbuf *body, int *asked)
{
	const struct op *op;
	struct docref r;
	int i, nasked = 0;

	sbuf_reset(body);
	sbuf_adds(body, "{\"docs\":[");
	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		if (toast_settled(op) || from[i].b != NULL)
			continue;
		if (nasked)
			sbuf_addc(body, ',');
		/* where the document was before this update */
		r = docref_of(b, op, 1);
		sbuf_adds(body, "{\"_index\":");
		sbuf_add(body, r.index, r.ilen);
		sbuf_adds(body, ",\"_id\":");
		sbuf_add(body, r.id, r.idlen);
		if (r.rlen) {
			sbuf_adds(body, ",\"routing\":");
			sbuf_add(body, r.routing, r.rlen);
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
