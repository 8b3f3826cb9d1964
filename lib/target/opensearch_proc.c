/*
 * opensearch_proc.c - the OpenSearch barriers, each several requests
 * stepped through one at a time, both the same walk: a _refresh of the
 * index (so a search sees every write before the barrier), a search for
 * the documents to remove, read page by page through a scroll, and a bulk
 * delete of each page at the barrier's version with external_gte, so a
 * document written at a later version answers 409 and keeps its place:
 *
 *  - a clear (a truncate at version T): every document of an index (or
 *    of a glob of indices), or those whose field holds a value (one half
 *    of a join). A _delete_by_query would be one request, but it deletes
 *    whatever the index holds, newer than the truncate or not, and leaves
 *    each tombstone at the deleted document's own version: a copy the
 *    load wrote after the truncate would go, and the stream's older
 *    writes of the same row would then lose to its tombstone. Deleting at
 *    T removes exactly the documents at or below T, leaves tombstones at
 *    T that every later write beats, and is idempotent, so a clear cut
 *    short by a crash is simply done again (docs/architecture.md, "A
 *    truncate").
 *  - a join parent's cascade: the documents whose join field names the
 *    parent, searched on the parent's shard (its id routes every child),
 *    deleted at the parent delete's version. The writer cannot know which
 *    children the target holds, so it asks.
 *
 * Pure: builds requests and reads answers; never logs, never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opensearch.h"

/* how long a scroll lives between two pages */
#define SCROLL_KEEP	"1m"
/* hits per page: a join parent has few children; a clear walks a whole
 * index, where a larger page means fewer round trips (measured in
 * docs/architecture.md) while a page's bulk stays a few hundred KiB */
#define CASCADE_PAGE	1000
#define CLEAR_PAGE	5000
#define PAGE_MAX	CLEAR_PAGE

enum step { S_REFRESH, S_SEARCH, S_PAGE, S_SCROLL, S_END, S_DONE };

static int
page_size(const struct target_proc *p)
{
	return p->kind == PROC_CLEAR ? CLEAR_PAGE : CASCADE_PAGE;
}

/* the documents of a clear: all, or one half of a join; in index order,
 * which a scroll reads cheapest */
