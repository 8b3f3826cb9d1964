/*
 * quarantine.c - engine.on_permanent_rejection: quarantine. A document the
 * target refuses is recorded in the target's rejects store (lib/target.h,
 * struct target_rejects_ops) and then counts as written, so the position
 * that covers it can be acknowledged and the rows after it land. The
 * record is written before that: the flush holding the refused document
 * is not complete (and so not reported) until the store has it, and a
 * store that cannot take it holds the flush back like any failed request.
 *
 * The store is bounded by engine.max_rejects, counted from what it holds
 * when the writer starts (so that a crash loop refusing the same rows
 * cannot reset it) plus what this writer recorded since; a refusal past
 * the bound halts as on_permanent_rejection: halt does, naming the limit.
 * A record kept again after a crash (the same document at the same
 * version) replaces its first copy in the store but is counted again
 * here: the count errs towards halting early, and the next start counts
 * the store itself.
 *
 * Pure: builds the requests through the module and reads the answers;
 * sink.c makes them steps of a flush.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "xio.h"
#include "writer.h"

int
quarantine_init(struct sink *s, struct p2o_err *err)
{
	struct source_ident id;
	char why[256];

	s->quarantine = s->cfg != NULL && config_quarantine(s->cfg);
	s->max_rejects = s->cfg ? s->cfg->max_rejects : 0;
	/* without a quarantine nothing needs counting before the start */
	s->q_step = s->quarantine ? Q_PREPARE : Q_READY;
	if (!s->quarantine)
		return 0;
	if (s->tm->rejects == NULL)
		return p2o_fail(err, P2O_EXIT_CONFIG, "target '%s' keeps no "
		    "refused documents: engine.on_permanent_rejection: "
		    "quarantine cannot be", s->tm->name);
	/* the records are the stream's, as its checkpoint is */
	if (source_ident_init(&id, s->cfg, why, sizeof(why)) == -1)
		return p2o_fail(err, P2O_EXIT_CONFIG, "%s", why);
	s->stream = xstrdup(id.doc_id);
	source_ident_release(&id);
	return 0;
}

int
quarantine_start_call(struct sink *s, struct sbuf *buf,
    struct http_call *call)
{
	switch (s->q_step) {
	case Q_PREPARE:
		s->tm->rejects->prepare_call(buf, call);
		return 1;
	case Q_COUNT:
		s->tm->rejects->count_call(s->stream, buf, call);
		return 1;
	default:
		return 0;
	}
}

enum target_answer
quarantine_start_answer(struct sink *s, long status, char *why,
    size_t whylen)
{
	enum target_answer a;
	uint64_t n;

	if (s->q_step == Q_PREPARE) {
		a = s->tm->ops->create_answer(status, &s->probe_resp, why,
		    whylen);
		if (a == TA_OK)
			log_info("created %s", s->tm->rejects_place);
		if (a == TA_OK || a == TA_EXISTS) {
			s->q_step = Q_COUNT;
			return TA_NEXT;
		}
		return a;
	}
	a = s->tm->rejects->count_answer(status, &s->probe_resp, &n, why,
	    whylen);
	if (a != TA_OK)
		return a;
	s->rejects_held = n;
	s->q_step = Q_READY;
	if (n > 0)
		log_warnx("%llu refused document%s in %s (engine.max_rejects "
		    "%d): see pg2osync rejects", (unsigned long long)n,
		    n == 1 ? "" : "s", s->tm->rejects_place, s->max_rejects);
	return TA_OK;
}

void
quarantine_note(struct op *op, const struct item_result *it)
{
	char buf[sizeof(it->type) + sizeof(it->reason) + 4];

	snprintf(buf, sizeof(buf), "%s: %s", it->type[0] ? it->type :
	    "error", it->reason);
	free(op->refusal);
	op->refusal = xstrdup(buf);
}

