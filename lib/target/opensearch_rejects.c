/*
 * opensearch_rejects.c - the quarantine of refused documents in OpenSearch:
 * the hidden index .pg2osync_rejects (beside .pg2osync_meta, made the same
 * way, with a mapping that indexes only what a listing sorts and filters
 * on; the document itself is kept in _source and never indexed, so no
 * document can be refused by the store that keeps it).
 *
 * Records carry the stream they came from (lib/source.h), so pipelines
 * sharing a cluster each count and list only their own. A record's key is
 * derived from the stream and the document's index, id and version, so
 * recording the same refusal again (a replay after a crash between the
 * record and the acknowledgement) replaces it instead of adding one, and
 * a newer refusal of the same document is a record of its own.
 *
 * The data path (writer) is pure like the rest of opensearch.c: requests
 * built, answers read. The listing and the clearing (pg2osync rejects)
 * block on a target_conn. Writes use refresh=true: the writer counts the
 * store at start-up and the verb lists it right after a replay, and both
 * must see every record already written; refusals are rare, so the cost
 * of a refresh per record request does not matter.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opensearch.h"
#include "p2o.h"
#include "xio.h"

#define REJECTS_INDEX	OS_REJECTS_INDEX

#define REJECTS_BODY \
	"{\"settings\":{\"index\":{\"number_of_shards\":1," \
	"\"auto_expand_replicas\":\"0-1\",\"hidden\":true}}," \
	"\"mappings\":{\"dynamic\":false,\"properties\":{" \
	"\"key\":{\"type\":\"keyword\"},\"op\":{\"type\":\"keyword\"}," \
	"\"stream\":{\"type\":\"keyword\"}," \
	"\"index\":{\"type\":\"keyword\"},\"id\":{\"type\":\"keyword\"}," \
	"\"version\":{\"type\":\"long\"}," \
	"\"position\":{\"type\":\"keyword\"}," \
	"\"table\":{\"type\":\"keyword\"}," \
	"\"reason\":{\"type\":\"text\"}}}}"

#define REJECTS_BULK	"/_bulk?refresh=true&filter_path=errors," \
			"items.*.status,items.*.error.type," \
			"items.*.error.reason,error.type,error.reason"

/* a page of the listing; the store is bounded by engine.max_rejects */
#define PAGE	500

/* 16 hex digits: FNV-1a 64 over the stream, the index, the id and the
 * version */
static void
record_key(const struct target_reject *r, char key[17])
{
	uint64_t h = 14695981039346656037ull;
	char v[24];
	size_t i;
	int n;

#define MIX(p, len) for (i = 0; i < (len); i++) \
	h = (h ^ (unsigned char)(p)[i]) * 1099511628211ull
	if (r->stream)
		MIX(r->stream, strlen(r->stream));
	MIX("\n", 1);
	MIX(r->index.p, r->index.n);
	MIX("\n", 1);
	MIX(r->id.p, r->id.n);
	n = snprintf(v, sizeof(v), "\n%" PRIu64, r->version);
	MIX(v, (size_t)n);
#undef MIX
	snprintf(key, 17, "%016" PRIx64, h);
}

static void
rejects_prepare_call(struct sbuf *path, struct http_call *call)
{
	os_create_call(REJECTS_INDEX, REJECTS_BODY, path, call);
}

/* {"term":{"stream":...}} */
static void
stream_query(struct sbuf *body, const char *stream)
{
	sbuf_adds(body, "\"query\":{\"term\":{\"stream\":");
	sbuf_add_jstr(body, stream, strlen(stream));
	sbuf_adds(body, "}}");
}

static void
rejects_count_call(const char *stream, struct sbuf *body,
    struct http_call *call)
{
	sbuf_reset(body);
	sbuf_addc(body, '{');
	stream_query(body, stream);
	sbuf_addc(body, '}');
	http_call_set(call, "POST", "/" REJECTS_INDEX "/_count", NULL,
	    body->buf, body->len);
}

