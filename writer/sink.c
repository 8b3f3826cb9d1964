/*
 * sink.c - what one flush asks of the target and what the answers mean:
 * the creation of an index at its first use (with the body the
 * configuration gives it), the _mget behind TOAST completion, the _bulk
 * request and its retries (only of the items not yet written), a clear's
 * refresh and delete_by_query, and a cascade's refresh, search and
 * deletes (cascade.c). It decides what a response means for the flush and for
 * the counters, and logs what an operator must see. It performs no I/O (the
 * writer's loop makes the requests it asks for), never sleeps (the loop
 * waits out the backoff) and never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "xio.h"
#include "writer.h"

#define BACKOFF_FIRST_MS	100
#define BACKOFF_MAX_MS		30000
#define DOWN_LOG_EVERY_MS	60000
/* delete_by_query on a large index takes as long as it takes */
#define CLEAR_TIMEOUT_MS	(60L * 60 * 1000)

/* only what the classifier reads: the item status and error, not the
 * per-item metadata a large batch would otherwise send back */
#define BULK_PATH	"/_bulk?filter_path=errors,items.*.status," \
			"items.*.error.type,items.*.error.reason," \
			"error.type,error.reason"

long long
sink_backoff(long long *cur_ms)
{
	long long d;

	if (*cur_ms <= 0)
		*cur_ms = BACKOFF_FIRST_MS;
	else if (*cur_ms < BACKOFF_MAX_MS)
		*cur_ms = *cur_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
		    *cur_ms * 2;
	d = *cur_ms;
	/* jitter: somewhere in the upper half, so restarts do not align */
	return d / 2 + random() % (d / 2 + 1);
}

void
sink_init(struct sink *s, const char *target, struct writer_stats *st,
    const struct config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->target = target;
	s->stats = st;
	s->cfg = cfg;
	sbuf_init(&s->probe_resp);
}

void
sink_release(struct sink *s)
{
	int i;

	for (i = 0; i < s->nknown; i++)
		free(s->known[i]);
	free(s->known);
	sbuf_release(&s->probe_resp);
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
	int i;

	if (s->cfg == NULL)
		return NULL;
	for (i = 0; i < b->nops; i++) {
		op = &b->ops[i];
		if ((op->kind != OP_INDEX && op->kind != OP_DELETE) ||
		    jstr_copy(batch_span(b, op->index), name,
		    sizeof(name)) == -1 || is_known(s, name))
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
		    s->err);
	} else if (now - s->down_logged >= DOWN_LOG_EVERY_MS) {
		s->down_logged = now;
		log_warnx("target unavailable for %llds: %s; still retrying",
		    (now - s->down_since) / 1000, s->err);
	}
	return STEP_WAIT;
}

static enum step_result
sink_auth(struct sink *s, long status, const struct sbuf *resp)
{
	char why[256];

	resp_error_text(resp->buf, resp->len, why, sizeof(why));
	snprintf(s->err, sizeof(s->err), "target refused our credentials "
	    "(HTTP %ld): %.400s", status, why);
	return STEP_AUTH;
}

