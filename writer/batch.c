/*
 * batch.c - the buffer of operations read but not yet cut, and the
 * batching rule: a flush ends at a commit/pos boundary, so a transaction is
 * never presented half-written, unless the open transaction alone exceeds
 * the batch limits (then it is split: an unbounded buffer is worse). Clear,
 * cascade and mark are barriers that end a flush right after themselves. What a
 * frame says is read through lib/msg.h; the bulk entry is bulk.c's, a
 * barrier is kept as what it deletes, for the target module to ask.
 * Performs no I/O: the main loop says why it asks for a cut.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "xio.h"
#include "p2o.h"
#include "writer.h"

void
batch_init(struct batch *b, const struct target_module *tm, int limit_docs,
    size_t limit_bytes)
{
	memset(b, 0, sizeof(*b));
	b->tm = tm;
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
	free(op->toast_index);
	free(op->toast_routing);
	if (op->bar) {
		free(op->bar->field);
		free(op->bar->value);
		free(op->bar->children);
		free(op->bar->parent_id);
		free(op->bar->parent);
		free(op->bar);
	}
	free(op->rel);
	free(op->completed);
	free(op->text);
	free(op->refusal);
}

/* the index of writes describes the ops as they were */
static void
forget_writers(struct batch *b)
{
	doctab_release(&b->writers);
}

void
batch_release(struct batch *b)
{
	const struct config *aliases = b->aliases;
	int i, docs = b->limit_docs;
	size_t bytes = b->limit_bytes;

	for (i = 0; i < b->nops; i++)
		op_release(&b->ops[i]);
	free(b->ops);
	forget_writers(b);
	sbuf_release(&b->arena);
	batch_init(b, b->tm, docs, bytes);
	b->aliases = aliases;
}

/* does the write of m name an alias (target.require_alias)? Those to a
 * section's index do */
static int
names_alias(const struct batch *b, const struct msg_op *m)
{
	char name[512];

	return b->aliases != NULL && jstr_copy(m->index, name,
	    sizeof(name)) == 0 && config_find_index(b->aliases, name) != NULL;
}

static int
is_data(const struct op *op)
{
	return op->kind == OP_INDEX || op->kind == OP_DELETE;
}

/* a raw JSON span as a heap string, NULL when absent */
static char *
raw_dup(struct jspan s)
{
	return s.p ? xstrndup(s.p, s.n) : NULL;
}

