/*
 * sink.c - what one flush asks of the target and what the answers mean
 * for it: the creation of an index at its first use (with the body the
 * configuration gives it), the read behind TOAST completion, the bulk
 * request and its retries (only of the items not yet written), the record
 * of the documents it refused when they are quarantined (quarantine.c),
 * and the barrier a flush ends in (a clear, a join cascade), in that order. The
 * target module (lib/target.h) builds each request and reads each answer;
 * the sink keeps the order, the retries, the counters, and logs what an
 * operator must see. A target whose writes are tasks (TCAP_ASYNC_TASKS)
 * writes a flush's entries through the module's write procedure instead
 * of one bulk request: several requests, the polls of each task among
 * them, and the flush is done only when every task succeeded. It performs no I/O (the writer's loop makes the
 * requests it asks for), never sleeps (the loop waits out the backoff) and
 * never exits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "xio.h"
#include "writer.h"

#define DOWN_LOG_EVERY_MS	60000

/* engine.retry_backoff_ms of the writer's one sink: every backoff of the
 * process (the flushes' and the probe's) starts there */
static long long backoff_first_ms = 100;

/* the verbs' blocking write backs off the same way (lib/target.c) */
long long
sink_backoff(long long *cur_ms)
{
	return target_backoff(cur_ms, backoff_first_ms);
}

int
sink_init(struct sink *s, const struct target_module *tm, const char *target,
    struct writer_stats *st, const struct config *cfg, struct p2o_err *err)
{
	memset(s, 0, sizeof(*s));
	/* acknowledging a queued task as durable would break the one
	 * invariant: such a target writes through its procedure, which
	 * answers only when its tasks have succeeded */
	if (target_can(tm, TCAP_ASYNC_TASKS) && (tm->ops->write_call == NULL ||
	    tm->ops->write_answer == NULL))
		return p2o_fail(err, P2O_EXIT_CONFIG, "target '%s' accepts "
		    "writes as tasks but has no procedure that waits for "
		    "them", tm->name);
	s->tm = tm;
	s->target = target;
	s->stats = st;
	s->cfg = cfg;
	if (cfg != NULL) {
		backoff_first_ms = cfg->retry_backoff_ms > 0 ?
		    cfg->retry_backoff_ms : backoff_first_ms;
		s->retry_max = cfg->retry_max;
		s->retry_max_elapsed_ms = cfg->retry_max_elapsed_ms;
	}
	sbuf_init(&s->probe_resp);
	return quarantine_init(s, err);
}

int
sink_retry_limit(struct sink *s, int *attempts, long long *since,
    long long now, const char *what)
{
	char why[P2O_ERR_MAX];

	if ((*attempts)++ == 0)
		*since = now;
	if (s->retry_max > 0 && *attempts >= s->retry_max) {
		snprintf(why, sizeof(why), "%s", s->err.msg);
		p2o_fail(&s->err, P2O_EXIT_TEMPFAIL, "giving up on %s after %d "
		    "attempts (the limit engine.retry_max is %d): %s", what,
		    *attempts, s->retry_max, why);
		return 1;
	}
	if (s->retry_max_elapsed_ms > 0 &&
	    now - *since >= s->retry_max_elapsed_ms) {
		snprintf(why, sizeof(why), "%s", s->err.msg);
		p2o_fail(&s->err, P2O_EXIT_TEMPFAIL, "giving up on %s after %d "
		    "attempts in %lld ms (the limit engine.retry_max_elapsed_ms "
		    "is %lld): %s", what, *attempts, now - *since,
		    s->retry_max_elapsed_ms, why);
		return 1;
	}
	return 0;
}

void
sink_release(struct sink *s)
{
	int i;

	for (i = 0; i < s->nknown; i++)
		free(s->known[i]);
	free(s->known);
	free(s->stream);
	sbuf_release(&s->probe_resp);
	free(s->items);
}

void
sink_trim(struct sink *s)
{
	free(s->items);
	s->items = NULL;
	s->nitems = 0;
}

static int
is_known(const struct sink *s, const char *index)
{
	int i;

	for (i = 0; i < s->nknown; i++)
		if (strcmp(s->known[i], index) == 0)
			return 1;
	return 0;
}

static void
add_known(struct sink *s, const char *index)
{
	if (s->nknown == s->capknown) {
		s->capknown = s->capknown ? s->capknown * 2 : 16;
		s->known = xrealloc(s->known, (size_t)s->capknown *
		    sizeof(*s->known));
	}
	s->known[s->nknown++] = xstrdup(index);
}

