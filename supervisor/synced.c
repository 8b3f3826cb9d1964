/*
 * synced.c - read-your-writes: GET /synced[?position=P][&timeout=MS]
 * [&refresh=true][&source=NAME] on api.bind answers once the acknowledged
 * position of that source's pipeline (the only one when the process runs
 * one; several need source=, 400 without it) (the
 * one stored as the checkpoint and sent to the capture as an ack, so every
 * change before it is in the target) reaches P, or the source's position
 * at the time of the request when P is not given (helper.c asks the
 * source, on PostgreSQL through a logical message so that a quiet server's
 * position is reached too). With refresh=true the target's indices are
 * refreshed after that and before the answer, so a search made right
 * after it sees the write. 408 when the timeout passes first, 400 for a
 * request it cannot read (a position in the wrong form), 401 without
 * api.token_env's bearer token, 503 when the source or the target could
 * not be asked.
 *
 * Positions are compared in the source's own order, which only the source
 * module knows (lib/source.h pos_coord): the texts of the stored
 * checkpoint and of the asked position, never their numbers. Every waiter
 * asks for its own position after it arrived: an answer to an earlier ask
 * could predate the write it waits for. No socket here: httpd.c answers a deferred request when told.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "supervisor.h"
#include "xio.h"

#define TIMEOUT_DEFAULT_MS	10000
#define TIMEOUT_MAX_MS		600000

/* a position text as an ordered number: 0, or -1 when it is not one */
static int
coord_of(const struct sv *sv, const char *text, uint64_t *coord)
{
	return sv->cf.source->pos_coord(text, coord);
}

/* the acknowledged position, ordered and as text: 0, or -1 none yet. The
 * stored checkpoint's text, not its number: a MySQL position number
 * carries a generation the server's coordinates do not */
static int
confirmed(const struct sv *sv, uint64_t *coord, char *text, size_t len)
{
	if (!sv->bc.have_stored || sv->bc.stored_text == NULL ||
	    coord_of(sv, sv->bc.stored_text, coord) == -1)
		return -1;
	sv->cf.source->pos_show(sv->bc.stored_text, text, len);
	return 0;
}

static void
json_str(struct sbuf *b, const char *name, const char *v)
{
	sbuf_addf(b, ",\"%s\":", name);
	sbuf_add_jstr(b, v, strlen(v));
}

/* a traced wait answered: its span under the caller's */
static void
trace_wait(struct sv_waiter *w, int status, const char *confirmed_text)
{
	struct trace_span sp;

	if (trace_span_child(&sp, &w->trace, "pg2osync.synced",
	    w->trace_ns) == -1)
		return;
	trace_attr_int(&sp, "http.response.status_code", status);
	if (w->have_req)
		trace_attr_str(&sp, "requested", w->req_text,
		    strlen(w->req_text));
	trace_attr_str(&sp, "confirmed", confirmed_text,
	    strlen(confirmed_text));
	sp.error = status != 200;
	trace_emit(&sp, trace_now_ns());
}

/* the answer of waiter w, and its slot freed */
static void
finish(struct sv *sv, struct sv_waiter *w, int status, const char *error,
    long long now)
{
	struct sv_http_resp resp;
	char ctext[600] = "";
	uint64_t c;

	memset(&resp, 0, sizeof(resp));
	sbuf_init(&resp.body);
	resp.status = status;
	resp.ctype = "application/json";
	if (error != NULL) {
		sbuf_adds(&resp.body, "{\"error\":");
		sbuf_add_jstr(&resp.body, error, strlen(error));
	} else {
		sbuf_addf(&resp.body, "{\"synced\":%s", status == 200 ?
		    "true" : "false");
		json_str(&resp.body, "requested", w->have_req ? w->req_text :
		    "");
		if (confirmed(sv, &c, ctext, sizeof(ctext)) == -1)
			ctext[0] = '\0';
		json_str(&resp.body, "confirmed", ctext);
		sbuf_addf(&resp.body, ",\"waited_ms\":%lld",
		    now - w->started_ms);
		if (w->refresh)
			sbuf_addf(&resp.body, ",\"refreshed\":%s", status ==
			    200 ? "true" : "false");
	}
	sbuf_adds(&resp.body, "}\n");
	sv_httpd_answer(&sv->proc->api, w->conn, w->gen, &resp);
	sbuf_release(&resp.body);
	if (w->traced)
		trace_wait(w, status, ctext);
	memset(w, 0, sizeof(*w));
}

/* w's position reached: answer, or refresh first */
static void
reached(struct sv *sv, struct sv_waiter *w, long long now)
{
	char err[256];

	if (!w->refresh) {
		finish(sv, w, 200, NULL, now);
		return;
	}
	/* asked now, after every write before the position was accepted */
	if ((w->need_seq = sv_helper_ask(sv, ASK_REFRESH, err,
	    sizeof(err))) == 0)
		finish(sv, w, 503, err, now);
	else
		w->refreshing = 1;
}