/* a refusal is logged once per distinct text for the flush, not per retry */
static int
first_time(struct flush *fl, const char *a, const char *b)
{
	uint32_t h = 2166136261u;
	const char *p;
	int i;

	for (p = a; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h = (h ^ 0xff) * 16777619u;
	for (p = b; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (i = 0; i < fl->nlogged; i++)
		if (fl->logged[i] == h)
			return 0;
	if (fl->nlogged < (int)(sizeof(fl->logged) / sizeof(fl->logged[0])))
		fl->logged[fl->nlogged++] = h;
	else
		return 0;
	return 1;
}

static void
set_call(struct http_call *call, const char *method, const char *path,
    const char *ctype, const char *body, size_t len)
{
	memset(call, 0, sizeof(*call));
	call->method = method;
	call->path = path;
	call->ctype = ctype;
	call->body = body;
	call->len = len;
}

void
sink_probe_call(struct http_call *call)
{
	set_call(call, "GET", "/", NULL, NULL, 0);
}

enum step_result
sink_probe_answer(struct sink *s, const char *terr, long status)
{
	char why[256];

	if (terr) {
		snprintf(s->err, sizeof(s->err), "%s", terr);
		return sink_down(s);
	}
	switch (resp_status_class(status)) {
	case RESP_ITEMS:
		sink_up(s);
		return STEP_DONE;
	case RESP_AUTH:
		return sink_auth(s, status, &s->probe_resp);
	default:
		resp_error_text(s->probe_resp.buf, s->probe_resp.len, why,
		    sizeof(why));
		snprintf(s->err, sizeof(s->err), "HTTP %ld: %s", status, why);
		return sink_down(s);
	}
}

void
flush_init(struct flush *fl)
{
	memset(fl, 0, sizeof(*fl));
	batch_init(&fl->b, 1, 1);
	sbuf_init(&fl->body);
	sbuf_init(&fl->path);
	sbuf_init(&fl->resp);
}

void
flush_begin(struct flush *fl, uint64_t seq)
{
	int n = fl->b.nops;

	if (fl->room < n) {
		fl->room = n;
		fl->from = xrealloc(fl->from, n * sizeof(*fl->from));
		fl->asked = xrealloc(fl->asked, n * sizeof(*fl->asked));
		fl->sent = xrealloc(fl->sent, n * sizeof(*fl->sent));
		fl->items = xrealloc(fl->items, n * sizeof(*fl->items));
	}
	fl->seq = seq;
	fl->phase = PH_CREATE;
	fl->inflight = 0;
	fl->retry_at = 0;
	fl->backoff_ms = 0;
	fl->started_us = 0;
	fl->nasked = fl->nsent = 0;
	fl->nlogged = 0;
}

void
flush_reset(struct flush *fl)
{
	/* the arena and the op array stay for the next cut in this slot */
	batch_consume(&fl->b, fl->b.nops);
	fl->phase = PH_DONE;
	fl->inflight = 0;
	fl->retry_at = 0;
	/* a rebuilt body (a retry, completed documents) is the exception:
	 * the memory of the next flush in this slot is its arena */
	sbuf_release(&fl->body);
	sbuf_reset(&fl->resp);
}

void
flush_release(struct flush *fl)
{
	batch_release(&fl->b);
	free(fl->from);
	free(fl->asked);
	free(fl->sent);
	free(fl->items);
	sbuf_release(&fl->body);
	sbuf_release(&fl->path);
	sbuf_release(&fl->resp);
	sbuf_release(&fl->scroll);
	free(fl->hits);
	free(fl->creating);
	memset(fl, 0, sizeof(*fl));
}

static void
name_of(const struct batch *b, const struct op *op, char *buf, size_t len)
{
	char index[256], id[512];

	if (jstr_copy(batch_span(b, op->index), index, sizeof(index)) == -1)
		snprintf(index, sizeof(index), "(long name)");
	if (jstr_copy(batch_span(b, op->id), id, sizeof(id)) == -1)
		snprintf(id, sizeof(id), "(long id)");
	snprintf(buf, len, "%s/%s", index, id);
}

/* op's document with its unchanged fields copied from source */
static int
complete_one(struct sink *s, const struct batch *b, struct op *op,
    struct jspan source)
{
	struct sbuf out = SBUF_INIT;
	struct jspan fields;
	char name[800];

	fields.p = op->toast;
	fields.n = strlen(op->toast);
	if (toast_complete(&out, batch_span(b, op->doc), fields, source)
	    == -1) {
		snprintf(s->err, sizeof(s->err), "stored document is not an "
		    "object");
		sbuf_release(&out);
		return -1;
	}
	if (!source.p) {
		name_of(b, op, name, sizeof(name));
		log_warnx("document '%s' has unchanged TOAST fields %s but no "
		    "stored copy: written without them", name, op->toast);
		kcount_add(&s->stats->toast_missing, op->rel ? op->rel : "",
		    op->rel ? strlen(op->rel) : 0, 1);
	} else
		s->stats->toast_completions++;
	op->completed = out.buf ? out.buf : xstrdup("");
	op->completed_len = out.len;
	return 0;
}

/*
 * Complete the ops whose source is ready. The first pass (found == NULL,
 * earlier == 1) copies from earlier flushes at once, because those may be
 * retired while this flush's _mget is out. The second completes the rest
 * in batch order, so an op completed from an earlier one of the same flush
 * sees that one's completed document; found[] are the _mget's answers in
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
		src = &fl->from[i];
		if (earlier && (src->b == NULL || src->b == b))
			continue;
		if (src->b == NULL)
			source = found && k < fl->nasked &&
			    fl->asked[k] == i ? found[k++] : none;
		else
			source = toast_source(src->b, &src->b->ops[src->i]);
		if (complete_one(s, b, op, source) == -1)
			return -1;
	}
	return 0;
}

/* the first attempt of a flush without completions is the arena itself */
static int
arena_prefix(struct flush *fl, const char **body, size_t *len)
{
	const struct batch *b = &fl->b;
	const struct op *op;
	size_t start = 0, end = 0;
	int i, nsent = 0;

	for (i = 0; i < b->nops; i++) {
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
		fl->sent[nsent++] = i;
	}
	/* a flush of positions and marks alone may have no arena */
	*body = nsent ? b->arena.buf + start : NULL;
	*len = end - start;
	return nsent;
}

void
url_escape(struct sbuf *out, const char *s, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		    *p == '.' || *p == '*' || (*p && strchr(keep, *p)))
			sbuf_addc(out, (char)*p);
		else {
			sbuf_addc(out, '%');
			sbuf_addc(out, hex[*p >> 4]);
			sbuf_addc(out, hex[*p & 15]);
		}
	}
}

