/*
 * opensearch_scan.c - every stored document of an index (or a glob of
 * them) read back for pg2osync verify, with the scroll API in _doc order
 * (the cheapest order: nothing is sorted), pages of PAGE documents, the
 * scroll cleared at the end whatever happened. A refresh first: a search
 * sees only refreshed documents, and one written a moment ago (by the
 * writer, by a repair) would look missing. A missing index holds no
 * document. Blocking on one connection; never logs, never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opensearch.h"
#include "p2o.h"

#define PAGE	2000
#define KEEP	"2m"

static int
page_fail(long status, const struct sbuf *resp, const char *index,
    struct p2o_err *err)
{
	char why[400];

	os_error_text(resp->buf, resp->len, why, sizeof(why));
	return p2o_fail(err, status == 401 || status == 403 ? P2O_EXIT_AUTH :
	    P2O_EXIT_TEMPFAIL, "reading index '%s': HTTP %ld: %s", index,
	    status, why);
}

/* the hits of one page to fn: how many, or -1; *sid gets the scroll id */
static int
hand_over(const struct sbuf *resp, const char *index, struct sbuf *sid,
    int (*fn)(void *, const struct target_doc *), void *arg,
    struct p2o_err *err)
{
	struct jspan root, hits, arr, hit, v;
	struct target_doc d;
	struct jiter it;
	int n = 0;

	if (target_body_object(resp->buf, resp->len, &root) == -1 ||
	    !jobj_get(root, "hits", &hits) || !jobj_get(hits, "hits", &arr) ||
	    jiter_init(&it, arr) == -1)
		return p2o_fail(err, P2O_EXIT_TEMPFAIL, "reading index '%s': "
		    "unusable _search response", index);
	sbuf_reset(sid);
	if (jobj_get(root, "_scroll_id", &v) && jspan_type(v) == J_STRING)
		sbuf_add(sid, v.p, v.n);
	while (jiter_elem(&it, &hit)) {
		memset(&d, 0, sizeof(d));
		if (!jobj_get(hit, "_index", &d.index) ||
		    !jobj_get(hit, "_id", &d.id) ||
		    !jobj_get(hit, "_source", &d.source))
			return p2o_fail(err, P2O_EXIT_TEMPFAIL, "reading index "
			    "'%s': a hit without _index, _id or _source",
			    index);
		if (!jobj_get(hit, "_routing", &d.routing))
			d.routing.p = NULL;
		if (fn(arg, &d) == -1)
			return -1;
		n++;
	}
	return n;
}

static int
os_scan(struct target_conn *c, const char *index,
    int (*fn)(void *, const struct target_doc *), void *arg,
    uint64_t *requests, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, body = SBUF_INIT, resp = SBUF_INIT;
	struct sbuf sid = SBUF_INIT;
	struct http_call call;
	struct p2o_err ignored;
	long status;
	int n, rc = -1;

	os_index_path(&path, index, "/_refresh?ignore_unavailable=true"
	    "&allow_no_indices=true");
	http_call_set(&call, "POST", path.buf, NULL, NULL, 0);
	(*requests)++;
	if (target_request(c, &call, &resp, &status, err) == -1)
		goto out;
	if (status != 200 && status != 404) {
		page_fail(status, &resp, index, err);
		goto out;
	}
	sbuf_reset(&path);
	os_index_path(&path, index, "/_search?scroll=" KEEP
	    "&ignore_unavailable=true&allow_no_indices=true");
	sbuf_addf(&body, "{\"size\":%d,\"sort\":[\"_doc\"]}", PAGE);
	http_call_set(&call, "POST", path.buf, NULL, body.buf, body.len);
	for (;;) {
		(*requests)++;
		if (target_request(c, &call, &resp, &status, err) == -1)
			goto out;
		if (status == 404) {
			rc = 0;
			goto out;
		}
		if (status != 200) {
			page_fail(status, &resp, index, err);
			goto out;
		}
		if ((n = hand_over(&resp, index, &sid, fn, arg, err)) == -1)
			goto out;
		if (n == 0 || sid.len == 0)
			break;
		sbuf_reset(&body);
		sbuf_adds(&body, "{\"scroll\":\"" KEEP "\",\"scroll_id\":");
		sbuf_add(&body, sid.buf, sid.len);
		sbuf_addc(&body, '}');
		http_call_set(&call, "POST", "/_search/scroll", NULL, body.buf,
		    body.len);
	}
	rc = 0;
out:
	if (sid.len) {
		/* a scroll left open holds its segments until it expires */
		sbuf_reset(&body);
		sbuf_adds(&body, "{\"scroll_id\":[");
		sbuf_add(&body, sid.buf, sid.len);
		sbuf_adds(&body, "]}");
		http_call_set(&call, "DELETE", "/_search/scroll", NULL,
		    body.buf, body.len);
		(*requests)++;
		(void)target_request(c, &call, &resp, &status, &ignored);
	}
	sbuf_release(&path);
	sbuf_release(&body);
	sbuf_release(&resp);
	sbuf_release(&sid);
	return rc;
}

const struct target_scan_ops os_scan_ops = {
	.scan = os_scan,
};