static enum target_answer
rejects_count_answer(long status, const struct sbuf *resp, uint64_t *n,
    char *why, size_t whylen)
{
	enum target_answer a = os_answer_class(status, resp->buf, resp->len);
	struct jspan obj, v;
	char type[64], reason[8];

	*n = 0;
	if (status == 404) {
		os_error(resp->buf, resp->len, type, sizeof(type), reason,
		    sizeof(reason));
		if (strcmp(type, "index_not_found_exception") == 0)
			return TA_OK;
	}
	if (a != TA_OK) {
		os_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	if (target_body_object(resp->buf, resp->len, &obj) == -1 ||
	    !jobj_get(obj, "count", &v) || jnum_u64(v, n) == -1) {
		snprintf(why, whylen, "unusable _count response");
		return TA_RETRY;
	}
	return TA_OK;
}

static void
rejects_call(const struct target_reject *r, int n, struct sbuf *body,
    struct http_call *call)
{
	char key[17];
	int i;

	sbuf_reset(body);
	for (i = 0; i < n; i++) {
		record_key(&r[i], key);
		sbuf_addf(body, "{\"index\":{\"_index\":\"" REJECTS_INDEX
		    "\",\"_id\":\"%s\"}}\n{\"key\":\"%s\",\"op\":\"%s\"",
		    key, key, r[i].del ? "delete" : "index");
		target_reject_put(body, &r[i], NULL);
	}
	http_call_set(call, "POST", REJECTS_BULK, "application/x-ndjson",
	    body->buf, body->len);
}

/* every item of a bulk answer for the store written (a delete: or
 * already gone): TA_OK, else the first failure in why */
static enum target_answer
store_answer(long status, const struct sbuf *resp, int n, int del,
    char *why, size_t whylen)
{
	struct item_result *items;
	enum target_answer a;
	int i;

	items = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*items));
	a = os_bulk_answer(status, resp->buf, resp->len, n, items, why,
	    whylen);
	for (i = 0; a == TA_OK && i < n; i++)
		if (items[i].verdict != ITEM_OK &&
		    !(del && items[i].verdict == ITEM_NOTFOUND)) {
			snprintf(why, whylen, "HTTP %d: %s: %s", items[i].status,
			    items[i].type[0] ? items[i].type : "error",
			    items[i].reason);
			a = items[i].verdict == ITEM_REJECT ? TA_REFUSED :
			    TA_RETRY;
		}
	free(items);
	return a;
}

static enum target_answer
rejects_answer(long status, const struct sbuf *resp, int n, char *why,
    size_t whylen)
{
	return store_answer(status, resp, n, 0, why, whylen);
}

/* ---- the listing and the clearing, blocking ---- */

static int
fail_answer(enum target_answer a, long status, const char *why,
    struct p2o_err *err)
{
	return p2o_fail(err, a == TA_AUTH ? P2O_EXIT_AUTH : P2O_EXIT_TEMPFAIL,
	    "index '" REJECTS_INDEX "': HTTP %ld: %s", status, why);
}

/* one hit's _source as a record: 0, or -1 when it is not one of ours */
static int
add_record(struct target_rejects *set, struct jspan src)
{
	const char *key;

	if (jspan_type(src) != J_OBJECT ||
	    (key = target_rejects_str(set, src, "key")) == NULL)
		return -1;
	return target_rejects_add(set, src, key) ? 0 : -1;
}

/* one page after the last record read: how many hits it held, or -1 */
static int
read_page(struct target_conn *c, const char *stream,
    struct target_rejects *set, int size, struct p2o_err *err)
{
	struct sbuf body = SBUF_INIT, *resp;
	struct jspan root, hits, arr, hit, src, total;
	struct http_call call;
	struct jiter it;
	char why[400];
	long status;
	int n = 0, rc = -1;