static void count_item(struct sink *, const struct item_result *);

static const struct op *
barrier_op(const struct flush *fl)
{
	const struct op *op;

	if (fl->b.nops == 0)
		return NULL;
	op = &fl->b.ops[fl->b.nops - 1];
	return op->kind == OP_CLEAR || op->kind == OP_CASCADE ? op : NULL;
}

static int
ends_in_clear(const struct flush *fl)
{
	return barrier_op(fl) != NULL;
}

static const char *
clear_index(const struct flush *fl)
{
	return barrier_op(fl)->text;
}

static int
ends_in_cascade(const struct flush *fl)
{
	return barrier_op(fl) && barrier_op(fl)->kind == OP_CASCADE;
}

enum next_result
flush_next(struct sink *s, struct flush *fl, struct batch *const *earlier,
    int nearlier, struct http_call *call)
{
	const struct op *bar = barrier_op(fl);
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
			body = config_index_body(s->cfg, create);
			sbuf_reset(&fl->path);
			sbuf_addc(&fl->path, '/');
			url_escape(&fl->path, create, URL_PATH_KEEP);
			set_call(call, "PUT", fl->path.buf, NULL, body,
			    body ? strlen(body) : 0);
			return NEXT_SEND;
		case PH_TOAST:
			nread = toast_plan(&fl->b, fl->b.nops, earlier,
			    nearlier, fl->from);
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
			fl->nasked = toast_mget_body(&fl->b, fl->b.nops,
			    fl->from, &fl->body, fl->asked);
			set_call(call, "POST", "/_mget", NULL, fl->body.buf,
			    fl->body.len);
			return NEXT_SEND;
		case PH_BULK:
			if ((fl->nsent = arena_prefix(fl, &body, &len)) == -1) {
				fl->nsent = bulk_body(&fl->b, fl->b.nops,
				    &fl->body, fl->sent);
				body = fl->body.buf;
				len = fl->body.len;
			}
			if (fl->nsent == 0) {
				fl->phase = ends_in_clear(fl) ? PH_REFRESH :
				    PH_DONE;
				continue;
			}
			fl->sent_len = len;
			set_call(call, "POST", BULK_PATH,
			    "application/x-ndjson", body, len);
			return NEXT_SEND;
		case PH_REFRESH:
			/* so the delete or the search sees every write
			 * before it */
			sbuf_reset(&fl->path);
			sbuf_addc(&fl->path, '/');
			url_escape(&fl->path, clear_index(fl), URL_PATH_KEEP);
			sbuf_adds(&fl->path, "/_refresh");
			set_call(call, "POST", fl->path.buf, NULL, NULL, 0);
			return NEXT_SEND;
		case PH_DELETE:
			sbuf_reset(&fl->path);
			sbuf_addc(&fl->path, '/');
			url_escape(&fl->path, clear_index(fl), URL_PATH_KEEP);
			sbuf_adds(&fl->path, "/_delete_by_query?"
			    "conflicts=proceed&refresh=true");
			set_call(call, "POST", fl->path.buf, NULL, bar->query,
			    strlen(bar->query));
			call->timeout_ms = CLEAR_TIMEOUT_MS;
			return NEXT_SEND;
		case PH_CSEARCH:
			cascade_search(bar, &fl->path, &fl->body);
			set_call(call, "POST", fl->path.buf, NULL, fl->body.buf,
			    fl->body.len);
			return NEXT_SEND;
		case PH_CDELETE:
			fl->sent_len = fl->body.len;
			set_call(call, "POST", BULK_PATH,
			    "application/x-ndjson", fl->body.buf, fl->body.len);
			return NEXT_SEND;
		case PH_CSCROLL:
			cascade_scroll(&fl->scroll, &fl->path, &fl->body);
			set_call(call, "POST", fl->path.buf, NULL, fl->body.buf,
			    fl->body.len);
			return NEXT_SEND;
		case PH_CEND:
			cascade_scroll_end(&fl->scroll, &fl->path, &fl->body);
			set_call(call, "DELETE", fl->path.buf, NULL,
			    fl->body.buf, fl->body.len);
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

	resp_error_text(fl->resp.buf, fl->resp.len, why, sizeof(why));
	/* another writer, or an earlier run, created it first */
	if ((status >= 200 && status < 300) || (status == 400 &&
	    strncmp(why, "resource_already_exists_exception", 33) == 0)) {
		if (status < 300) {
			s->stats->indices_created++;
			log_info("created index '%s'", fl->creating);
		}
		add_known(s, fl->creating);
		sink_up(s);
		return STEP_NEXT;
	}
	switch (resp_status_class(status)) {
	case RESP_AUTH:
		return sink_auth(s, status, &fl->resp);
	case RESP_REJECT:
		s->stats->sink_errors++;
		sink_up(s);
		snprintf(s->err, sizeof(s->err), "creating index '%s' refused "
		    "(HTTP %ld): %s", fl->creating, status, why);
		if (first_time(fl, "create", why))
			log_error("%s; retrying until the target accepts it",
			    s->err);
		return STEP_WAIT;
	default:
		snprintf(s->err, sizeof(s->err), "creating index '%s' failed "
		    "(HTTP %ld): %s", fl->creating, status, why);
		return sink_down(s);
	}
}

