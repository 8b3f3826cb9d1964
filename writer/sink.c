/*
 * sink.c - carrying one flush to the target, one request per step: the
 * _mget behind TOAST completion, the _bulk request and its retries (only of
 * the items not yet written), and a clear's refresh and delete_by_query.
 * It decides what a response means for the flush and for the counters and
 * logs what an operator must see; it never reads input, never sleeps (the
 * main loop waits out the backoff) and never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
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

enum phase { PH_TOAST, PH_BULK, PH_REFRESH, PH_DELETE, PH_DONE };

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
sink_init(struct sink *s, struct http_client *http, struct writer_stats *st)
{
	memset(s, 0, sizeof(*s));
	s->http = http;
	s->stats = st;
	sbuf_init(&s->body);
	sbuf_init(&s->resp);
}

void
sink_release(struct sink *s)
{
	sbuf_release(&s->body);
	sbuf_release(&s->resp);
}

/* the target answered: an outage is over (the backoff is the main loop's
 * to reset, on progress) */
static void
sink_up(struct sink *s)
{
	if (s->down_since)
		log_info("target available again after %llds",
		    (now_ms() - s->down_since + 500) / 1000);
	s->down_since = 0;
}

/* a transient failure: say so on the first one and then once a minute */
static enum step_result
sink_down(struct sink *s, struct flush *fl)
{
	long long now = now_ms();

	s->stats->sink_errors++;
	if (!s->down_since) {
		s->down_since = now;
		s->down_logged = now;
		log_warnx("target '%s' unavailable: %s; retrying",
		    s->http->base, s->err);
	} else if (now - s->down_logged >= DOWN_LOG_EVERY_MS) {
		s->down_logged = now;
		log_warnx("target unavailable for %llds: %s; still retrying",
		    (now - s->down_since) / 1000, s->err);
	}
	return STEP_WAIT;
}