	sbuf_addf(&body, "{\"size\":%d,\"track_total_hits\":true,"
	    "\"sort\":[{\"version\":\"asc\"},{\"key\":\"asc\"}],", size);
	stream_query(&body, stream);
	if (set->n > 0) {
		sbuf_addf(&body, ",\"search_after\":[%" PRIu64 ",",
		    set->r[set->n - 1].version);
		sbuf_add_jstr(&body, set->key[set->n - 1],
		    strlen(set->key[set->n - 1]));
		sbuf_addc(&body, ']');
	}
	sbuf_addc(&body, '}');
	resp = xcalloc(1, sizeof(*resp));
	http_call_set(&call, "POST", "/" REJECTS_INDEX "/_search", NULL,
	    body.buf, body.len);
	if (target_request(c, &call, resp, &status, err) == -1)
		goto out;
	if (status == 404) {
		/* no store: nothing was ever quarantined */
		rc = 0;
		goto out;
	}
	if (os_answer_class(status, resp->buf, resp->len) != TA_OK) {
		os_error_text(resp->buf, resp->len, why, sizeof(why));
		fail_answer(os_answer_class(status, resp->buf, resp->len), status,
		    why, err);
		goto out;
	}
	if (target_body_object(resp->buf, resp->len, &root) == -1 ||
	    !jobj_get(root, "hits", &hits) ||
	    !jobj_get(hits, "hits", &arr) || jiter_init(&it, arr) == -1) {
		p2o_fail(err, P2O_EXIT_TEMPFAIL, "index '" REJECTS_INDEX
		    "': unusable _search response");
		goto out;
	}
	if (jobj_get(hits, "total", &total) &&
	    jobj_get(total, "value", &total))
		jnum_u64(total, &set->total);
	/* the records point into the answer: the set keeps it */
	target_rejects_keep(set, (char *)resp->buf);
	resp->buf = NULL;
	while (jiter_elem(&it, &hit)) {
		n++;
		if (!jobj_get(hit, "_source", &src) ||
		    add_record(set, src) == -1) {
			p2o_fail(err, P2O_EXIT_TEMPFAIL, "index '"
			    REJECTS_INDEX "' holds a record that is not one "
			    "of ours");
			goto out;
		}
	}
	rc = n;
out:
	sbuf_release(&body);
	sbuf_release(resp);
	free(resp);
	return rc;
}

static int
rejects_read(struct target_conn *c, const char *stream, int limit,
    struct target_rejects *set, struct p2o_err *err)
{
	int want, got;

	memset(set, 0, sizeof(*set));
	while (set->n < limit) {
		want = limit - set->n < PAGE ? limit - set->n : PAGE;
		if ((got = read_page(c, stream, set, want, err)) == -1)
			return -1;
		if (got < want)
			break;
	}
	return 0;
}

static int
rejects_clear(struct target_conn *c, char *const *keys, int n,
    struct p2o_err *err)
{
	struct sbuf body = SBUF_INIT, resp = SBUF_INIT;
	struct http_call call;
	enum target_answer a;
	char why[400];
	long status;
	int i, rc = -1;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		sbuf_adds(&body, "{\"delete\":{\"_index\":\"" REJECTS_INDEX
		    "\",\"_id\":");
		sbuf_add_jstr(&body, keys[i], strlen(keys[i]));
		sbuf_adds(&body, "}}\n");
	}
	http_call_set(&call, "POST", REJECTS_BULK, "application/x-ndjson",
	    body.buf, body.len);
	if (target_request(c, &call, &resp, &status, err) == -1)
		goto out;
	if ((a = store_answer(status, &resp, n, 1, why, sizeof(why))) != TA_OK)
		fail_answer(a, status, why, err);
	else
		rc = 0;
out:
	sbuf_release(&body);
	sbuf_release(&resp);
	return rc;
}

const struct target_rejects_ops os_rejects_ops = {
	.prepare_call = rejects_prepare_call,
	.count_call = rejects_count_call,
	.count_answer = rejects_count_answer,
	.call = rejects_call,
	.answer = rejects_answer,
	.read = rejects_read,
	.clear = rejects_clear,
};
