/*
 * window.c - the flushes open at once, each in the slot its sequence number
 * picks: up to engine.write_concurrency not yet written, and behind the
 * oldest of those the written ones that wait for it to be reported, in
 * twice as many slots. A written flush freeing its request at once keeps
 * write_concurrency requests open when one of them is slow, as a client
 * with one connection per request would, while the report waits for the
 * slow one. What the window holds is bounded by bytes too: every flush in
 * it counts toward write_concurrency batches of batch_max_bytes, its
 * documents and what it keeps for each operation (flush_held), so the
 * writer's memory grows neither with the extra slots nor with the number
 * of small operations in them. It owns the scheduling
 * rules: which flush sends next, when a backoff ends, that a clear waits
 * for every flush before it to be written and holds back every flush after
 * it until it is done, and that flushes are reported in the order they
 * were cut (order.c): a position or a mark is reported only once every
 * flush before it is written, which is all the waiting a mark or a bare
 * pos needs. It makes no request itself: window_next says which
 * to make on which slot and window_answer takes the answer, so the whole
 * of it runs without a socket.
 *
 * Writes of one document with one version are never open at once, since
 * the target cannot order them, nor a delete with an earlier write of its
 * document, since the target forgets a delete's version (overtakes).
 *
 * A target whose writes are tasks (TCAP_ASYNC_TASKS) applies one index's
 * tasks in the order they were sent, and writes its store once per batch
 * of the tasks waiting in its queue, whatever their size: there the window
 * holds up to WINDOW_TASK_DEPTH flushes (window_depth) within the bytes of
 * two batches (of narrow rows, fewer: their ops count), and a flush sends
 * its writes only once every flush before
 * it has sent all of its own (may_send), so the later flushes' tasks wait
 * in the queue behind the first one's, in cut order, and the server takes
 * them in one batch; a flush that met a refusal holds the later ones back
 * until it is written. Such
 * a target keeps no versions: a write sent again lands after everything
 * sent before it, so a flush building its body (again) leaves out each
 * write a later flush in the window makes of the same document
 * (drop_superseded), which is the newer one.
 *
 * TOAST completion with flushes open: a document whose unchanged fields
 * must be copied may be written by an earlier flush that the target has
 * not taken yet, so the stored copy is stale. The completion then copies
 * from that earlier flush's operation in memory (toast_plan), as it does
 * within one flush, rather than waiting for the earlier flush before
 * reading: the bytes are the ones about to be written, versions make the
 * order in which the two writes land irrelevant, and waiting would
 * serialise every flush behind a slow one. Only when that earlier
 * operation is itself still waiting for its own completion does the later
 * flush wait, for that completion, not for the write.
 */
#include <stdlib.h>
#include <string.h>

#include "xio.h"
#include "writer.h"

int
window_depth(const struct target_module *tm, int write_concurrency)
{
	return target_can(tm, TCAP_ASYNC_TASKS) ? WINDOW_TASK_DEPTH :
	    write_concurrency;
}

void
window_init(struct window *w, int open_max, struct sink *s)
{
	int i;

	memset(w, 0, sizeof(*w));
	w->open_max = open_max > 0 ? open_max : 1;
	/* many small flushes of tasks, but not many large ones */
	w->bytes_batches = target_can(s->tm, TCAP_ASYNC_TASKS) &&
	    w->open_max > 2 ? 2 : w->open_max;
	w->cap = WINDOW_SLOTS(w->open_max);
	order_init(&w->ord, w->cap);
	w->fl = xcalloc(w->cap, sizeof(*w->fl));
	for (i = 0; i < w->cap; i++)
		flush_init(&w->fl[i]);
	w->earlier = xcalloc(w->cap, sizeof(*w->earlier));
	w->sink = s;
}

void
window_release(struct window *w)
{
	int i;

	for (i = 0; i < w->cap; i++)
		flush_release(&w->fl[i]);
	window_trim(w);
	free(w->fl);
	free(w->earlier);
	order_release(&w->ord);
	memset(w, 0, sizeof(*w));
}

void
window_trim(struct window *w)
{
	while (w->nspare > 0)
		flush_spare_release(&w->spare[--w->nspare]);
}

/* flushes cut and not yet written: the requests open or due */
static int
unwritten(const struct window *w)
{
	uint64_t seq;
	int n = 0;

	for (seq = w->ord.head; seq < w->ord.next; seq++)
		n += order_pending(&w->ord, seq);
	return n;
}

int
window_full(const struct window *w)
{
	return order_full(&w->ord) || unwritten(w) >= w->open_max;
}