/* has the acknowledged position reached w's? */
static int
is_reached(const struct sv *sv, const struct sv_waiter *w)
{
	char text[600];
	uint64_t c;

	return w->have_req && confirmed(sv, &c, text, sizeof(text)) == 0 &&
	    c >= w->requested;
}

/* %XX decoded in place */
static void
unescape(char *s)
{
	char *o = s;
	int hi, lo;

	for (; *s; s++) {
		if (*s == '%' && isxdigit((unsigned char)s[1]) &&
		    isxdigit((unsigned char)s[2])) {
			hi = isdigit((unsigned char)s[1]) ? s[1] - '0' :
			    (tolower((unsigned char)s[1]) - 'a' + 10);
			lo = isdigit((unsigned char)s[2]) ? s[2] - '0' :
			    (tolower((unsigned char)s[2]) - 'a' + 10);
			*o++ = (char)(hi * 16 + lo);
			s += 2;
		} else
			*o++ = *s == '+' ? ' ' : *s;
	}
	*o = '\0';
}

/* the query into w: 0, or -1 with why */
static int
parse_query(const struct sv *sv, const char *query, struct sv_waiter *w,
    long long *timeout, char *why, size_t len)
{
	char q[sizeof(((struct sv_http_req *)0)->query)], *p, *next, *eq;
	long long t;
	char *end;

	*timeout = TIMEOUT_DEFAULT_MS;
	snprintf(q, sizeof(q), "%s", query);
	for (p = q; p && *p; p = next) {
		if ((next = strchr(p, '&')) != NULL)
			*next++ = '\0';
		if (*p == '\0')
			continue;
		if ((eq = strchr(p, '=')) == NULL) {
			snprintf(why, len, "'%.60s' has no value", p);
			return -1;
		}
		*eq++ = '\0';
		unescape(eq);
		if (strcmp(p, "position") == 0) {
			if (strlen(eq) >= sizeof(w->req_text) ||
			    coord_of(sv, eq, &w->requested) == -1) {
				snprintf(why, len, "position '%.100s' is not a "
				    "position of this source (%s)", eq,
				    sv->cf.source->pos_form);
				return -1;
			}
			snprintf(w->req_text, sizeof(w->req_text), "%s", eq);
			w->have_req = 1;
		} else if (strcmp(p, "timeout") == 0) {
			t = strtoll(eq, &end, 10);
			if (!isdigit((unsigned char)*eq) || *end != '\0' ||
			    t < 1 || t > TIMEOUT_MAX_MS) {
				snprintf(why, len, "timeout '%.40s' must be a "
				    "number of milliseconds from 1 to %d", eq,
				    TIMEOUT_MAX_MS);
				return -1;
			}
			*timeout = t;
		} else if (strcmp(p, "source") == 0) {
			/* which pipeline: sv_route_api chose it */
		} else if (strcmp(p, "refresh") == 0) {
			if (strcmp(eq, "true") != 0 && strcmp(eq, "false") != 0) {
				snprintf(why, len, "refresh must be true or "
				    "false");
				return -1;
			}
			w->refresh = eq[0] == 't';
		} else {
			snprintf(why, len, "unknown parameter '%.60s' (position, "
			    "timeout, refresh, source)", p);
			return -1;
		}
	}
	return 0;
}

static void
answer_now(struct sv_http_resp *resp, int status, const char *error)
{
	resp->status = status;
	resp->ctype = "application/json";
	sbuf_adds(&resp->body, "{\"error\":");
	sbuf_add_jstr(&resp->body, error, strlen(error));
	sbuf_adds(&resp->body, "}\n");
}

/* the source= of a query, decoded, into buf: 1, or 0 when none */
static int
source_param(const char *query, char *buf, size_t len)
{
	const char *p = query, *v;
	size_t n;

	for (; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		if (strncmp(p, "source=", 7) != 0)
			continue;
		v = p + 7;
		n = strcspn(v, "&");
		snprintf(buf, len, "%.*s", (int)n, v);
		unescape(buf);
		return 1;
	}
	return 0;
}

/* the pipeline a request asks about: 0 with *sv, or -1 answered */
static int
which(struct sv_proc *p, const struct sv_http_req *req, struct sv **sv,
    struct sv_http_resp *resp)
{
	struct sbuf names = SBUF_INIT;
	char name[256], why[600];
	int i;

	if (!source_param(req->query, name, sizeof(name))) {
		if (p->npipes == 1) {
			*sv = p->pipes[0];
			return 0;
		}
		for (i = 0; i < p->npipes; i++)
			sbuf_addf(&names, "%s%s", i ? ", " : "",
			    p->pipes[i]->source_name);
		snprintf(why, sizeof(why), "this process runs %d sources: name "
		    "one with source= (%.400s)", p->npipes, names.buf ?
		    names.buf : "");
		sbuf_release(&names);
		answer_now(resp, 400, why);
		return -1;
	}
	if ((*sv = sv_proc_find(p, name)) == NULL) {
		snprintf(why, sizeof(why), "no source named '%.200s'", name);
		answer_now(resp, 400, why);
		return -1;
	}
	return 0;
}

