/*
 * cascade.c - a join parent's deletion carried to its children. The
 * writer cannot know which children the target holds, so it asks: a
 * search for the documents whose join field names the parent (routed to
 * the parent's shard, where every child lives), read page by page through
 * a scroll, and a bulk delete of each page at the parent delete's version,
 * so a child written later than the parent's delete keeps its place. A
 * delete_by_query would have been one request, but it carries no version.
 * Also the query of a clear that removes one half of a join. Builds
 * requests and reads responses; performs no I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "writer.h"

/* how long a scroll lives between two pages */
#define SCROLL_KEEP	"1m"

char *
clear_query(struct jspan field, struct jspan value)
{
	struct sbuf q = SBUF_INIT;

	if (field.p == NULL) {
		sbuf_adds(&q, "{\"query\":{\"match_all\":{}}}");
		return q.buf;
	}
	sbuf_adds(&q, "{\"query\":{\"term\":{");
	sbuf_add(&q, field.p, field.n);
	sbuf_addc(&q, ':');
	sbuf_add(&q, value.p, value.n);
	sbuf_adds(&q, "}}}");
	return q.buf;
}

char *
cascade_query(struct jspan children, struct jspan parent)
{
	struct sbuf q = SBUF_INIT;
	struct jiter it;
	struct jspan name;
	int first = 1;

	sbuf_addf(&q, "{\"size\":%d,\"_source\":false,\"query\":{\"bool\":"
	    "{\"should\":[", CASCADE_PAGE);
	jiter_init(&it, children);
	while (jiter_elem(&it, &name)) {
		if (!first)
			sbuf_addc(&q, ',');
		first = 0;
		sbuf_adds(&q, "{\"parent_id\":{\"type\":");
		sbuf_add(&q, name.p, name.n);
		sbuf_adds(&q, ",\"id\":");
		sbuf_add(&q, parent.p, parent.n);
		sbuf_adds(&q, "}}");
	}
	sbuf_adds(&q, "]}}}");
	return q.buf;
}

void
cascade_search(const struct op *op, struct sbuf *path, struct sbuf *body)
{
	sbuf_reset(path);
	sbuf_addc(path, '/');
	url_escape(path, op->text, URL_PATH_KEEP);
	sbuf_adds(path, "/_search?scroll=" SCROLL_KEEP "&routing=");
	url_escape(path, op->parent, "");
	sbuf_reset(body);
	sbuf_adds(body, op->query);
}

void
cascade_scroll(const struct sbuf *scroll_id, struct sbuf *path,
    struct sbuf *body)
{
	sbuf_reset(path);
	sbuf_adds(path, "/_search/scroll");
	sbuf_reset(body);
	sbuf_adds(body, "{\"scroll\":\"" SCROLL_KEEP "\",\"scroll_id\":");
	sbuf_add(body, scroll_id->buf, scroll_id->len);
	sbuf_addc(body, '}');
}

void
cascade_scroll_end(const struct sbuf *scroll_id, struct sbuf *path,
    struct sbuf *body)
{
	sbuf_reset(path);
	sbuf_adds(path, "/_search/scroll");
	sbuf_reset(body);
	sbuf_adds(body, "{\"scroll_id\":[");
	sbuf_add(body, scroll_id->buf, scroll_id->len);
	sbuf_adds(body, "]}");
}

int
cascade_page(const struct op *op, const char *resp, size_t len,
    struct sbuf *scroll_id, struct sbuf *bulk)
{
	struct jspan root = { resp, len }, sid, hits, list, h, index, id,
	    routing;
	struct jiter it;
	const char *why;
	size_t off;
	int n = 0;

	sbuf_reset(bulk);
	if (resp == NULL || jscan_validate(resp, len, &off, &why) == -1)
		return -1;
	while (root.n && (*root.p == ' ' || *root.p == '\n' ||
	    *root.p == '\r' || *root.p == '\t'))
		root.p++, root.n--;
	if (jspan_type(root) != J_OBJECT ||
	    !jobj_get(root, "hits", &hits) || !jobj_get(hits, "hits", &list) ||
	    jspan_type(list) != J_ARRAY)
		return -1;
	if (jobj_get(root, "_scroll_id", &sid) &&
	    jspan_type(sid) == J_STRING) {
		sbuf_reset(scroll_id);
		sbuf_add(scroll_id, sid.p, sid.n);
	}
	jiter_init(&it, list);
	while (jiter_elem(&it, &h)) {
		if (jspan_type(h) != J_OBJECT ||
		    !jobj_get(h, "_index", &index) ||
		    jspan_type(index) != J_STRING ||
		    !jobj_get(h, "_id", &id) || jspan_type(id) != J_STRING)
			return -1;
		sbuf_adds(bulk, "{\"delete\":{\"_index\":");
		sbuf_add(bulk, index.p, index.n);
		sbuf_adds(bulk, ",\"_id\":");
		sbuf_add(bulk, id.p, id.n);
		sbuf_adds(bulk, ",\"version\":");
		sbuf_add_u64(bulk, op->v);
		sbuf_adds(bulk, ",\"version_type\":\"external_gte\"");
		/* a child is where its routing put it: the parent's id */
		sbuf_adds(bulk, ",\"routing\":");
		if (jobj_get(h, "_routing", &routing) &&
		    jspan_type(routing) == J_STRING)
			sbuf_add(bulk, routing.p, routing.n);
		else
			sbuf_add_jstr(bulk, op->parent, strlen(op->parent));
		sbuf_adds(bulk, "}}\n");
		n++;
	}
	return n;
}