/*
 * The first index of the flush that this writer has not seen yet and that
 * must be created with something the target would not give it on its
 * own: a templated index (created at its first document, the mapping
 * the operator configured and not a guess from that document) or one with
 * a mapping file or a join. Indices needing nothing are only remembered.
 */
static const char *
index_to_create(struct sink *s, const struct batch *b)
{
	const struct sync_section *sec;
	const struct op *op;
	static char name[512];
	struct jspan ix, last = { NULL, 0 };
	int i;

	/* the alias names an index made beforehand; creating one under the
	 * alias's name would take the name the writes must go through */
	if (s->cfg == NULL || s->cfg->target_require_alias)
		return NULL;
	for (i = 0; i < b->nops; i++) {
		op = &b->ops[i];
		if (op->kind != OP_INDEX && op->kind != OP_DELETE)
			continue;
		/* the index of the op before, known by now: a batch's
		 * documents mostly go to one */
		ix = batch_span(b, op->index);
		if (last.p != NULL && ix.n == last.n &&
		    memcmp(ix.p, last.p, ix.n) == 0)
			continue;
		last = ix;
		if (jstr_copy(ix, name, sizeof(name)) == -1 ||
		    is_known(s, name))
			continue;
		sec = config_find_index(s->cfg, name);
		if (sec != NULL && (sec->index_templated ||
		    config_index_body(s->cfg, name) != NULL))
			return name;
		add_known(s, name);
	}
	return NULL;
}

/* the target answered: an outage is over */
static void
sink_up(struct sink *s)
{
	if (s->down_since)
		log_info("target available again after %llds",
		    (now_ms() - s->down_since + 500) / 1000);
	s->down_since = 0;
}

/* a transient failure: say so on the first one and then once a minute,
 * however many requests are failing */
static enum step_result
sink_down(struct sink *s)
{
	long long now = now_ms();

	s->stats->sink_errors++;
	if (!s->down_since) {
		s->down_since = now;
		s->down_logged = now;
		log_warnx("target '%s' unavailable: %s; retrying", s->target,
		    s->err.msg);
	} else if (now - s->down_logged >= DOWN_LOG_EVERY_MS) {
		s->down_logged = now;
		log_warnx("target unavailable for %llds: %s; still retrying",
		    (now - s->down_since) / 1000, s->err.msg);
	}
	return STEP_WAIT;
}