int
window_empty(const struct window *w)
{
	return order_empty(&w->ord);
}

static struct flush *
slot_of(const struct window *w, uint64_t seq)
{
	return &w->fl[seq % w->cap];
}

/*
 * What a flush holds: its documents, and what it keeps for each of its
 * operations, the op and its procedure's plan. The second is not small
 * beside the first: a narrow row is some 200 bytes of document and 260 of
 * op, and a window of many small flushes (a target whose writes are
 * tasks) counted in documents alone grew with its depth.
 */
static size_t
flush_held(const struct flush *fl)
{
	return fl->b.arena.len + (size_t)fl->b.nops * sizeof(struct op) +
	    fl->proc.plan.len;
}

/*
 * The bytes every flush still in the window holds, written or not: with
 * the batch being read, the writer's bodies and their bookkeeping stay
 * within bytes_batches + 1 batches of batch_max_bytes however many
 * flushes the window may hold.
 */
static size_t
held(const struct window *w)
{
	uint64_t seq;
	size_t n = 0;

	for (seq = w->ord.head; seq < w->ord.next; seq++)
		n += flush_held(slot_of(w, seq));
	return n;
}

/* a clear or a cascade: it deletes what the target holds, so every
 * write before it lands first and none after it starts before it ends */
static int
ends_in_clear(const struct batch *b, int n)
{
	return n > 0 && (b->ops[n - 1].kind == OP_CLEAR ||
	    b->ops[n - 1].kind == OP_CASCADE);
}

static int
is_data(const struct op *op)
{
	return op->kind == OP_INDEX || op->kind == OP_DELETE;
}

/* the lowest and highest version among the data ops [0, n) of b; 0 when
 * there are none */
static int
versions(const struct batch *b, int n, uint64_t *lo, uint64_t *hi)
{
	int i, any = 0;

	for (i = 0; i < n; i++) {
		if (!is_data(&b->ops[i]))
			continue;
		if (!any || b->ops[i].v < *lo)
			*lo = b->ops[i].v;
		if (!any || b->ops[i].v > *hi)
			*hi = b->ops[i].v;
		any = 1;
	}
	return any;
}

/*
 * Would ops [0, n) of b overtake a write of the same document in a flush
 * not written yet? External versions order two writes of one document by
 * version, and two of one version (the rows of a transaction split over
 * flushes, the copy rows of one wave) not at all: such a cut waits until
 * the earlier flush is written. Two writes of different versions may land
 * in any order, but for one case: a delete. The node remembers a deleted
 * document's version in the primary's memory only, for index.gc_deletes
 * (60 s), and forgets it when a copy is promoted after a node is lost; an
 * older write landing after the delete then brings the document back. So
 * a delete waits until every earlier write of its document is written.
 */
static int
overtakes(const struct window *w, const struct batch *b, int n)
{
	const struct batch *e;
	const struct op *op;
	struct docref r;
	uint64_t lo, hi, elo, ehi, seq;
	int i, j, same, dels;

	if (!versions(b, n, &lo, &hi))
		return 0;
	/* a target whose writes are tasks applies them in the order sent */
	dels = target_can(w->sink->tm, TCAP_EXTERNAL_VERSIONS);
	for (seq = w->ord.head; seq < w->ord.next; seq++) {
		if (!order_pending(&w->ord, seq))
			continue;
		e = &slot_of(w, seq)->b;
		if (!versions(e, e->nops, &elo, &ehi))
			continue;
		same = !(ehi < lo || elo > hi);
		if (!same && !dels)
			continue;
		for (i = 0; i < n; i++) {
			op = &b->ops[i];
			if (!is_data(op) || (!same && op->kind != OP_DELETE))
				continue;
			r = docref_of(b, op, 0);
			/* the table is built once per flush and kept */
			j = batch_last_write((struct batch *)e, &r);
			if (j < 0)
				continue;
			if (e->ops[j].v == op->v)
				return 1;
			if (dels && op->kind == OP_DELETE && !e->ops[j].written)
				return 1;
		}
	}
	return 0;
}

int
window_may_open(const struct window *w, const struct batch *b, int n)
{
	if (n <= 0 || window_full(w) || w->barrier)
		return 0;
	/* the whole arena of b: an upper bound of what ops [0, n) take */
	if (!order_empty(&w->ord) && held(w) + b->arena.len +
	    (size_t)n * sizeof(struct op) >
	    (size_t)w->bytes_batches * b->limit_bytes)
		return 0;
	if (overtakes(w, b, n))
		return 0;
	/* a clear deletes what the target holds: every write before it
	 * must be there first, and none after it may start before it */
	if (ends_in_clear(b, n) && !order_empty(&w->ord))
		return 0;
	return 1;
}