int
quarantine_take(struct sink *s, struct flush *fl)
{
	struct batch *b = &fl->b;
	struct op *op;
	int i, n = 0;

	for (i = 0; i < b->nops; i++) {
		op = &b->ops[i];
		if (op->written || op->refusal == NULL ||
		    (op->kind != OP_INDEX && op->kind != OP_DELETE))
			continue;
		if (s->rejects_held >= (uint64_t)s->max_rejects) {
			/* past the bound: halting, it is sent again */
			free(op->refusal);
			op->refusal = NULL;
			continue;
		}
		/* counted when taken: flushes open at once share the room */
		s->rejects_held++;
		n++;
	}
	return n;
}

/* the position of the first boundary after op i: what acknowledging it
 * would acknowledge (NULL when the transaction goes on in a later flush) */
static const char *
covering(const struct batch *b, int i)
{
	for (i++; i < b->nops; i++)
		if (b->ops[i].kind == OP_COMMIT || b->ops[i].kind == OP_POS)
			return b->ops[i].text;
	return NULL;
}

/* the source table of an index, for the record and the counter */
static const char *
table_of(const struct sink *s, const struct batch *b, const struct op *op)
{
	const struct sync_section *sec;
	char index[512];

	if (s->cfg == NULL || jstr_copy(batch_span(b, op->index), index,
	    sizeof(index)) == -1 ||
	    (sec = config_find_index(s->cfg, index)) == NULL)
		return NULL;
	return sec->rel;
}

static struct jspan
span_or_none(const struct batch *b, struct aspan a)
{
	struct jspan none = { NULL, 0 };

	return a.len ? batch_span(b, a) : none;
}

void
quarantine_call(struct sink *s, struct flush *fl, struct http_call *call)
{
	struct batch *b = &fl->b;
	struct target_reject *r;
	struct op *op;
	int i, n = 0;

	flush_room(fl);
	r = xcalloc(b->nops ? (size_t)b->nops : 1, sizeof(*r));
	for (i = 0; i < b->nops; i++) {
		op = &b->ops[i];
		if (op->written || op->refusal == NULL)
			continue;
		r[n].del = op->kind == OP_DELETE;
		r[n].index = batch_span(b, op->index);
		r[n].id = batch_span(b, op->id);
		r[n].routing = span_or_none(b, op->routing);
		r[n].pipeline = span_or_none(b, op->pipeline);
		if (!r[n].del)
			r[n].doc = toast_source(b, op);
		r[n].version = op->v;
		r[n].position = covering(b, i);
		r[n].table = table_of(s, b, op);
		r[n].reason = op->refusal;
		r[n].stream = s->stream;
		fl->arr.asked[n++] = i;
	}
	fl->nasked = n;
	s->tm->rejects->call(r, n, &fl->body, call);
	free(r);
}

enum target_answer
quarantine_answer(struct sink *s, struct flush *fl, long status, char *why,
    size_t whylen)
{
	struct batch *b = &fl->b;
	enum target_answer a;
	const char *table;
	struct op *op;
	char name[800];
	int i;

	a = s->tm->rejects->answer(status, &fl->resp, fl->nasked, why,
	    whylen);
	if (a != TA_OK)
		return a;
	for (i = 0; i < fl->nasked; i++) {
		op = &b->ops[fl->arr.asked[i]];
		op_name(b, op, name, sizeof(name));
		log_warnx("document '%s' quarantined in %s (%llu of "
		    "engine.max_rejects %d): %s", name, s->tm->rejects_place,
		    (unsigned long long)s->rejects_held, s->max_rejects,
		    op->refusal);
		table = table_of(s, b, op);
		kcount_add(&s->stats->rejected, table ? table : "",
		    table ? strlen(table) : 0, 1);
		free(op->refusal);
		op->refusal = NULL;
		op->written = 1;
	}
	fl->nasked = 0;
	return TA_OK;
}

int
quarantine_unwritten(const struct flush *fl)
{
	int i;

	for (i = 0; i < fl->b.nops; i++)
		if ((fl->b.ops[i].kind == OP_INDEX ||
		    fl->b.ops[i].kind == OP_DELETE) && !fl->b.ops[i].written)
			return 1;
	return 0;
}