/* a page of children: each deleted, or the page is asked again */
static enum step_result
answer_cascade_delete(struct sink *s, struct flush *fl, long status)
{
	char why[512];
	int i, failed = 0;

	if (fl->hits == NULL)
		fl->hits = xcalloc(CASCADE_PAGE, sizeof(*fl->hits));
	switch (bulkresp_classify(status, fl->resp.buf, fl->resp.len,
	    fl->nhits, fl->hits, why, sizeof(why))) {
	case RESP_AUTH:
		return sink_auth(s, status, &fl->resp);
	case RESP_ITEMS:
		break;
	default:
		snprintf(s->err, sizeof(s->err), "deleting a join parent's "
		    "children failed (HTTP %ld): %.400s", status, why);
		return sink_down(s);
	}
	s->stats->batches++;
	s->stats->bulk_bytes += fl->sent_len;
	for (i = 0; i < fl->nhits; i++) {
		count_item(s, &fl->hits[i]);
		if (fl->hits[i].verdict != ITEM_OK &&
		    fl->hits[i].verdict != ITEM_NOTFOUND &&
		    fl->hits[i].verdict != ITEM_CONFLICT)
			failed++;
	}
	if (failed) {
		/* the deletes are idempotent: the page goes again whole */
		snprintf(s->err, sizeof(s->err), "%d of %d children of a "
		    "deleted join parent not deleted yet", failed, fl->nhits);
		return sink_down(s);
	}
	sink_up(s);
	fl->phase = PH_CSCROLL;
	return STEP_NEXT;
}