int
batch_add(struct batch *b, const struct frame *f, struct p2o_err *err)
{
	enum msg_kind k = msg_kind(f);
	struct msg_mark mark;
	struct msg_pos pos;
	struct msg_op m;
	struct op *op;
	size_t arena_len = b->arena.len;
	char why[512];

	if (b->nops == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->ops = xrealloc(b->ops, b->cap * sizeof(*b->ops));
	}
	op = &b->ops[b->nops];
	memset(op, 0, sizeof(*op));
	forget_writers(b);

	switch (k) {
	case MSG_INDEX:
	case MSG_DELETE:
	case MSG_FILL:
		if (msg_read_op(f, &m, why, sizeof(why)) == -1) {
			b->arena.len = arena_len;
			return p2o_fail(err, P2O_EXIT_DATA, "%s", why);
		}
		if (bulk_add_entry(&b->arena, b->tm, &m, names_alias(b, &m), op,
		    err) == -1) {
			b->arena.len = arena_len;
			return -1;
		}
		op->fill = k == MSG_FILL;
		b->ndocs++;
		break;
	case MSG_COMMIT:
	case MSG_POS:
		if (msg_read_pos(f, &pos, why, sizeof(why)) == -1)
			return p2o_fail(err, P2O_EXIT_DATA, "%s", why);
		op->kind = k == MSG_COMMIT ? OP_COMMIT : OP_POS;
		op->pos = pos.pos;
		op->ts = pos.ts;
		op->tx = pos.tx;
		op->rx = pos.rx;
		/* the latency breakdown: the pipes and the shaper end here */
		op->in = now_us_wall();
		/* the source's own text travels to the checkpoint untouched */
		op->text = pos.text;
		b->last_boundary = b->nops;
		break;
	case MSG_CLEAR:
	case MSG_CASCADE:
		if (msg_read_op(f, &m, why, sizeof(why)) == -1)
			return p2o_fail(err, P2O_EXIT_DATA, "%s", why);
		op->kind = k == MSG_CLEAR ? OP_CLEAR : OP_CASCADE;
		op->text = jstr_dup(m.index);
		op->v = m.v;
		op->bar = xcalloc(1, sizeof(*op->bar));
		if (k == MSG_CLEAR) {
			op->bar->field = raw_dup(m.field);
			op->bar->value = raw_dup(m.value);
		} else {
			op->bar->children = raw_dup(m.children);
			op->bar->parent_id = raw_dup(m.id);
			op->bar->parent = jstr_dup(m.id);
		}
		if (b->first_barrier < 0)
			b->first_barrier = b->nops;
		break;
	case MSG_MARK:
		if (msg_read_mark(f, &mark, why, sizeof(why)) == -1)
			return p2o_fail(err, P2O_EXIT_DATA, "%s", why);
		msg_mark_release(&mark);
		/* "marked" carries the mark's members as they arrived */
		op->kind = OP_MARK;
		op->text = xstrndup(f->obj.p, f->obj.n);
		if (b->first_barrier < 0)
			b->first_barrier = b->nops;
		break;
	default:
		/* ignoring an operation we do not know would lose it */
		return p2o_fail(err, P2O_EXIT_DATA, "unknown operation kind "
		    "%.*s", (int)(f->kind.n > 64 ? 64 : f->kind.n), f->kind.p);
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
	int n;

	if (b->nops == 0)
		return 0;
	if (why == CUT_STOP) {
		/* complete transactions only, and never past a barrier */
		n = b->last_boundary + 1;
		if (n > 0 && b->first_barrier >= 0 && b->first_barrier < n)
			n = b->first_barrier + 1;
		return n;
	}
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

int
batch_report(const struct batch *b, struct msg_pos *d, struct jspan *mark)
{
	const struct op *bound = batch_boundary(b, b->nops), *last;

	memset(d, 0, sizeof(*d));
	mark->p = NULL;
	mark->n = 0;
	/* a mark is always the last op of its flush (batch_cut) */
	last = b->nops ? &b->ops[b->nops - 1] : NULL;
	if (last && last->kind == OP_MARK) {
		mark->p = last->text;
		mark->n = strlen(last->text);
	}
	if (bound == NULL)
		return 0;
	d->present = 1;
	d->pos = bound->pos;
	d->text = bound->text;
	d->ts = bound->ts;
	d->tx = bound->tx;
	d->rx = bound->rx;
	d->in = bound->in;
	return 1;
}

static void
shift(struct aspan *s, size_t by)
{
	if (s->len)
		s->off -= by;
}

/* where the bytes of ops [n, nops) start in the arena */
static size_t
bytes_before(const struct batch *b, int n)
{
	int i;

	for (i = n; i < b->nops; i++)
		if (is_data(&b->ops[i]))
			return b->ops[i].entry.off;
	return b->arena.len;
}

/* recount what the ops say about themselves after ops moved */
static void
recount(struct batch *b)
{
	struct op *op;
	int i;

	b->ndocs = 0;
	b->last_boundary = -1;
	b->first_barrier = -1;
	for (i = 0; i < b->nops; i++) {
		op = &b->ops[i];
		if (is_data(op))
			b->ndocs++;
		if (op->kind == OP_COMMIT || op->kind == OP_POS)
			b->last_boundary = i;
		if ((op->kind == OP_CLEAR || op->kind == OP_MARK ||
		    op->kind == OP_CASCADE) && b->first_barrier < 0)
			b->first_barrier = i;
	}
}

/* ops [0, n) are gone and the arena lost its first by bytes */
static void
drop_front(struct batch *b, int n, size_t by)
{
	struct op *op;
	int i;

	memmove(b->ops, b->ops + n, (b->nops - n) * sizeof(*b->ops));
	b->nops -= n;
	recount(b);
	for (i = 0; i < b->nops; i++) {
		op = &b->ops[i];
		if (!is_data(op))
			continue;
		shift(&op->entry, by);
		shift(&op->head, by);
		shift(&op->doc, by);
		shift(&op->index, by);
		shift(&op->id, by);
		shift(&op->routing, by);
	}
}

void
batch_consume(struct batch *b, int n)
{
	size_t by;
	int i;

	if (n <= 0)
		return;
	if (n > b->nops)
		n = b->nops;
	by = bytes_before(b, n);
	for (i = 0; i < n; i++)
		op_release(&b->ops[i]);
	forget_writers(b);
	sbuf_consume(&b->arena, by);
	drop_front(b, n, by);
}

void
batch_move(struct batch *from, int n, struct batch *to)
{
	struct sbuf swap;
	size_t by;

	if (n > from->nops)
		n = from->nops;
	by = bytes_before(from, n);
	forget_writers(from);
	forget_writers(to);
	to->tm = from->tm;
	to->limit_docs = from->limit_docs;
	to->limit_bytes = from->limit_bytes;
	if (to->cap < n) {
		to->cap = n;
		to->ops = xrealloc(to->ops, to->cap * sizeof(*to->ops));
	}
	memcpy(to->ops, from->ops, n * sizeof(*to->ops));
	to->nops = n;
	recount(to);
	/* the moved ops keep their offsets: to takes the whole arena and
	 * from keeps a copy of the rest, usually the smaller part */
	swap = to->arena;
	to->arena = from->arena;
	from->arena = swap;
	sbuf_reset(&from->arena);
	if (to->arena.len > by)
		sbuf_add(&from->arena, to->arena.buf + by,
		    to->arena.len - by);
	to->arena.len = by;
	if (to->arena.buf)
		to->arena.buf[by] = '\0';
	drop_front(from, n, by);
}

struct jspan
batch_span(const struct batch *b, struct aspan s)
{
	struct jspan j;

	j.p = s.len ? b->arena.buf + s.off : NULL;
	j.n = s.len;
	return j;
}