/* why the last step failed, for a message and an exit */
static void
sink_why(struct sink *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sink_why(struct sink *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p2o_vfail(&s->err, P2O_EXIT_TEMPFAIL, fmt, ap);
	va_end(ap);
}

/* why: the target's words */
static enum step_result
sink_auth(struct sink *s, long status, const char *why)
{
	p2o_fail(&s->err, P2O_EXIT_AUTH, "target refused our credentials "
	    "(HTTP %ld): %.400s", status, why);
	return STEP_END;
}

/* the target refused what the flush asks (not a failure to answer): the
 * flush holds everything behind it until the target takes it */
static void
halt(struct sink *s, struct flush *fl)
{
	if (!fl->halted)
		s->stats->halted++;
	fl->halted = 1;
	fl->refused = 1;
}

/* a refusal is logged once per distinct text for the flush, not per retry */
static int
first_time(struct flush *fl, const char *a, const char *b)
{
	uint32_t h = hash_bytes(hash_bytes(HASH_INIT, a, strlen(a)), b,
	    strlen(b));
	int i;

	for (i = 0; i < fl->nlogged; i++)
		if (fl->logged[i] == h)
			return 0;
	if (fl->nlogged < (int)(sizeof(fl->logged) / sizeof(fl->logged[0])))
		fl->logged[fl->nlogged++] = h;
	else
		return 0;
	return 1;
}

void
sink_probe_call(struct sink *s, struct http_call *call)
{
	s->tm->ops->probe_call(call);
}

/* the probe failed: retried, unless a limit says it is over */
static enum step_result
probe_failed(struct sink *s)
{
	sink_down(s);
	if (sink_retry_limit(s, &s->probe_attempts, &s->probe_failing_since,
	    now_ms(), "the probe of the target"))
		return STEP_END;
	return STEP_WAIT;
}

enum step_result
sink_probe_answer(struct sink *s, const char *terr, long status)
{
	char why[256];

	if (terr) {
		sink_why(s, "%s", terr);
		return probe_failed(s);
	}
	switch (s->tm->ops->probe_answer(status, &s->probe_resp, s->node,
	    sizeof(s->node), why, sizeof(why))) {
	case TA_OK:
		sink_up(s);
		s->probe_attempts = 0;
		log_debug("the target is %s", s->node);
		return STEP_DONE;
	case TA_AUTH:
		return sink_auth(s, status, why);
	case TA_REFUSED:
		/* another engine than configured: no retry makes it one */
		p2o_fail(&s->err, P2O_EXIT_CONFIG, "target '%s': %s",
		    s->target, why);
		return STEP_END;
	default:
		sink_why(s, "HTTP %ld: %s", status, why);
		return probe_failed(s);
	}
}

enum step_result
sink_start_answer(struct sink *s, const char *terr, long status)
{
	char why[400];

	if (terr) {
		sink_why(s, "%s", terr);
		return sink_down(s);
	}
	switch (quarantine_start_answer(s, status, why, sizeof(why))) {
	case TA_OK:
		sink_up(s);
		return STEP_DONE;
	case TA_NEXT:
		sink_up(s);
		return STEP_NEXT;
	case TA_AUTH:
		return sink_auth(s, status, why);
	default:
		sink_why(s, "%s (HTTP %ld): %s", s->tm->rejects_place, status,
		    why);
		return sink_down(s);
	}
}

void
flush_init(struct flush *fl)
{
	memset(fl, 0, sizeof(*fl));
	batch_init(&fl->b, NULL, 1, 1);
	sbuf_init(&fl->body);
	sbuf_init(&fl->path);
	sbuf_init(&fl->resp);
	target_proc_init(&fl->proc);
}

void
flush_begin(struct flush *fl, uint64_t seq)
{
	int n = fl->b.nops;

	if (fl->arr.room < n) {
		fl->arr.room = n;
		fl->arr.sent = xrealloc(fl->arr.sent, n * sizeof(*fl->arr.sent));
	}
	fl->seq = seq;
	fl->phase = PH_CREATE;
	fl->inflight = 0;
	fl->retry_at = 0;
	fl->poll_at = 0;
	fl->tasking = 0;
	fl->refused = 0;
	fl->backoff_ms = 0;
	fl->started_us = 0;
	fl->nasked = fl->nsent = 0;
	fl->nlogged = 0;
}

void
flush_room(struct flush *fl)
{
	int n = fl->b.nops;

	if (fl->arr.troom >= n)
		return;
	fl->arr.troom = n;
	fl->arr.from = xrealloc(fl->arr.from, n * sizeof(*fl->arr.from));
	/* a move may read two documents */
	fl->arr.refs = xrealloc(fl->arr.refs, 2 * n * sizeof(*fl->arr.refs));
	fl->arr.asked = xrealloc(fl->arr.asked, 2 * n * sizeof(*fl->arr.asked));
}

static void
arrays_free(struct flush_arrays *a)
{
	free(a->from);
	free(a->refs);
	free(a->asked);
	free(a->sent);
	memset(a, 0, sizeof(*a));
}

/* the sink's verdicts for an answer about n entries */
static struct item_result *
answer_items(struct sink *s, int n)
{
	if (s->nitems < n) {
		s->nitems = n;
		s->items = xrealloc(s->items, n * sizeof(*s->items));
	}
	return s->items;
}

void
flush_keep(struct flush *fl, struct flush_spare *sp)
{
	sp->arena = fl->b.arena;
	sbuf_init(&fl->b.arena);
	sp->arr = fl->arr;
	memset(&fl->arr, 0, sizeof(fl->arr));
	sp->resp = fl->resp;
	sbuf_init(&fl->resp);
}

void
flush_reuse(struct flush *fl, struct flush_spare *sp)
{
	fl->b.arena = sp->arena;
	sbuf_reset(&fl->b.arena);
	fl->arr = sp->arr;
	sbuf_release(&fl->resp);
	fl->resp = sp->resp;
	sbuf_reset(&fl->resp);
	memset(sp, 0, sizeof(*sp));
}

void
flush_spare_release(struct flush_spare *sp)
{
	sbuf_release(&sp->arena);
	arrays_free(&sp->arr);
	sbuf_release(&sp->resp);
}

/* a procedure's buffers freed, not only emptied: a write procedure's
 * plan and task body hold about as much as its flush's operations, and
 * slots outnumber the flushes under way (twice, WINDOW_SLOTS) */
static void
proc_free(struct target_proc *p)
{
	target_proc_release(p);
	target_proc_init(p);
}

void
flush_reset(struct flush *fl)
{
	/* nothing stays for the next cut in this slot: a window has twice
	 * as many slots as flushes it writes at once, and an idle slot
	 * holding its last body, op array, item results or response would
	 * double the writer's memory (the batch grows a new arena as it
	 * reads, and flush_begin sizes the arrays to the next cut); the
	 * window keeps a few for the next flushes (flush_keep) */
	batch_release(&fl->b);
	arrays_free(&fl->arr);
	sbuf_release(&fl->body);
	sbuf_release(&fl->resp);
	fl->phase = PH_DONE;
	fl->inflight = 0;
	fl->retry_at = 0;
	fl->poll_at = 0;
	fl->tasking = 0;
	proc_free(&fl->proc);
}

void
flush_release(struct flush *fl)
{
	flush_reset(fl);
	sbuf_release(&fl->path);
	target_proc_release(&fl->proc);
	free(fl->creating);
	memset(fl, 0, sizeof(*fl));
}

void
op_name(const struct batch *b, const struct op *op, char *buf, size_t len)
{
	char index[256], id[512];

	if (jstr_copy(batch_span(b, op->index), index, sizeof(index)) == -1)
		snprintf(index, sizeof(index), "(long name)");
	if (jstr_copy(batch_span(b, op->id), id, sizeof(id)) == -1)
		snprintf(id, sizeof(id), "(long id)");
	snprintf(buf, len, "%s/%s", index, id);
}

/*
 * A fill: source is the head's last write (completed, or stored), and the
 * fields it lacks are taken from the late copy the fill carries. The
 * result is written at the fill's version, the head's last write's, so
 * it replaces that write and loses to any newer one. With nothing to
 * fill (the head has every field, or is gone) it is not written, and as
 * a source it is the head as it was.
 */
static int
fill_one(struct sink *s, const struct batch *b, struct op *op,
    struct jspan source)
{
	struct sbuf out = SBUF_INIT;
	struct jspan fields = { op->toast, strlen(op->toast) };
	char name[800];
	int n;

	if (!source.p) {
		op->completed = xstrdup("");
		op->completed_len = 0;
		op->written = 1;
		return 0;
	}
	if ((n = toast_complete(&out, source, fields, batch_span(b, op->doc)))
	    == -1) {
		sink_why(s, "stored document is not an object");
		sbuf_release(&out);
		return -1;
	}
	if (n == 0)
		op->written = 1;
	else {
		op_name(b, op, name, sizeof(name));
		log_info("document '%s' lacked unchanged TOAST fields %s: "
		    "filled from a late copy", name, op->toast);
		s->stats->toast_completions++;
	}
	op->completed = out.buf ? out.buf : xstrdup("");
	op->completed_len = out.len;
	return 0;
}

/* op's document with its unchanged fields copied from source */
static int
complete_one(struct sink *s, const struct batch *b, struct op *op,
    struct jspan source)
{
	struct sbuf out = SBUF_INIT;
	struct jspan fields;
	char name[800];

	if (op->fill)
		return fill_one(s, b, op, source);
	fields.p = op->toast;
	fields.n = strlen(op->toast);
	if (toast_complete(&out, batch_span(b, op->doc), fields, source)
	    == -1) {
		sink_why(s, "stored document is not an object");
		sbuf_release(&out);
		return -1;
	}
	if (!source.p) {
		op_name(b, op, name, sizeof(name));
		log_warnx("document '%s' has unchanged TOAST fields %s but no "
		    "stored copy: written without them", name, op->toast);
		kcount_add(&s->stats->toast_missing, op->rel ? op->rel : "",
		    op->rel ? strlen(op->rel) : 0, 1);
	} else {
		/* one line an operator can grep for, then debug: a table
		 * with large columns reads back at every update */
		if (s->stats->toast_completions++ == 0) {
			op_name(b, op, name, sizeof(name));
			log_info("TOAST read-back: document '%s' completed from "
			    "its stored copy (unchanged fields %s); the next "
			    "ones are counted in pg2osync_toast_completions_total",
			    name, op->toast);
		} else if (log_level_enabled(LOG_LVL_DEBUG)) {
			op_name(b, op, name, sizeof(name));
			log_debug("TOAST read-back: document '%s' completed "
			    "(%s)", name, op->toast);
		}
	}
	op->completed = out.buf ? out.buf : xstrdup("");
	op->completed_len = out.len;
	return 0;
}

/*
 * Complete the ops whose source is ready. The first pass (found == NULL,
 * earlier == 1) copies from earlier flushes at once, because those may be
 * retired while this flush's read is out. The second completes the rest
 * in batch order, so an op completed from an earlier one of the same flush
 * sees that one's completed document; found[] are the read's answers in
 * the order asked.
 */
static int
complete_pass(struct sink *s, struct flush *fl, int earlier,
    const struct jspan *found)
{
	struct batch *b = &fl->b;
	const struct toast_from *src;
	struct jspan none = { NULL, 0 }, source;
	struct op *op;
	int i, k = 0;

	for (i = 0; i < b->nops; i++) {
		op = &b->ops[i];
		if (toast_settled(op))
			continue;
		src = &fl->arr.from[i];
		if (earlier && (src->b == NULL || src->b == b))
			continue;
		if (src->b == NULL) {
			/* where it was, then (a move) its own document */
			source = none;
			for (; found && k < fl->nasked && fl->arr.asked[k] == i;
			    k++)
				if (!source.p)
					source = found[k];
		} else
			source = toast_source(src->b, &src->b->ops[src->i]);
		if (complete_one(s, b, op, source) == -1)
			return -1;
	}
	return 0;
}

static void count_item(struct sink *, const struct item_result *);
static enum step_result quarantine_begin(struct sink *, struct flush *,
    int nreject);

/* the clear or cascade a flush ends in, or NULL */
static const struct op *
barrier_op(const struct flush *fl)
{
	const struct op *op;

	if (fl->b.nops == 0)
		return NULL;
	op = &fl->b.ops[fl->b.nops - 1];
	return op->kind == OP_CLEAR || op->kind == OP_CASCADE ? op : NULL;
}

static struct jspan
raw(const char *s)
{
	struct jspan j = { s, s ? strlen(s) : 0 };

	return j;
}

/* the barrier as the target module's procedure */
static void
barrier_begin(struct flush *fl)
{
	const struct op *op = barrier_op(fl);
	struct target_proc *p = &fl->proc;

	target_proc_reset(p);
	p->kind = op->kind == OP_CLEAR ? PROC_CLEAR : PROC_CASCADE;
	p->index = op->text;
	p->field = raw(op->bar->field);
	p->value = raw(op->bar->value);
	p->children = raw(op->bar->children);
	p->parent = op->bar->parent;
	p->parent_id = raw(op->bar->parent_id);
	p->version = op->v;
	fl->phase = PH_BARRIER;
}

/* after the writes: the barrier, if the flush ends in one */
static void
after_bulk(struct flush *fl)
{
	if (barrier_op(fl))
		barrier_begin(fl);
	else
		fl->phase = PH_DONE;
}

enum next_result
flush_next(struct sink *s, struct flush *fl, struct batch *const *earlier,
    int nearlier, struct http_call *call)
{
	const struct target_ops *ops = s->tm->ops;
	const char *body, *create;
	size_t len;
	int nread;

	for (;;) {
		switch (fl->phase) {
		case PH_CREATE:
			if ((create = index_to_create(s, &fl->b)) == NULL) {
				fl->phase = toast_needed(&fl->b, fl->b.nops) ?
				    PH_TOAST : PH_BULK;
				continue;
			}
			free(fl->creating);
			fl->creating = xstrdup(create);
			ops->create_call(fl->creating,
			    config_index_body(s->cfg, fl->creating), &fl->path,
			    call);
			return NEXT_SEND;
		case PH_TOAST:
			flush_room(fl);
			nread = toast_plan(&fl->b, fl->b.nops, earlier,
			    nearlier, fl->arr.from);
			if (nread == -1)
				return NEXT_BLOCKED;
			if (complete_pass(s, fl, 1, NULL) == -1)
				return NEXT_FAILED;
			if (nread == 0) {
				if (complete_pass(s, fl, 0, NULL) == -1)
					return NEXT_FAILED;
				fl->phase = PH_BULK;
				continue;
			}
			fl->nasked = toast_refs(&fl->b, fl->b.nops, fl->arr.from,
			    fl->arr.refs, fl->arr.asked);
			ops->read_call(fl->arr.refs, fl->nasked, &fl->body, call);
			return NEXT_SEND;
		case PH_BULK:
			if (fl->tasking) {
				ops->write_call(&fl->proc, fl->task_body,
				    fl->task_len, call);
				return NEXT_SEND;
			}
			if ((fl->nsent = bulk_prefix(&fl->b, fl->b.nops, &body,
			    &len, fl->arr.sent)) == -1) {
				fl->nsent = bulk_body(&fl->b, fl->b.nops,
				    &fl->body, fl->arr.sent);
				body = fl->body.buf;
				len = fl->body.len;
			}
			if (fl->nsent == 0) {
				after_bulk(fl);
				continue;
			}
			fl->sent_len = len;
			if (ops->write_call != NULL) {
				/* writes that are tasks: a procedure over
				 * this body, which stays as it is until
				 * the procedure ends */
				target_proc_reset(&fl->proc);
				fl->tasking = 1;
				fl->task_body = body;
				fl->task_len = len;
				ops->write_call(&fl->proc, body, len, call);
				return NEXT_SEND;
			}
			ops->bulk_call(body, len, call);
			return NEXT_SEND;
		case PH_REJECTS:
			quarantine_call(s, fl, call);
			return NEXT_SEND;
		case PH_BARRIER:
			ops->proc_call(&fl->proc, call);
			return NEXT_SEND;
		case PH_DONE:
		default:
			return NEXT_DONE;
		}
	}
}

static enum step_result
answer_create(struct sink *s, struct flush *fl, long status)
{
	char why[400];

	switch (s->tm->ops->create_answer(status, &fl->resp, why,
	    sizeof(why))) {
	case TA_OK:
		s->stats->indices_created++;
		log_info("created index '%s'", fl->creating);
		/* FALLTHROUGH */
	case TA_EXISTS:
		/* or another writer, or an earlier run, created it first */
		add_known(s, fl->creating);
		sink_up(s);
		return STEP_NEXT;
	case TA_AUTH:
		return sink_auth(s, status, why);
	case TA_REFUSED:
		s->stats->sink_errors++;
		sink_up(s);
		sink_why(s, "creating index '%s' refused (HTTP %ld): %s",
		    fl->creating, status, why);
		halt(s, fl);
		if (first_time(fl, "create", why))
			log_error("%s; retrying until the target accepts it",
			    s->err.msg);
		return STEP_WAIT;
	default:
		sink_why(s, "creating index '%s' failed (HTTP %ld): %s",
		    fl->creating, status, why);
		return sink_down(s);
	}
}

/* a barrier's request answered: the procedure goes on, is done, or
 * waits */
static enum step_result
answer_barrier(struct sink *s, struct flush *fl, long status)
{
	struct target_proc *p = &fl->proc;
	enum target_answer a;
	char why[512];
	int i;

	a = s->tm->ops->proc_answer(p, status, &fl->resp, why, sizeof(why));
	if (p->page_done) {
		/* a page of a barrier's deletes was written */
		s->stats->batches++;
		s->stats->bulk_bytes += p->page_bytes;
		for (i = 0; i < p->page_done; i++)
			count_item(s, &p->items[i]);
		p->page_done = 0;
	}
	switch (a) {
	case TA_OK:
		sink_up(s);
		if (p->kind == PROC_CASCADE)
			s->stats->cascades++;
		else {
			if (!p->gone && p->newer)
				log_info("cleared index '%s': %llu deleted, %llu "
				    "written after the truncate kept", p->index,
				    (unsigned long long)p->deleted,
				    (unsigned long long)p->newer);
			else if (!p->gone)
				log_info("cleared index '%s': %llu deleted",
				    p->index, (unsigned long long)p->deleted);
			s->stats->clears++;
		}
		fl->phase = PH_DONE;
		return STEP_DONE;
	case TA_NEXT:
	case TA_EXISTS:
		sink_up(s);
		return STEP_NEXT;
	case TA_AUTH:
		return sink_auth(s, status, why);
	case TA_REFUSED:
		s->stats->sink_errors++;
		sink_why(s, "%s", why);
		halt(s, fl);
		if (first_time(fl, "barrier", why))
			log_error("%s; retrying", s->err.msg);
		return STEP_WAIT;
	default:
		sink_why(s, "%s", why);
		return sink_down(s);
	}
}

static enum step_result
answer_toast(struct sink *s, struct flush *fl, long status)
{
	struct jspan *found;
	char why[512];
	int r;

	found = xcalloc(fl->nasked ? fl->nasked : 1, sizeof(*found));
	switch (s->tm->ops->read_answer(status, &fl->resp, fl->nasked, found,
	    why, sizeof(why))) {
	case TA_OK:
		break;
	case TA_AUTH:
		free(found);
		return sink_auth(s, status, why);
	default:
		free(found);
		sink_why(s, "%s", why);
		return sink_down(s);
	}
	/* a stored document we cannot read is not a missing one: the ops
	 * not completed yet are asked again */
	r = complete_pass(s, fl, 0, found);
	free(found);
	if (r == -1)
		return sink_down(s);
	sink_up(s);
	fl->phase = PH_BULK;
	return STEP_NEXT;
}

static void
count_item(struct sink *s, const struct item_result *it)
{
	switch (it->verdict) {
	case ITEM_OK:
	case ITEM_NOTFOUND:
		if (it->del)
			s->stats->docs_deleted++;
		else
			s->stats->docs_indexed++;
		break;
	case ITEM_CONFLICT:
		s->stats->version_conflicts++;
		break;
	default:
		break;
	}
}

/* a later write of the same document in the flush is accepted: sending
 * op i again would put back an older state (with one version for both,
 * the target would let it) */
static int
superseded(struct batch *b, int i)
{
	struct docref r = docref_of(b, &b->ops[i], 0), rj;
	int j = batch_last_write(b, &r);

	if (j <= i || !b->ops[j].written)
		return 0;
	/* the later write went to another routing, maybe another shard:
	 * this one is still owed, and the later one goes again after it */
	rj = docref_of(b, &b->ops[j], 0);
	if (!docref_same_routing(&r, &rj)) {
		b->ops[j].written = 0;
		return 0;
	}
	return 1;
}

static enum step_result
answer_bulk(struct sink *s, struct flush *fl, long status)
{
	struct batch *b = &fl->b;
	struct item_result *items;
	const struct item_result *it;
	struct op *op;
	char name[800], why[512];
	int i, first = 0, nretry = 0, nreject = 0;

	enum target_answer a;

	items = answer_items(s, fl->nsent);
	if (fl->tasking) {
		a = s->tm->ops->write_answer(&fl->proc, status, &fl->resp,
		    fl->task_body, fl->task_len, fl->nsent, items, why,
		    sizeof(why));
		if (a == TA_NEXT) {
			sink_up(s);
			return STEP_NEXT;
		}
		/* a failed request is asked again where the procedure is;
		 * an ended one is started afresh for what is left, and
		 * what it planned is not kept while the flush waits to be
		 * reported */
		if (a == TA_OK) {
			fl->tasking = 0;
			proc_free(&fl->proc);
		}
	} else
		a = s->tm->ops->bulk_answer(status, fl->resp.buf, fl->resp.len,
		    fl->nsent, items, why, sizeof(why));
	if (a == TA_OK || !fl->tasking)
		s->stats->bulk_bytes += fl->sent_len;
	switch (a) {
	case TA_AUTH:
		return sink_auth(s, status, why);
	case TA_REFUSED:
		s->stats->sink_errors++;
		sink_up(s);
		sink_why(s, "bulk request refused (HTTP %ld): %.400s", status,
		    why);
		halt(s, fl);
		if (first_time(fl, "request", why))
			log_error("%s; retrying until the target accepts it",
			    s->err.msg);
		return STEP_WAIT;
	case TA_OK:
		break;
	default:
		sink_why(s, "bulk request failed (HTTP %ld): %.400s", status,
		    why);
		return sink_down(s);
	}
	s->stats->batches++;
	for (i = 0; i < fl->nsent; i++) {
		it = &items[i];
		count_item(s, it);
		if (it->verdict == ITEM_OK || it->verdict == ITEM_CONFLICT ||
		    it->verdict == ITEM_NOTFOUND)
			b->ops[fl->arr.sent[i]].written = 1;
	}
	for (i = 0; i < fl->nsent; i++) {
		it = &items[i];
		op = &b->ops[fl->arr.sent[i]];
		if (op->written)
			continue;
		if (superseded(b, fl->arr.sent[i])) {
			op->written = 1;
			continue;
		}
		if (it->verdict == ITEM_RETRY) {
			if (nretry++ == 0)
				first = i;
		} else {
			nreject++;
			s->stats->doc_refusals++;
			if (s->quarantine)
				quarantine_note(op, it);
			op_name(b, op, name, sizeof(name));
			if (first_time(fl, name, it->type))
				log_error("document '%s' refused: %s: %s",
				    name, it->type[0] ? it->type : "error",
				    it->reason);
		}
	}
	if (nretry == 0 && nreject == 0) {
		sink_up(s);
		if (fl->nlogged)
			log_info("the target accepted the refused "
			    "documents: resuming");
		after_bulk(fl);
		return fl->phase == PH_DONE ? STEP_DONE : STEP_NEXT;
	}
	if (nreject && nretry == 0 && s->quarantine)
		return quarantine_begin(s, fl, nreject);
	if (nreject) {
		/* halting is making no progress, not exiting: a mapping fix
		 * lets the retry through */
		s->stats->sink_errors++;
		sink_up(s);
		sink_why(s, "%d document%s refused, %d to retry", nreject,
		    nreject == 1 ? "" : "s", nretry);
		halt(s, fl);
		if (first_time(fl, "halt", ""))
			log_error("halting: nothing past a refused document "
			    "is acknowledged; retrying it until the target "
			    "accepts it");
		return STEP_WAIT;
	}
	sink_why(s, "%d of %d bulk items not accepted yet (HTTP %d): %s: %s",
	    nretry, fl->nsent, items[first].status,
	    items[first].type[0] ? items[first].type : "error",
	    items[first].reason);
	return sink_down(s);
}

/*
 * engine.on_permanent_rejection: quarantine, the refused documents of a
 * flush that fit under engine.max_rejects are recorded next (PH_REJECTS);
 * with no room left it halts as without a quarantine, naming the limit.
 */
static enum step_result
quarantine_begin(struct sink *s, struct flush *fl, int nreject)
{
	if (quarantine_take(s, fl) > 0) {
		sink_up(s);
		fl->phase = PH_REJECTS;
		return STEP_NEXT;
	}
	s->stats->sink_errors++;
	sink_up(s);
	sink_why(s, "%d document%s refused and engine.max_rejects (%d) "
	    "reached", nreject, nreject == 1 ? "" : "s", s->max_rejects);
	if (first_time(fl, "limit", ""))
		log_error("halting: engine.max_rejects (%d) reached: %s "
		    "holds as many refused documents; nothing past this one "
		    "is acknowledged until the target accepts it (see "
		    "pg2osync rejects)", s->max_rejects,
		    s->tm->rejects_place);
	return STEP_WAIT;
}

/* the refused documents are recorded: the flush goes on with what is
 * left (those the bound did not let in are sent again, and halt) */
static enum step_result
answer_rejects(struct sink *s, struct flush *fl, long status)
{
	char why[512];

	switch (quarantine_answer(s, fl, status, why, sizeof(why))) {
	case TA_OK:
		sink_up(s);
		if (quarantine_unwritten(fl)) {
			fl->phase = PH_BULK;
			return STEP_NEXT;
		}
		after_bulk(fl);
		return fl->phase == PH_DONE ? STEP_DONE : STEP_NEXT;
	case TA_AUTH:
		return sink_auth(s, status, why);
	default:
		/* not recorded: not acknowledged either, and tried again */
		sink_why(s, "recording refused documents in %s failed (HTTP "
		    "%ld): %s", s->tm->rejects_place, status, why);
		return sink_down(s);
	}
}

enum step_result
flush_answer(struct sink *s, struct flush *fl, const char *terr, long status)
{
	if (!fl->resp.buf)
		sbuf_grow(&fl->resp, 1);
	/* held by a refusal until an answer says otherwise */
	if (fl->halted) {
		fl->halted = 0;
		s->stats->halted--;
	}
	if (terr) {
		sink_why(s, "%s", terr);
		return sink_down(s);
	}
	switch (fl->phase) {
	case PH_CREATE:
		return answer_create(s, fl, status);
	case PH_TOAST:
		return answer_toast(s, fl, status);
	case PH_BULK:
		return answer_bulk(s, fl, status);
	case PH_REJECTS:
		return answer_rejects(s, fl, status);
	case PH_BARRIER:
		return answer_barrier(s, fl, status);
	default:
		return STEP_DONE;
	}
}