void
sv_route_api(void *arg, const struct sv_http_req *req,
    struct sv_http_resp *resp)
{
	struct sv_proc *p = arg;
	struct sv *sv;
	struct sv_waiter *w = NULL, tmp;
	long long now = now_ms(), timeout;
	char why[256];
	int i;

	if (strcmp(req->path, "/synced") != 0) {
		answer_now(resp, 404, "not found: this listener serves /synced");
		return;
	}
	if (p->api_token != NULL && !sv_http_bearer_ok(req, p->api_token)) {
		resp->challenge = 1;
		answer_now(resp, 401, "a bearer token is required");
		return;
	}
	memset(&tmp, 0, sizeof(tmp));
	if (req->query_cut) {
		answer_now(resp, 400, "the query is too long");
		return;
	}
	if (which(p, req, &sv, resp) == -1)
		return;
	if (sv->st.pl == PL_DONE) {
		snprintf(why, sizeof(why), "source '%.100s' is halted: %.100s",
		    sv->source_name, sv->halted);
		answer_now(resp, 503, why);
		return;
	}
	if (parse_query(sv, req->query, &tmp, &timeout, why,
	    sizeof(why)) == -1) {
		answer_now(resp, 400, why);
		return;
	}
	for (i = 0; i < SV_HTTP_CONNS && w == NULL; i++)
		if (!sv->waiters[i].used)
			w = &sv->waiters[i];
	if (w == NULL) {
		answer_now(resp, 503, "too many requests wait");
		return;
	}
	*w = tmp;
	w->used = 1;
	w->conn = req->conn;
	w->gen = req->gen;
	w->started_ms = now;
	w->deadline_ms = now + timeout;
	/* a caller's sampled trace goes on through the wait */
	if (trace_on() && req->traceparent[0] &&
	    trace_ctx_parse(req->traceparent, strlen(req->traceparent),
	    &w->trace) == 0 && w->trace.sampled) {
		w->traced = 1;
		w->trace_ns = trace_now_ns();
	}
	if (!w->have_req && (w->need_seq = sv_helper_ask(sv, ASK_SOURCE_NOW,
	    why, sizeof(why))) == 0) {
		memset(w, 0, sizeof(*w));
		answer_now(resp, 503, why);
		return;
	}
	resp->deferred = 1;
	/* the connection outlives the wait by the time an answer takes */
	resp->deadline_ms = w->deadline_ms + SV_HTTP_TIMEOUT_MS;
	/* not answered from here even when reached: httpd.c takes the
	 * request as deferred only once this returns; the loop's next
	 * sv_synced_step answers it */
}

void
sv_synced_answered(struct sv *sv, enum sv_ask what, uint64_t seq,
    const char *text, const char *error)
{
	struct sv_waiter *w = NULL;
	long long now = now_ms();
	char why[600];
	int i;

	for (i = 0; i < SV_HTTP_CONNS && w == NULL; i++)
		if (sv->waiters[i].used && sv->waiters[i].need_seq == seq)
			w = &sv->waiters[i];
	if (w == NULL)
		return;		/* it timed out meanwhile */
	w->need_seq = 0;
	if (error != NULL) {
		snprintf(why, sizeof(why), "%s: %s", what == ASK_REFRESH ?
		    "the target's indices could not be refreshed" :
		    "the source's position could not be read", error);
		finish(sv, w, 503, why, now);
		return;
	}
	if (what == ASK_REFRESH) {
		finish(sv, w, 200, NULL, now);
		return;
	}
	if (strlen(text) >= sizeof(w->req_text) ||
	    coord_of(sv, text, &w->requested) == -1) {
		snprintf(why, sizeof(why), "the source answered a position "
		    "that is not one: '%.100s'", text);
		finish(sv, w, 503, why, now);
		return;
	}
	snprintf(w->req_text, sizeof(w->req_text), "%s", text);
	w->have_req = 1;
	sv_synced_step(sv, now);
}

void
sv_synced_step(struct sv *sv, long long now)
{
	struct sv_waiter *w;
	int i;

	for (i = 0; i < SV_HTTP_CONNS; i++) {
		w = &sv->waiters[i];
		if (!w->used)
			continue;
		if (now >= w->deadline_ms) {
			finish(sv, w, 408, NULL, now);
			continue;
		}
		if (w->need_seq == 0 && !w->refreshing && is_reached(sv, w))
			reached(sv, w, now);
	}
}

long long
sv_synced_deadline(const struct sv *sv)
{
	long long at = -1;
	int i;

	for (i = 0; i < SV_HTTP_CONNS; i++)
		if (sv->waiters[i].used && (at == -1 ||
		    sv->waiters[i].deadline_ms < at))
			at = sv->waiters[i].deadline_ms;
	return at;
}