static void
clear_query(struct target_proc *p)
{
	struct sbuf *q = &p->query;

	sbuf_addf(q, "{\"size\":%d,\"_source\":false,\"sort\":[\"_doc\"],"
	    "\"query\":", CLEAR_PAGE);
	if (p->field.p == NULL) {
		sbuf_adds(q, "{\"match_all\":{}}}");
		return;
	}
	sbuf_adds(q, "{\"term\":{");
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

	sbuf_addf(q, "{\"size\":%d,\"_source\":false,\"sort\":[\"_doc\"],"
	    "\"query\":{\"bool\":{\"should\":[", CASCADE_PAGE);
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
	case S_SEARCH:
		os_index_path(&p->path, p->index, "/_search?scroll="
		    SCROLL_KEEP);
		if (p->kind == PROC_CASCADE) {
			sbuf_adds(&p->path, "&routing=");
			http_escape(&p->path, p->parent, "");
		}
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

/* what a barrier is doing, for a message */
static void
doing(const struct target_proc *p, char *buf, size_t len)
{
	if (p->kind == PROC_CLEAR)
		snprintf(buf, len, "clearing '%s'", p->index);
	else
		snprintf(buf, len, "deleting the children of '%s' in '%s'",
		    p->parent, p->index);
}

static enum target_answer
answer_refresh(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	enum target_answer a;
	char text[400], what[300];

	if (status == 404) {
		/* no such index: nothing to clear, no children */
		p->gone = 1;
		return TA_OK;
	}
	if ((a = failed(status, resp, text, sizeof(text))) == TA_AUTH)
		snprintf(why, whylen, "%s", text);
	else if (a != TA_OK) {
		doing(p, what, sizeof(what));
		snprintf(why, whylen, "%s: refresh %s (HTTP %ld): %s", what,
		    a == TA_RETRY ? "failed" : "refused", status, text);
	}
	if (a != TA_OK)
		return a;
	p->step = S_SEARCH;
	return TA_NEXT;
}

/* a search or scroll answer: its scroll id, and the deletes of its hits
 * at the barrier's version into body; the number of hits, -1 when garbled */
static int
read_page(struct target_proc *p, const struct sbuf *resp)
{
	struct jspan root, sid, hits, list, h, index, id, routing;
	struct jiter it;
	int n = 0, have_routing;

	sbuf_reset(&p->body);
	if (target_body_object(resp->buf, resp->len, &root) == -1 ||
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
		if (n == page_size(p) || jspan_type(h) != J_OBJECT ||
		    !jobj_get(h, "_index", &index) ||
		    jspan_type(index) != J_STRING ||
		    !jobj_get(h, "_id", &id) || jspan_type(id) != J_STRING)
			return -1;
		have_routing = jobj_get(h, "_routing", &routing) &&
		    jspan_type(routing) == J_STRING;
		sbuf_adds(&p->body, "{\"delete\":{\"_index\":");
		sbuf_add(&p->body, index.p, index.n);
		sbuf_adds(&p->body, ",\"_id\":");
		sbuf_add(&p->body, id.p, id.n);
		sbuf_adds(&p->body, ",\"version\":");
		sbuf_add_u64(&p->body, p->version);
		sbuf_adds(&p->body, ",\"version_type\":\"external_gte\"");
		/* a document is where its routing put it: the delete goes
		 * to the same shard, or it would miss it and leave a
		 * tombstone beside it; a child without one is on its
		 * parent's shard */
		if (have_routing) {
			sbuf_adds(&p->body, ",\"routing\":");
			sbuf_add(&p->body, routing.p, routing.n);
		} else if (p->kind == PROC_CASCADE) {
			sbuf_adds(&p->body, ",\"routing\":");
			sbuf_add_jstr(&p->body, p->parent, strlen(p->parent));
		}
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
	char text[400], what[300];
	int n;

	if (p->step == S_END)
		/* a scroll left open expires on its own */
		return TA_OK;
	if (status == 404) {
		/* no such index: nothing to delete; a scroll that expired
		 * during a backoff: search again from the start (the deletes
		 * already done are idempotent, and gone from the search) */
		if (p->step == S_SEARCH) {
			p->gone = 1;
			return TA_OK;
		}
		p->step = S_REFRESH;
		return TA_NEXT;
	}
	if ((a = failed(status, resp, text, sizeof(text))) == TA_AUTH)
		snprintf(why, whylen, "%s", text);
	else if (a != TA_OK) {
		doing(p, what, sizeof(what));
		snprintf(why, whylen, "%s: search %s (HTTP %ld): %s", what,
		    a == TA_RETRY ? "failed" : "refused", status, text);
	}
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

/* a page deleted, or asked again whole */
static enum target_answer
answer_page(struct target_proc *p, long status, const struct sbuf *resp,
    char *why, size_t whylen)
{
	enum target_answer a;
	char text[512], what[300];
	int i, failed = 0;
	uint64_t deleted = 0, newer = 0;

	if (p->items == NULL)
		p->items = xcalloc(PAGE_MAX, sizeof(*p->items));
	a = os_bulk_answer(status, resp->buf, resp->len, p->npage, p->items,
	    text, sizeof(text));
	if (a == TA_AUTH) {
		snprintf(why, whylen, "%s", text);
		return TA_AUTH;
	}
	doing(p, what, sizeof(what));
	if (a != TA_OK) {
		snprintf(why, whylen, "%s failed (HTTP %ld): %.400s", what,
		    status, text);
		return TA_RETRY;
	}
	p->page_done = p->npage;
	for (i = 0; i < p->npage; i++) {
		switch (p->items[i].verdict) {
		case ITEM_OK:
		case ITEM_NOTFOUND:
			deleted++;
			break;
		case ITEM_CONFLICT:
			/* written after the barrier's version: it stays */
			newer++;
			break;
		default:
			failed++;
			break;
		}
	}
	if (failed) {
		/* the deletes are idempotent: the page goes again whole */
		snprintf(why, whylen, "%s: %d of %d documents not deleted yet",
		    what, failed, p->npage);
		return TA_RETRY;
	}
	p->deleted += deleted;
	p->newer += newer;
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
		return answer_refresh(p, status, resp, why, whylen);
	case S_PAGE:
		return answer_page(p, status, resp, why, whylen);
	default:
		return answer_search(p, status, resp, why, whylen);
	}
}