/* a search or scroll page: its children to delete, or the end */
static enum step_result
answer_cascade(struct sink *s, struct flush *fl, long status)
{
	char why[400];
	int n;

	if (fl->phase == PH_CEND) {
		/* a scroll left open expires on its own */
		sink_up(s);
		s->stats->cascades++;
		fl->phase = PH_DONE;
		return STEP_DONE;
	}
	if (status == 404) {
		/* no such index: no children; a scroll that expired
		 * during a backoff: search again from the start */
		if (fl->phase == PH_CSEARCH) {
			s->stats->cascades++;
			fl->phase = PH_DONE;
			return STEP_DONE;
		}
		fl->phase = PH_REFRESH;
		return STEP_NEXT;
	}
	switch (resp_status_class(status)) {
	case RESP_AUTH:
		return sink_auth(s, status, &fl->resp);
	case RESP_ITEMS:
		break;
	case RESP_REJECT:
		s->stats->sink_errors++;
		resp_error_text(fl->resp.buf, fl->resp.len, why, sizeof(why));
		snprintf(s->err, sizeof(s->err), "searching the children of "
		    "'%s' in '%s' refused (HTTP %ld): %s", barrier_op(fl)->parent,
		    clear_index(fl), status, why);
		if (first_time(fl, "cascade", why))
			log_error("%s; retrying", s->err);
		return STEP_WAIT;
	default:
		resp_error_text(fl->resp.buf, fl->resp.len, why, sizeof(why));
		snprintf(s->err, sizeof(s->err), "searching the children of a "
		    "join parent failed (HTTP %ld): %s", status, why);
		return sink_down(s);
	}
	n = cascade_page(barrier_op(fl), fl->resp.buf, fl->resp.len,
	    &fl->scroll, &fl->body);
	if (n == -1) {
		snprintf(s->err, sizeof(s->err), "unusable search response");
		return sink_down(s);
	}
	sink_up(s);
	fl->nhits = n;
	fl->phase = n > 0 ? PH_CDELETE : fl->scroll.len ? PH_CEND : PH_DONE;
	if (fl->phase == PH_DONE) {
		s->stats->cascades++;
		return STEP_DONE;
	}
	return STEP_NEXT;
}

