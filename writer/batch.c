/*
 * batch.c - the buffer of operations read but not yet written, and the
 * batching rule: a flush ends at a commit/pos boundary, so a transaction is
 * never presented half-written, unless the open transaction alone exceeds
 * the batch limits (then it is split: an unbounded buffer is worse). Clear
 * and mark are barriers that end a flush right after themselves. Performs
 * no I/O: the main loop says why it asks for a cut.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer.h"

void
batch_init(struct batch *b, int limit_docs, size_t limit_bytes)
{
	memset(b, 0, sizeof(*b));
	sbuf_init(&b->arena);
	b->last_boundary = -1;
	b->first_barrier = -1;
	b->limit_docs = limit_docs > 0 ? limit_docs : 1;
	b->limit_bytes = limit_bytes > 0 ? limit_bytes : 1;
}

static void
op_release(struct op *op)
{
	free(op->toast);
	free(op->toast_id);
	free(op->rel);
	free(op->completed);
	free(op->text);
}

void
batch_release(struct batch *b)
{
	int i;

	for (i = 0; i < b->nops; i++)
		op_release(&b->ops[i]);
	free(b->ops);
	sbuf_release(&b->arena);
	memset(b, 0, sizeof(*b));
	b->last_boundary = -1;
	b->first_barrier = -1;
}

static int
add_position(struct op *op, struct jspan obj, int is_commit, char *err,
    size_t errlen)
{
	struct jspan v;
	int64_t ts;

	if (!jobj_get(obj, "pos", &v) || jspan_type(v) != J_NUMBER ||
	    jnum_u64(v, &op->pos) == -1) {
		snprintf(err, errlen, "%s has no unsigned 64-bit \"pos\"",
		    is_commit ? "commit" : "pos");
		return -1;
	}
	op->ts = -1;
	if (is_commit && jobj_get(obj, "ts", &v)) {
		if (jspan_type(v) != J_NUMBER || jnum_i64(v, &ts) == -1) {
			snprintf(err, errlen, "commit \"ts\" is not an integer");
			return -1;
		}
		op->ts = ts;
	}
	/* the source's own text travels to the checkpoint untouched */
	if (jobj_get(obj, "text", &v) && jspan_type(v) == J_STRING)
		op->text = jstr_dup(v);
	return 0;
}

int
batch_add(struct batch *b, const struct frame *f, char *err, size_t errlen)
{
	struct op *op;
	struct jspan v;
	size_t mark = b->arena.len;

	if (b->nops == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->ops = xrealloc(b->ops, b->cap * sizeof(*b->ops));
	}
	op = &b->ops[b->nops];
	memset(op, 0, sizeof(*op));

	if (frame_is(f, "index") || frame_is(f, "delete")) {
		if (bulk_add_entry(&b->arena, f->obj, frame_is(f, "delete"),
		    op, err, errlen) == -1) {
			b->arena.len = mark;
			return -1;
		}
		b->ndocs++;
	} else if (frame_is(f, "commit") || frame_is(f, "pos")) {
		op->kind = frame_is(f, "commit") ? OP_COMMIT : OP_POS;
		if (add_position(op, f->obj, op->kind == OP_COMMIT, err,
		    errlen) == -1) {
			op_release(op);
			return -1;
		}
		b->last_boundary = b->nops;
	} else if (frame_is(f, "clear")) {
		op->kind = OP_CLEAR;
		if (!jobj_get(f->obj, "index", &v) ||
		    jspan_type(v) != J_STRING || v.n <= 2) {
			snprintf(err, errlen, "clear has no \"index\"");
			return -1;
		}
		op->text = jstr_dup(v);
		if (b->first_barrier < 0)
			b->first_barrier = b->nops;
	} else if (frame_is(f, "mark")) {
		op->kind = OP_MARK;
		if (!jobj_get(f->obj, "id", &v)) {
			snprintf(err, errlen, "mark has no \"id\"");
			return -1;
		}
		op->text = xstrndup(f->obj.p, f->obj.n);
		if (b->first_barrier < 0)
			b->first_barrier = b->nops;
	} else {
		/* ignoring an operation we do not know would lose it */
		snprintf(err, errlen, "unknown operation kind %.*s",
		    (int)(f->kind.n > 64 ? 64 : f->kind.n), f->kind.p);
		return -1;
	}
	b->nops++;
	return 0;
}

int
batch_full(const struct batch *b)
{
	return b->ndocs >= b->limit_docs || b->arena.len >= b->limit_bytes;
}

int
batch_cut(const struct batch *b, enum cut_reason why)
{
	if (b->nops == 0)
		return 0;
	/* the main loop reads nothing past a barrier */
	if (b->first_barrier >= 0)
		return b->first_barrier + 1;
	if (why == CUT_EOF)
		return b->nops;
	if (batch_full(b))
		return b->last_boundary >= 0 ? b->last_boundary + 1 : b->nops;
	if (why == CUT_IDLE && b->last_boundary >= 0)
		return b->last_boundary + 1;
	return 0;
}

const struct op *
batch_boundary(const struct batch *b, int n)
{
	const struct op *last = NULL, *op;
	int i;

	for (i = n - 1; i >= 0; i--) {
		op = &b->ops[i];
		if (op->kind != OP_COMMIT && op->kind != OP_POS)
			continue;
		if (last && op->pos != last->pos)
			break;
		/* a keepalive repeating a commit's position: the commit's
		 * time is what the latency is measured from */
		if (!last || op->kind == OP_COMMIT)
			last = op;
		if (op->kind == OP_COMMIT)
			break;
	}
	return last;
}

static void
shift(struct aspan *s, size_t by)
{
	if (s->len)
		s->off -= by;
}

void
batch_consume(struct batch *b, int n)
{
	struct op *op;
	size_t by = b->arena.len;
	int i;

	if (n <= 0)
		return;
	if (n > b->nops)
		n = b->nops;
	for (i = 0; i < n; i++) {
		if (b->ops[i].kind == OP_INDEX || b->ops[i].kind == OP_DELETE)
			b->ndocs--;
		op_release(&b->ops[i]);
	}
	for (i = n; i < b->nops; i++)
		if (b->ops[i].kind == OP_INDEX ||
		    b->ops[i].kind == OP_DELETE) {
			by = b->ops[i].entry.off;
			break;
		}
	memmove(b->ops, b->ops + n, (b->nops - n) * sizeof(*b->ops));
	b->nops -= n;
	sbuf_consume(&b->arena, by);
	b->last_boundary = -1;
	b->first_barrier = -1;
	for (i = 0; i < b->nops; i++) {
		op = &b->ops[i];
		if (op->kind == OP_COMMIT || op->kind == OP_POS)
			b->last_boundary = i;
		if ((op->kind == OP_CLEAR || op->kind == OP_MARK) &&
		    b->first_barrier < 0)
			b->first_barrier = i;
		if (op->kind != OP_INDEX && op->kind != OP_DELETE)
			continue;
		shift(&op->entry, by);
		shift(&op->action, by);
		shift(&op->doc, by);
		shift(&op->index, by);
		shift(&op->id, by);
		shift(&op->routing, by);
	}
}

struct jspan
batch_span(const struct batch *b, struct aspan s)
{
	struct jspan j;

	j.p = s.len ? b->arena.buf + s.off : NULL;
	j.n = s.len;
	return j;
}