static enum step_result
sink_auth(struct sink *s, long status)
{
	char why[256];

	resp_error_text(s->resp.buf, s->resp.len, why, sizeof(why));
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

static int
request(struct sink *s, const char *method, const char *path,
    const char *ctype, const char *body, size_t len, long *status)
{
	sbuf_reset(&s->resp);
	if (http_request(s->http, method, path, ctype, body, len, &s->resp,
	    status) == -1) {
		snprintf(s->err, sizeof(s->err), "%s", s->http->err);
		return -1;
	}
	if (!s->resp.buf)
		sbuf_grow(&s->resp, 1);
	return 0;
}

enum step_result
sink_probe(struct sink *s)
{
	char why[256];
	long status;

	if (request(s, "GET", "/", NULL, NULL, 0, &status) == -1)
		return sink_down(s, NULL);
	switch (resp_status_class(status)) {
	case RESP_ITEMS:
		sink_up(s);
		return STEP_DONE;
	case RESP_AUTH:
		return sink_auth(s, status);
	default:
		resp_error_text(s->resp.buf, s->resp.len, why, sizeof(why));
		snprintf(s->err, sizeof(s->err), "HTTP %ld: %s", status, why);
		return sink_down(s, NULL);
	}
}

void
flush_begin(struct flush *fl, struct batch *b, int n)
{
	memset(fl, 0, sizeof(*fl));
	fl->b = b;
	fl->n = n;
	fl->phase = toast_needed(b, n) ? PH_TOAST : PH_BULK;
	fl->started_us = now_us_wall();
	fl->src = xcalloc(n ? n : 1, sizeof(*fl->src));
	fl->asked = xcalloc(n ? n : 1, sizeof(*fl->asked));
	fl->sent = xcalloc(n ? n : 1, sizeof(*fl->sent));
	fl->items = xcalloc(n ? n : 1, sizeof(*fl->items));
}

void
flush_release(struct flush *fl)
{
	free(fl->src);
	free(fl->asked);
	free(fl->sent);
	free(fl->items);
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

/* fill every op's TOAST fields, in batch order so that an op completed from
 * an earlier one sees that one's completed document */
static int
complete_all(struct sink *s, struct flush *fl, struct jspan *found)
{
	struct batch *b = fl->b;
	struct op *op, *from;
	struct jspan source, fields;
	struct sbuf out = SBUF_INIT;
	char name[800];
	int i, k = 0, r;

	for (i = 0; i < fl->n; i++) {
		op = &b->ops[i];
		if (op->kind != OP_INDEX || !op->toast)
			continue;
		source.p = NULL;
		source.n = 0;
		if (fl->src[i] == -1)
			source = found[k++];
		else {
			from = &b->ops[fl->src[i]];
			if (from->kind == OP_INDEX && from->completed) {
				source.p = from->completed;
				source.n = from->completed_len;
			} else if (from->kind == OP_INDEX)
				source = batch_span(b, from->doc);
		}
		fields.p = op->toast;
		fields.n = strlen(op->toast);
		sbuf_reset(&out);
		r = toast_complete(&out, batch_span(b, op->doc), fields, source);
		if (r == -1) {
			snprintf(s->err, sizeof(s->err), "stored document is "
			    "not an object");
			sbuf_release(&out);
			return -1;
		}
		if (!source.p) {
			name_of(b, op, name, sizeof(name));
			log_warnx("document '%s' has unchanged TOAST fields %s "
			    "but no stored copy: written without them", name,
			    op->toast);
			kcount_add(&s->stats->toast_missing, op->rel ? op->rel :
			    "", op->rel ? strlen(op->rel) : 0, 1);
		} else
			s->stats->toast_completions++;
		op->completed = xstrndup(out.buf, out.len);
		op->completed_len = out.len;
	}
	sbuf_release(&out);
	return 0;
}

static enum step_result
step_toast(struct sink *s, struct flush *fl)
{
	struct jspan *found = NULL;
	int nread, r;
	long status;

	nread = toast_plan(fl->b, fl->n, fl->src);
	if (nread > 0) {
		fl->nasked = toast_mget_body(fl->b, fl->n, fl->src, &s->body,
		    fl->asked);
		if (request(s, "POST", "/_mget", NULL, s->body.buf,
		    s->body.len, &status) == -1)
			return sink_down(s, fl);
		switch (resp_status_class(status)) {
		case RESP_AUTH:
			return sink_auth(s, status);
		case RESP_ITEMS:
			break;
		default:
			resp_error_text(s->resp.buf, s->resp.len, s->err,
			    sizeof(s->err));
			return sink_down(s, fl);
		}
		found = xcalloc(fl->nasked, sizeof(*found));
		if (toast_mget_parse(s->resp.buf, s->resp.len, fl->nasked,
		    found) == -1) {
			snprintf(s->err, sizeof(s->err), "unusable _mget "
			    "response");
			free(found);
			return sink_down(s, fl);
		}
	}
	r = complete_all(s, fl, found);
	free(found);
	if (r == -1) {
		/* a stored document we cannot read is not a missing one */
		for (r = 0; r < fl->n; r++) {
			free(fl->b->ops[r].completed);
			fl->b->ops[r].completed = NULL;
		}
		return sink_down(s, fl);
	}
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

/* the first attempt of a flush without completions is the arena itself */
static int
arena_prefix(const struct flush *fl, const char **body, size_t *len)
{
	const struct batch *b = fl->b;
	const struct op *op;
	size_t start = 0, end = 0;
	int i, nsent = 0;

	for (i = 0; i < fl->n; i++) {
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
	*body = b->arena.buf + start;
	*len = end - start;
	return nsent;
}

static enum step_result
step_bulk(struct sink *s, struct flush *fl)
{
	struct batch *b = fl->b;
	const struct item_result *it;
	struct op *op;
	const char *body;
	size_t len;
	char name[800], why[512];
	long status;
	int i, nretry = 0, nreject = 0;

	if ((fl->nsent = arena_prefix(fl, &body, &len)) == -1) {
		fl->nsent = bulk_body(b, fl->n, &s->body, fl->sent);
		body = s->body.buf;
		len = s->body.len;
	}
	if (fl->nsent == 0) {
		fl->phase = (fl->n && b->ops[fl->n - 1].kind == OP_CLEAR) ?
		    PH_REFRESH : PH_DONE;
		return fl->phase == PH_DONE ? STEP_DONE : STEP_NEXT;
	}
	if (request(s, "POST", BULK_PATH, "application/x-ndjson", body, len,
	    &status) == -1)
		return sink_down(s, fl);
	s->stats->bulk_bytes += len;
	switch (bulkresp_classify(status, s->resp.buf, s->resp.len,
	    fl->nsent, fl->items, why, sizeof(why))) {
	case RESP_AUTH:
		return sink_auth(s, status);
	case RESP_RETRY:
		snprintf(s->err, sizeof(s->err), "bulk request failed "
		    "(HTTP %ld): %.400s", status, why);
		return sink_down(s, fl);
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
		op = &b->ops[fl->sent[i]];
		count_item(s, it);
		if (it->verdict == ITEM_OK || it->verdict == ITEM_CONFLICT ||
		    it->verdict == ITEM_NOTFOUND)
			op->written = 1;
		else if (it->verdict == ITEM_RETRY)
			nretry++;
		else {
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
		fl->phase = (b->ops[fl->n - 1].kind == OP_CLEAR) ?
		    PH_REFRESH : PH_DONE;
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
	for (i = 0; i < fl->nsent; i++)
		if (fl->items[i].verdict == ITEM_RETRY)
			break;
	snprintf(s->err, sizeof(s->err), "%d of %d bulk items not accepted "
	    "yet (HTTP %d): %s: %s", nretry, fl->nsent, fl->items[i].status,
	    fl->items[i].type[0] ? fl->items[i].type : "error",
	    fl->items[i].reason);
	return sink_down(s, fl);
}

static void
path_escape(struct sbuf *out, const char *name)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		    *p == '.' || *p == '*' || *p == ',' || *p == '+')
			sbuf_addc(out, (char)*p);
		else {
			sbuf_addc(out, '%');
			sbuf_addc(out, hex[*p >> 4]);
			sbuf_addc(out, hex[*p & 15]);
		}
	}
}

/* a clear: refresh so the delete sees every write, then delete all */
static enum step_result
step_clear(struct sink *s, struct flush *fl)
{
	static const char match_all[] = "{\"query\":{\"match_all\":{}}}";
	const char *index = fl->b->ops[fl->n - 1].text;
	struct sbuf path = SBUF_INIT;
	char why[400];
	long status, saved;
	int r, refresh = fl->phase == PH_REFRESH;

	sbuf_addc(&path, '/');
	path_escape(&path, index);
	if (refresh) {
		sbuf_adds(&path, "/_refresh");
		r = request(s, "POST", path.buf, NULL, NULL, 0, &status);
	} else {
		sbuf_adds(&path, "/_delete_by_query?conflicts=proceed"
		    "&refresh=true");
		saved = s->http->timeout_ms;
		s->http->timeout_ms = CLEAR_TIMEOUT_MS;
		r = request(s, "POST", path.buf, NULL, match_all,
		    sizeof(match_all) - 1, &status);
		s->http->timeout_ms = saved;
	}
	sbuf_release(&path);
	if (r == -1)
		return sink_down(s, fl);
	if (status == 404) {
		/* no such index: nothing to clear */
		sink_up(s);
		s->stats->clears++;
		fl->phase = PH_DONE;
		return STEP_DONE;
	}
	switch (resp_status_class(status)) {
	case RESP_AUTH:
		return sink_auth(s, status);
	case RESP_RETRY:
		resp_error_text(s->resp.buf, s->resp.len, why, sizeof(why));
		snprintf(s->err, sizeof(s->err), "clearing '%s' failed (HTTP "
		    "%ld): %s", index, status, why);
		return sink_down(s, fl);
	case RESP_REJECT:
		s->stats->sink_errors++;
		resp_error_text(s->resp.buf, s->resp.len, why, sizeof(why));
		snprintf(s->err, sizeof(s->err), "clearing '%s' refused (HTTP "
		    "%ld): %s", index, status, why);
		if (first_time(fl, "clear", why))
			log_error("%s; retrying", s->err);
		return STEP_WAIT;
	case RESP_ITEMS:
		break;
	}
	if (!refresh && !dbq_complete(s->resp.buf, s->resp.len)) {
		snprintf(s->err, sizeof(s->err), "clearing '%s' left "
		    "documents behind (version conflicts or shard failures)",
		    index);
		return sink_down(s, fl);
	}
	sink_up(s);
	if (refresh) {
		fl->phase = PH_DELETE;
		return STEP_NEXT;
	}
	log_info("cleared index '%s'", index);
	s->stats->clears++;
	fl->phase = PH_DONE;
	return STEP_DONE;
}

enum step_result
flush_step(struct sink *s, struct flush *fl)
{
	switch (fl->phase) {
	case PH_TOAST:
		return step_toast(s, fl);
	case PH_BULK:
		return step_bulk(s, fl);
	case PH_REFRESH:
	case PH_DELETE:
		return step_clear(s, fl);
	default:
		return STEP_DONE;
	}
}
