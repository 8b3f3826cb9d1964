/*
 * opensearch_proc.c - the OpenSearch barriers, each several requests
 * stepped through one at a time:
 *
 *  - a clear: a _refresh of the index (so the delete sees every write
 *    before it), then a _delete_by_query of everything, or of the
 *    documents whose field holds a value (one half of a join);
 *  - a join parent's cascade: a _refresh, a search for the documents
 *    whose join field names the parent (routed to the parent's shard,
 *    where every child lives), read page by page through a scroll, and a
 *    bulk delete of each page at the parent delete's version, so a child
 *    written later than the parent's delete keeps its place. A
 *    delete_by_query would have been one request, but it carries no
 *    version. The writer cannot know which children the target holds, so
 *    it asks.
 *
 * Pure: builds requests and reads answers; never logs, never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opensearch.h"

/* how long a scroll lives between two pages */
#define SCROLL_KEEP	"1m"
#define CASCADE_PAGE	1000
/* delete_by_query on a large index takes as long as it takes */
#define CLEAR_TIMEOUT_MS	(60L * 60 * 1000)

enum step { S_REFRESH, S_DELETE, S_SEARCH, S_PAGE, S_SCROLL, S_END, S_DONE };

static void
clear_query(struct target_proc *p)
{
	struct sbuf *q = &p->query;

	if (p->field.p == NULL) {
		sbuf_adds(q, "{\"query\":{\"match_all\":{}}}");
		return;
	}
	sbuf_adds(q, "{\"query\":{\"term\":{");
	sbuf_add(q, p->field.p, p->field.n);
	sbuf_addc(q, ':');
	sbuf_add(q, p->value.p, p->value.n);
	sbuf_adds(q, "}}}");
}

static void
cascade_query(struct target_proc *p)
{
	struct sbuf *q = &p->query;
	struct jiter it;
	struct jspan name;
	int first = 1;

	sbuf_addf(q, "{\"size\":%d,\"_source\":false,\"query\":{\"bool\":"
	    "{\"should\":[", CASCADE_PAGE);
	jiter_init(&it, p->children);
	while (jiter_elem(&it, &name)) {
		if (!first)
			sbuf_addc(q, ',');
		first = 0;
		sbuf_adds(q, "{\"parent_id\":{\"type\":");
		sbuf_add(q, name.p, name.n);
		sbuf_adds(q, ",\"id\":");
		sbuf_add(q, p->parent_id.p, p->parent_id.n);
		sbuf_adds(q, "}}");
	}
	sbuf_adds(q, "]}}}");
}

void
os_proc_call(struct target_proc *p, struct http_call *call)
{
	if (p->query.len == 0) {
		if (p->kind == PROC_CLEAR)
			clear_query(p);
		else
			cascade_query(p);
	}
	switch ((enum step)p->step) {
	case S_REFRESH:
		os_index_path(&p->path, p->index, "/_refresh");
		http_call_set(call, "POST", p->path.buf, NULL, NULL, 0);
		break;
	case S_DELETE:
		os_index_path(&p->path, p->index, "/_delete_by_query?"
		    "conflicts=proceed&refresh=true");
		http_call_set(call, "POST", p->path.buf, NULL, p->query.buf,
		    p->query.len);
		call->timeout_ms = CLEAR_TIMEOUT_MS;
		break;
	case S_SEARCH:
		os_index_path(&p->path, p->index, "/_search?scroll="
		    SCROLL_KEEP "&routing=");
		http_escape(&p->path, p->parent, "");
		http_call_set(call, "POST", p->path.buf, NULL, p->query.buf,
		    p->query.len);
		break;
	case S_PAGE:
		/* the deletes of the page the last answer held */
		p->page_bytes = p->body.len;
		os_bulk_call(p->body.buf, p->body.len, call);
		break;
	case S_SCROLL:
		sbuf_reset(&p->path);
		sbuf_adds(&p->path, "/_search/scroll");
		sbuf_reset(&p->body);
		sbuf_adds(&p->body, "{\"scroll\":\"" SCROLL_KEEP
		    "\",\"scroll_id\":");
		sbuf_add(&p->body, p->scroll.buf, p->scroll.len);
		sbuf_addc(&p->body, '}');
		http_call_set(call, "POST", p->path.buf, NULL, p->body.buf,
		    p->body.len);
		break;
	case S_END:
		sbuf_reset(&p->path);
		sbuf_adds(&p->path, "/_search/scroll");
		sbuf_reset(&p->body);
		sbuf_adds(&p->body, "{\"scroll_id\":[");
		sbuf_add(&p->body, p->scroll.buf, p->scroll.len);
		sbuf_adds(&p->body, "]}");
		http_call_set(call, "DELETE", p->path.buf, NULL, p->body.buf,
		    p->body.len);
		break;
	case S_DONE:
		break;
	}
}