static enum step_result
answer_toast(struct sink *s, struct flush *fl, long status)
{
	struct jspan *found;
	int r;

	switch (resp_status_class(status)) {
	case RESP_AUTH:
		return sink_auth(s, status, &fl->resp);
	case RESP_ITEMS:
		break;
	default:
		resp_error_text(fl->resp.buf, fl->resp.len, s->err,
		    sizeof(s->err));
		return sink_down(s);
	}
	found = xcalloc(fl->nasked, sizeof(*found));
	if (toast_mget_parse(fl->resp.buf, fl->resp.len, fl->nasked,
	    found) == -1) {
		snprintf(s->err, sizeof(s->err), "unusable _mget response");
		free(found);
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
	int del = strcmp(it->action, "delete") == 0;

	switch (it->verdict) {
	case ITEM_OK:
	case ITEM_NOTFOUND:
		if (del)
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
 * external_gte would let it) */
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
	const struct item_result *it;
	struct op *op;
	char name[800], why[512];
	int i, first = 0, nretry = 0, nreject = 0;

	s->stats->bulk_bytes += fl->sent_len;
	switch (bulkresp_classify(status, fl->resp.buf, fl->resp.len,
	    fl->nsent, fl->items, why, sizeof(why))) {
	case RESP_AUTH:
		return sink_auth(s, status, &fl->resp);
	case RESP_RETRY:
		snprintf(s->err, sizeof(s->err), "bulk request failed "
		    "(HTTP %ld): %.400s", status, why);
		return sink_down(s);
	case RESP_REJECT:
		s->stats->sink_errors++;
		sink_up(s);
		snprintf(s->err, sizeof(s->err), "bulk request refused "
		    "(HTTP %ld): %.400s", status, why);
		if (first_time(fl, "request", why))
			log_error("%s; retrying until the target accepts it",
			    s->err);
		return STEP_WAIT;
	case RESP_ITEMS:
		break;
	}
	s->stats->batches++;
	for (i = 0; i < fl->nsent; i++) {
		it = &fl->items[i];
		count_item(s, it);
		if (it->verdict == ITEM_OK || it->verdict == ITEM_CONFLICT ||
		    it->verdict == ITEM_NOTFOUND)
			b->ops[fl->sent[i]].written = 1;
	}
	for (i = 0; i < fl->nsent; i++) {
		it = &fl->items[i];
		op = &b->ops[fl->sent[i]];
		if (op->written)
			continue;
		if (superseded(b, fl->sent[i])) {
			op->written = 1;
			continue;
		}
		if (it->verdict == ITEM_RETRY) {
			if (nretry++ == 0)
				first = i;
		} else {
			nreject++;
			name_of(b, op, name, sizeof(name));
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
		fl->phase = ends_in_clear(fl) ? PH_REFRESH : PH_DONE;
		return fl->phase == PH_DONE ? STEP_DONE : STEP_NEXT;
	}
	if (nreject) {
		/* halting is making no progress, not exiting: a mapping fix
		 * lets the retry through */
		s->stats->sink_errors++;
		sink_up(s);
		snprintf(s->err, sizeof(s->err), "%d document%s refused, "
		    "%d to retry", nreject, nreject == 1 ? "" : "s", nretry);
		if (first_time(fl, "halt", ""))
			log_error("halting: nothing past a refused document "
			    "is acknowledged; retrying it until the target "
			    "accepts it");
		return STEP_WAIT;
	}
	snprintf(s->err, sizeof(s->err), "%d of %d bulk items not accepted "
	    "yet (HTTP %d): %s: %s", nretry, fl->nsent,
	    fl->items[first].status, fl->items[first].type[0] ?
	    fl->items[first].type : "error", fl->items[first].reason);
	return sink_down(s);
}

static enum step_result
answer_clear(struct sink *s, struct flush *fl, long status)
{
	const char *index = clear_index(fl);
	int refresh = fl->phase == PH_REFRESH;
	char why[400];

	if (status == 404) {
		/* no such index: nothing to clear, no children */
		sink_up(s);
		if (ends_in_cascade(fl))
			s->stats->cascades++;
		else
			s->stats->clears++;
		fl->phase = PH_DONE;
		return STEP_DONE;
	}
	switch (resp_status_class(status)) {
	case RESP_AUTH:
		return sink_auth(s, status, &fl->resp);
	case RESP_RETRY:
		resp_error_text(fl->resp.buf, fl->resp.len, why, sizeof(why));
		snprintf(s->err, sizeof(s->err), "clearing '%s' failed (HTTP "
		    "%ld): %s", index, status, why);
		return sink_down(s);
	case RESP_REJECT:
		s->stats->sink_errors++;
		resp_error_text(fl->resp.buf, fl->resp.len, why, sizeof(why));
		snprintf(s->err, sizeof(s->err), "clearing '%s' refused (HTTP "
		    "%ld): %s", index, status, why);
		if (first_time(fl, "clear", why))
			log_error("%s; retrying", s->err);
		return STEP_WAIT;
	case RESP_ITEMS:
		break;
	}
	if (!refresh && !dbq_complete(fl->resp.buf, fl->resp.len)) {
		snprintf(s->err, sizeof(s->err), "clearing '%s' left "
		    "documents behind (version conflicts or shard failures)",
		    index);
		return sink_down(s);
	}
	sink_up(s);
	if (refresh) {
		fl->phase = ends_in_cascade(fl) ? PH_CSEARCH : PH_DELETE;
		return STEP_NEXT;
	}
	log_info("cleared index '%s'", index);
	s->stats->clears++;
	fl->phase = PH_DONE;
	return STEP_DONE;
}

enum step_result
flush_answer(struct sink *s, struct flush *fl, const char *terr, long status)
{
	if (!fl->resp.buf)
		sbuf_grow(&fl->resp, 1);
	if (terr) {
		snprintf(s->err, sizeof(s->err), "%s", terr);
		return sink_down(s);
	}
	switch (fl->phase) {
	case PH_CREATE:
		return answer_create(s, fl, status);
	case PH_TOAST:
		return answer_toast(s, fl, status);
	case PH_CDELETE:
		return answer_cascade_delete(s, fl, status);
	case PH_CSEARCH:
	case PH_CSCROLL:
	case PH_CEND:
		return answer_cascade(s, fl, status);
	case PH_BULK:
		return answer_bulk(s, fl, status);
	case PH_REFRESH:
	case PH_DELETE:
		return answer_clear(s, fl, status);
	default:
		return STEP_DONE;
	}
}