void
window_open(struct window *w, struct batch *b, int n)
{
	uint64_t seq = order_open(&w->ord);
	struct flush *fl = slot_of(w, seq);

	if (ends_in_clear(b, n))
		w->barrier = 1;
	/* batch_move hands the flush's arena to b, which fills it next */
	if (fl->b.arena.buf == NULL && fl->arr.room == 0 && w->nspare > 0)
		flush_reuse(fl, &w->spare[--w->nspare]);
	batch_move(b, n, &fl->b);
	flush_begin(fl, seq);
}

/* may flush seq send a request that writes? With a target whose writes
 * are tasks, only once every flush before it that is not written has
 * sent all of its writes, and has met no refusal: behind a refused
 * document nothing more is written, as with one flush open */
static int
may_send(const struct window *w, uint64_t seq)
{
	const struct flush *e;
	uint64_t s;

	if (!target_can(w->sink->tm, TCAP_ASYNC_TASKS))
		return 1;
	for (s = w->ord.head; s < seq; s++) {
		e = slot_of(w, s);
		if (order_pending(&w->ord, s) &&
		    (e->refused || !(e->tasking && e->proc.sent_all)))
			return 0;
	}
	return 1;
}

/*
 * A flush about to build its body (again) leaves out each write of a
 * document a later flush in the window supersedes. Without versions the
 * later write is the newer one wherever it lands, since a write sent again
 * lands after everything sent before it. With external versions (the
 * request failed while the flushes after it went on) only a later write
 * the node has taken supersedes it, and only under the same routing: one
 * under another may sit on another shard, where the earlier one is still
 * owed, as superseded() in sink.c has it within one flush; the older write
 * would only come back as a version conflict, and could not bring back a
 * document a later flush deleted (a delete waits for every earlier write
 * of its document, overtakes).
 */
static void
drop_superseded(const struct window *w, uint64_t seq)
{
	struct flush *fl = slot_of(w, seq);
	const struct batch *later;
	struct docref r, rj;
	struct op *op;
	uint64_t s;
	int i, j, versioned;

	versioned = target_can(w->sink->tm, TCAP_EXTERNAL_VERSIONS);
	if ((!versioned && fl->tasking) || fl->phase > PH_BULK)
		return;
	for (s = seq + 1; s < w->ord.next; s++) {
		later = &slot_of(w, s)->b;
		for (i = 0; i < fl->b.nops; i++) {
			op = &fl->b.ops[i];
			if (!is_data(op) || op->written)
				continue;
			r = docref_of(&fl->b, op, 0);
			j = batch_last_write((struct batch *)later, &r);
			if (j < 0)
				continue;
			if (versioned) {
				if (!later->ops[j].written)
					continue;
				rj = docref_of(later, &later->ops[j], 0);
				if (!docref_same_routing(&r, &rj))
					continue;
			}
			op->written = 1;
		}
	}
}

/* the request a flush is failing on, for the message that ends it */
static const char *
phase_what(const struct flush *fl)
{
	switch (fl->phase) {
	case PH_CREATE:
		return "an index creation";
	case PH_TOAST:
		return "a TOAST read-back";
	case PH_BARRIER:
		return "a truncate or cascade";
	default:
		return "a bulk request";
	}
}

int
window_next(struct window *w, long long now, int retry, int *slot,
    struct http_call *call, struct sbuf **resp)
{
	struct flush *fl;
	uint64_t seq, e;
	int nearlier;

	/* oldest first: an earlier flush's completion may unblock a later
	 * one in the same pass */
	for (seq = w->ord.head; seq < w->ord.next; seq++) {
		fl = slot_of(w, seq);
		if (!order_pending(&w->ord, seq) || fl->inflight)
			continue;
		if (fl->retry_at) {
			if (!retry || now < fl->retry_at)
				continue;
			fl->retry_at = 0;
		}
		if (fl->poll_at) {
			if (now < fl->poll_at)
				continue;
			fl->poll_at = 0;
		}
		/* a flush only asking about its tasks may always ask */
		if (!(fl->tasking && fl->proc.sent_all) && !may_send(w, seq))
			continue;
		drop_superseded(w, seq);
		nearlier = 0;
		for (e = w->ord.head; e < seq; e++)
			w->earlier[nearlier++] = &slot_of(w, e)->b;
		switch (flush_next(w->sink, fl, w->earlier, nearlier, call)) {
		case NEXT_SEND:
			fl->inflight = 1;
			if (!fl->started_us)
				fl->started_us = now_us_wall();
			*slot = (int)(seq % w->cap);
			*resp = &fl->resp;
			return 1;
		case NEXT_DONE:
			order_finish(&w->ord, seq);
			break;
		case NEXT_BLOCKED:
			break;
		case NEXT_FAILED:
			w->sink->stats->sink_errors++;
			fl->retry_at = now + sink_backoff(&fl->backoff_ms);
			break;
		}
	}
	return 0;
}

