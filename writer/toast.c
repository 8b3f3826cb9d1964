/*
 * toast.c - completing documents whose unchanged TOAST columns were not
 * sent: the listed fields are copied from the document the target stores,
 * or from an earlier write of the same document that the target may not
 * hold yet - in the same flush, or in an earlier flush still open - since
 * the stored copy is stale then. Values are spliced in as the bytes they
 * are stored as, so a completion never changes a number's precision.
 * Performs no I/O: it says which documents to read; the target module
 * builds the request and reads its answer, the writer's loop sends it.
 *
 * A fill (framing.md §5) runs the other way round: its source is the
 * document's last write, found the same way, and the fields come from the
 * late copy the fill carries (sink.c).
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
	/* a fill of a head that was gone: still gone */
	if (op->fill && op->completed && op->completed_len == 0)
		return s;
	if (op->completed) {
		s.p = op->completed;
		s.n = op->completed_len;
		return s;
	}
	return batch_span(b, op->doc);
}

/*
 * A move (a key, an index or a routing the update changed) whose old
 * document must be read may find it gone: replayed after a restart, the
 * move already ran, deleted the old document and stored the new one,
 * complete, at this very version, and writing it again without the
 * values would take them away. So the op's own stored document is read
 * too, and is the source when the old one is missing. It can only be
 * that same write or a newer one (which this write loses to): no other
 * row held the new key at this version. Not when an op before it in
 * memory writes or deletes its document: the stored one is older then.
 */
static int
own_fallback(const struct batch *b, const struct op *op,
    const struct doctab *seen, struct batch *const *earlier, int nearlier)
{
	struct docref own;
	int k;

	if (op->fill || (op->toast_id == NULL && op->toast_index == NULL &&
	    op->toast_routing == NULL))
		return 0;
	own = docref_of(b, op, 0);
	if (*doctab_find(seen, b, &own) >= 0)
		return 0;
	for (k = 0; k < nearlier; k++)
		if (batch_last_write(earlier[k], &own) >= 0)
			return 0;
	return 1;
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
		from[i].own = 0;
		if (op->kind != OP_INDEX && op->kind != OP_DELETE)
			continue;
		if (!toast_settled(op)) {
			want = docref_of(b, op, 1);
			j = *doctab_find(&seen, b, &want);
			/* a move to another routing deletes first (two
			 * routings may be one shard): the stored document is
			 * still there when this flush reads it */
			if (j >= 0 && b->ops[j].kind == OP_DELETE &&
			    op->toast_routing != NULL) {
				nread++;
				from[i].own = own_fallback(b, op, &seen,
				    earlier, nearlier);
			} else if (j >= 0) {
				from[i].b = b;
				from[i].i = j;
			} else {
				for (k = nearlier - 1; k >= 0; k--)
					if ((j = batch_last_write(earlier[k],
					    &want)) >= 0)
						break;
				if (k < 0) {
					nread++;
					from[i].own = own_fallback(b, op,
					    &seen, earlier, nearlier);
				} else {
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
toast_refs(const struct batch *b, int n, const struct toast_from *from,
    struct docref *refs, int *asked)
{
	const struct op *op;
	int i, nasked = 0;

	for (i = 0; i < n; i++) {
		op = &b->ops[i];
		if (toast_settled(op) || from[i].b != NULL)
			continue;
		/* where the document was before this update */
		refs[nasked] = docref_of(b, op, 1);
		asked[nasked++] = i;
		if (from[i].own) {
			refs[nasked] = docref_of(b, op, 0);
			asked[nasked++] = i;
		}
	}
	return nasked;
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