/* 1 if a _delete_by_query answer reports no failure and no timeout */
static int
dbq_complete(const struct sbuf *resp)
{
	struct jspan obj, failures, timed_out;
	struct jiter it;

	if (os_body_object(resp->buf, resp->len, &obj) == -1)
		return 0;
	if (jobj_get(obj, "failures", &failures) &&
	    (jiter_init(&it, failures) == -1 ||
	    jspan_type(failures) != J_ARRAY || jiter_elem(&it, &failures)))
		return 0;
	return !(jobj_get(obj, "timed_out", &timed_out) &&
	    jspan_type(timed_out) == J_TRUE);
}

/* the class of an answer (TA_OK: a success), the target's words in text
 * when it failed */
static enum target_answer
failed(long status, const struct sbuf *resp, char *text, size_t tlen)
{
	enum target_answer a = os_answer_class(status, resp->buf, resp->len);

	if (a != TA_OK)
		os_error_text(resp->buf, resp->len, text, tlen);
	return a;
}

/* a refresh or the delete of a clear, or a cascade's refresh */
static enum target_answer
answer_clear(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	enum target_answer a;
	char text[400];

	if (status == 404) {
		/* no such index: nothing to clear, no children */
		p->gone = 1;
		return TA_OK;
	}
	if ((a = failed(status, resp, text, sizeof(text))) == TA_AUTH)
		snprintf(why, whylen, "%s", text);
	else if (a != TA_OK)
		snprintf(why, whylen, "clearing '%s' %s (HTTP %ld): %s",
		    p->index, a == TA_RETRY ? "failed" : "refused", status,
		    text);
	if (a != TA_OK)
		return a;
	if (p->step == S_REFRESH) {
		p->step = p->kind == PROC_CASCADE ? S_SEARCH : S_DELETE;
		return TA_NEXT;
	}
	if (!dbq_complete(resp)) {
		snprintf(why, whylen, "clearing '%s' left documents behind "
		    "(version conflicts or shard failures)", p->index);
		return TA_RETRY;
	}
	return TA_OK;
}

/* a search or scroll answer: its scroll id, and the deletes of its hits
 * at the parent delete's version into body; the number of hits, -1 when
 * garbled */