enum step_result
window_answer(struct window *w, int slot, const char *terr, long status,
    long long now)
{
	struct flush *fl = &w->fl[slot];
	enum step_result r;

	fl->inflight = 0;
	r = flush_answer(w->sink, fl, terr, status);
	switch (r) {
	case STEP_DONE:
		order_finish(&w->ord, fl->seq);
		fl->backoff_ms = 0;
		fl->attempts = 0;
		break;
	case STEP_NEXT:
		fl->backoff_ms = 0;
		fl->attempts = 0;
		/* a task still running is asked about again a little later */
		if (fl->proc.poll_ms > 0) {
			fl->poll_at = now + fl->proc.poll_ms;
			fl->proc.poll_ms = 0;
		}
		break;
	case STEP_WAIT:
		/* nothing after this flush is reported while it fails, so
		 * ending here acknowledges nothing past it */
		if (sink_retry_limit(w->sink, &fl->attempts,
		    &fl->failing_since, now, phase_what(fl)))
			return STEP_END;
		fl->retry_at = now + sink_backoff(&fl->backoff_ms);
		break;
	case STEP_END:
		break;
	}
	return r;
}

const struct flush *
window_head(const struct window *w)
{
	if (order_empty(&w->ord) || order_pending(&w->ord, w->ord.head))
		return NULL;
	return slot_of(w, w->ord.head);
}

int
window_report(struct window *w, struct msg_pos *d, struct jspan *mark)
{
	const struct flush *fl = window_head(w);

	if (fl == NULL)
		return 0;
	/* a keepalive may repeat a position already reported */
	if (batch_report(&fl->b, d, mark) && w->reported_any &&
	    d->pos <= w->reported_pos)
		d->present = 0;
	if (d->present) {
		w->reported_pos = d->pos;
		w->reported_any = 1;
		d->sent = fl->started_us;
	}
	return 1;
}

void
window_retire(struct window *w)
{
	struct flush *fl;
	uint64_t seq;

	if (!order_pop(&w->ord, &seq))
		return;
	fl = slot_of(w, seq);
	if (ends_in_clear(&fl->b, fl->b.nops))
		w->barrier = 0;
	if (w->nspare < WINDOW_SPARES)
		flush_keep(fl, &w->spare[w->nspare++]);
	flush_reset(fl);
}

long long
window_retry_at(const struct window *w)
{
	const struct flush *fl;
	long long at = 0;
	uint64_t seq;

	for (seq = w->ord.head; seq < w->ord.next; seq++) {
		fl = slot_of(w, seq);
		if (fl->retry_at && (at == 0 || fl->retry_at < at))
			at = fl->retry_at;
	}
	return at;
}

long long
window_poll_at(const struct window *w)
{
	const struct flush *fl;
	long long at = 0;
	uint64_t seq;

	for (seq = w->ord.head; seq < w->ord.next; seq++) {
		fl = slot_of(w, seq);
		if (fl->poll_at && (at == 0 || fl->poll_at < at))
			at = fl->poll_at;
	}
	return at;
}

int
window_backing_off(const struct window *w)
{
	return window_retry_at(w) != 0;
}

int
window_inflight(const struct window *w)
{
	uint64_t seq;
	int n = 0;

	for (seq = w->ord.head; seq < w->ord.next; seq++)
		n += slot_of(w, seq)->inflight;
	return n;
}

int
window_unwritten(const struct window *w)
{
	const struct batch *b;
	uint64_t seq;
	int i, n = 0;

	for (seq = w->ord.head; seq < w->ord.next; seq++) {
		b = &slot_of(w, seq)->b;
		for (i = 0; i < b->nops; i++)
			if ((b->ops[i].kind == OP_INDEX ||
			    b->ops[i].kind == OP_DELETE) && !b->ops[i].written)
				n++;
	}
	return n;
}