static int
read_page(struct target_proc *p, const struct sbuf *resp)
{
	struct jspan root, sid, hits, list, h, index, id, routing;
	struct jiter it;
	int n = 0;

	sbuf_reset(&p->body);
	if (os_body_object(resp->buf, resp->len, &root) == -1 ||
	    !jobj_get(root, "hits", &hits) || jspan_type(hits) != J_OBJECT ||
	    !jobj_get(hits, "hits", &list) || jspan_type(list) != J_ARRAY)
		return -1;
	if (jobj_get(root, "_scroll_id", &sid) &&
	    jspan_type(sid) == J_STRING) {
		sbuf_reset(&p->scroll);
		sbuf_add(&p->scroll, sid.p, sid.n);
	}
	jiter_init(&it, list);
	while (jiter_elem(&it, &h)) {
		/* more than the page asked for is not an answer to it (and
		 * would not fit the page's items) */
		if (n == CASCADE_PAGE || jspan_type(h) != J_OBJECT ||
		    !jobj_get(h, "_index", &index) ||
		    jspan_type(index) != J_STRING ||
		    !jobj_get(h, "_id", &id) || jspan_type(id) != J_STRING)
			return -1;
		sbuf_adds(&p->body, "{\"delete\":{\"_index\":");
		sbuf_add(&p->body, index.p, index.n);
		sbuf_adds(&p->body, ",\"_id\":");
		sbuf_add(&p->body, id.p, id.n);
		sbuf_adds(&p->body, ",\"version\":");
		sbuf_add_u64(&p->body, p->version);
		sbuf_adds(&p->body, ",\"version_type\":\"external_gte\"");
		/* a child is where its routing put it: the parent's id */
		sbuf_adds(&p->body, ",\"routing\":");
		if (jobj_get(h, "_routing", &routing) &&
		    jspan_type(routing) == J_STRING)
			sbuf_add(&p->body, routing.p, routing.n);
		else
			sbuf_add_jstr(&p->body, p->parent, strlen(p->parent));
		sbuf_adds(&p->body, "}}\n");
		n++;
	}
	return n;
}

static enum target_answer
answer_search(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	enum target_answer a;
	char text[400];
	int n;

	if (p->step == S_END)
		/* a scroll left open expires on its own */
		return TA_OK;
	if (status == 404) {
		/* no such index: no children; a scroll that expired during
		 * a backoff: search again from the start */
		if (p->step == S_SEARCH) {
			p->gone = 1;
			return TA_OK;
		}
		p->step = S_REFRESH;
		return TA_NEXT;
	}
	if ((a = failed(status, resp, text, sizeof(text))) == TA_AUTH)
		snprintf(why, whylen, "%s", text);
	else if (a == TA_REFUSED)
		snprintf(why, whylen, "searching the children of '%s' in '%s' "
		    "refused (HTTP %ld): %s", p->parent, p->index, status, text);
	else if (a != TA_OK)
		snprintf(why, whylen, "searching the children of a join parent "
		    "failed (HTTP %ld): %s", status, text);
	if (a != TA_OK)
		return a;
	if ((n = read_page(p, resp)) == -1) {
		snprintf(why, whylen, "unusable search response");
		return TA_RETRY;
	}
	p->npage = n;
	p->step = n > 0 ? S_PAGE : p->scroll.len ? S_END : S_DONE;
	return p->step == S_DONE ? TA_OK : TA_NEXT;
}

/* a page of children deleted, or asked again whole */
static enum target_answer
answer_page(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	enum target_answer a;
	char text[512];
	int i, failed = 0;

	if (p->items == NULL)
		p->items = xcalloc(CASCADE_PAGE, sizeof(*p->items));
	a = os_bulk_answer(status, resp->buf, resp->len, p->npage, p->items,
	    text, sizeof(text));
	if (a == TA_AUTH) {
		snprintf(why, whylen, "%s", text);
		return TA_AUTH;
	}
	if (a != TA_OK) {
		snprintf(why, whylen, "deleting a join parent's children "
		    "failed (HTTP %ld): %.400s", status, text);
		return TA_RETRY;
	}
	p->page_done = p->npage;
	for (i = 0; i < p->npage; i++)
		if (p->items[i].verdict != ITEM_OK &&
		    p->items[i].verdict != ITEM_NOTFOUND &&
		    p->items[i].verdict != ITEM_CONFLICT)
			failed++;
	if (failed) {
		/* the deletes are idempotent: the page goes again whole */
		snprintf(why, whylen, "%d of %d children of a deleted join "
		    "parent not deleted yet", failed, p->npage);
		return TA_RETRY;
	}
	p->step = S_SCROLL;
	return TA_NEXT;
}

enum target_answer
os_proc_answer(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	if (whylen)
		why[0] = '\0';
	switch ((enum step)p->step) {
	case S_REFRESH:
	case S_DELETE:
		return answer_clear(p, status, resp, why, whylen);
	case S_PAGE:
		return answer_page(p, status, resp, why, whylen);
	default:
		return answer_search(p, status, resp, why, whylen);
	}
}
