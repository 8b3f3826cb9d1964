/*
 * opensearch.c - the OpenSearch target: its capabilities and its table,
 * and the data path of its protocol: the node's answer at GET /, its
 * error bodies (the one reader of them), index creation, the _bulk action
 * line of an index or a delete (external_gte versions, routing, ingest
 * pipeline), what a _bulk answer says about each item, and the _mget
 * behind TOAST completion. Barriers are opensearch_proc.c's, state and
 * index settings opensearch_state.c's.
 *
 * Pure: builds requests and reads answers, never makes a request, never
 * logs, never exits. A document is copied into the arena as the bytes it
 * arrived in, never parsed into a tree.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opensearch.h"
#include "p2o.h"

/* OpenSearch stores external versions as a signed 64-bit long */
#define VERSION_MAX	((uint64_t)INT64_MAX)

/* only what the classifier reads: the item status and error, not the
 * per-item metadata a large batch would otherwise send back */
#define BULK_PATH	"/_bulk?filter_path=errors,items.*.status," \
			"items.*.error.type,items.*.error.reason," \
			"error.type,error.reason"

/*
 * A block is the cluster refusing writes for a while, not us: past the
 * disk's flood-stage watermark the node puts read-only-allow-delete on
 * every index and a create-index block on the cluster, and an operator may
 * set those or a write block by hand. It comes as a cluster_block_exception
 * or an index_create_block_exception, "blocked by: [FORBIDDEN/10/cluster
 * create-index blocked (api)];", with 403 or 429, and goes when the disk
 * has room again or the operator lifts it: waited out, never taken for
 * refused credentials.
 */
int
os_blocked(const char *type, const char *reason)
{
	static const char suffix[] = "_block_exception";
	size_t n = strlen(type), k = sizeof(suffix) - 1;

	return (n >= k && strcmp(type + n - k, suffix) == 0) ||
	    strstr(reason, "blocked by: [") != NULL;
}

enum target_answer
os_answer_class(long status, const char *body, size_t len)
{
	char type[96], reason[320];

	if (status >= 200 && status < 300)
		return TA_OK;
	if (status == 403) {
		/* a security refusal (the security plugin's
		 * security_exception, a proxy's page) is permanent */
		os_error(body, len, type, sizeof(type), reason,
		    sizeof(reason));
		return os_blocked(type, reason) ? TA_RETRY : TA_AUTH;
	}
	if (status == 401)
		return TA_AUTH;
	if (status == 429 || status >= 500 || status < 200)
		return TA_RETRY;
	return TA_REFUSED;
}

void
os_copy_cut(struct jspan s, char *buf, size_t cap)
{
	char *plain;
	size_t n;

	if (cap == 0)
		return;
	buf[0] = '\0';
	if (s.p == NULL || jspan_type(s) != J_STRING)
		return;
	plain = jstr_dup(s);
	n = strlen(plain);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, plain, n);
	buf[n] = '\0';
	free(plain);
}

/* an error member: an object with type and reason, or what some proxies
 * send, a string */
static void
error_fields(struct jspan e, char *type, size_t tcap, char *reason,
    size_t rcap)
{
	struct jspan v;

	if (tcap)
		type[0] = '\0';
	if (rcap)
		reason[0] = '\0';
	if (jspan_type(e) == J_STRING) {
		snprintf(type, tcap, "error");
		os_copy_cut(e, reason, rcap);
		return;
	}
	if (jspan_type(e) != J_OBJECT)
		return;
	if (jobj_get(e, "type", &v))
		os_copy_cut(v, type, tcap);
	if (jobj_get(e, "reason", &v))
		os_copy_cut(v, reason, rcap);
}

int
os_error(const char *body, size_t len, char *type, size_t tcap,
    char *reason, size_t rcap)
{
	struct jspan obj, e;

	if (target_body_object(body, len, &obj) == -1 ||
	    !jobj_get(obj, "error", &e) || jspan_type(e) == J_NULL) {
		if (tcap)
			type[0] = '\0';
		if (rcap)
			reason[0] = '\0';
		return 0;
	}
	error_fields(e, type, tcap, reason, rcap);
	return 1;
}

void
os_error_text(const char *body, size_t len, char *out, size_t outlen)
{
	char type[96], reason[320];
	size_t i, n;

	if (outlen == 0)
		return;
	if (os_error(body, len, type, sizeof(type), reason, sizeof(reason))) {
		snprintf(out, outlen, "%s: %s", type[0] ? type : "error",
		    reason);
		return;
	}
	/* an excerpt of whatever came back, on one printable line */
	n = len < outlen - 1 ? len : outlen - 1;
	if (n > 120)
		n = 120;
	for (i = 0; i < n; i++)
		out[i] = (body[i] >= 0x20 && body[i] < 0x7f) ? body[i] : ' ';
	out[n] = '\0';
	if (n == 0)
		snprintf(out, outlen, "empty response");
}

static void
probe_call(struct http_call *call)
{
	http_call_set(call, "GET", "/", NULL, NULL, 0);
}

int
os_major(const char *number)
{
	long v;
	char *end;

	if (number[0] < '0' || number[0] > '9')
		return -1;
	v = strtol(number, &end, 10);
	return (*end == '.' || *end == '\0') && v < 1000 ? (int)v : -1;
}

/*
 * {"version":{"distribution":"opensearch","number":"2.19.6"},...}. An
 * Elasticsearch node says no distribution: it is refused, as is a major
 * version this module was not written for. An answer without a version
 * (a proxy's own page) is taken as it was before nodes were asked.
 */
static enum target_answer
probe_answer(long status, const struct sbuf *resp, char *node,
    size_t nodelen, char *why, size_t whylen)
{
	enum target_answer a = os_answer_class(status, resp->buf, resp->len);
	struct jspan obj, ver, v;
	char dist[32] = "", num[32] = "";
	int major;

	if (nodelen)
		node[0] = '\0';
	if (status == 405) {
		/* every OpenSearch node serves GET /; an Elasticsearch node
		 * without its rest-root module does not */
		snprintf(why, whylen, "target.flavor is opensearch but the node "
		    "does not serve GET / (HTTP 405), as an Elasticsearch node "
		    "without its rest-root module does");
		return TA_REFUSED;
	}
	if (a != TA_OK) {
		os_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	/* a version that is not an object is another engine's (Qdrant
	 * answers GET / with a version string) */
	if (target_body_object(resp->buf, resp->len, &obj) == 0 &&
	    jobj_get(obj, "version", &ver) && jspan_type(ver) != J_OBJECT) {
		snprintf(why, whylen, "target.flavor is opensearch but GET / "
		    "is not an OpenSearch node's answer (its version is not "
		    "an object)");
		return TA_REFUSED;
	}
	if (target_body_object(resp->buf, resp->len, &obj) == 0 &&
	    jobj_get(obj, "version", &ver) && jspan_type(ver) == J_OBJECT) {
		if (jobj_get(ver, "distribution", &v))
			os_copy_cut(v, dist, sizeof(dist));
		if (jobj_get(ver, "number", &v))
			os_copy_cut(v, num, sizeof(num));
		major = os_major(num);
		if (strcmp(dist, "opensearch") != 0) {
			snprintf(why, whylen, "target.flavor is opensearch but "
			    "the node is %s %s; set target.flavor: "
			    "elasticsearch for an Elasticsearch node",
			    dist[0] ? dist : "Elasticsearch", num);
			return TA_REFUSED;
		}
		if (major < OS_MAJOR_MIN || major > OS_MAJOR_MAX) {
			snprintf(why, whylen, "target.flavor is opensearch but "
			    "the node runs OpenSearch %s; supported: %d.x to "
			    "%d.x", num, OS_MAJOR_MIN, OS_MAJOR_MAX);
			return TA_REFUSED;
		}
	}
	snprintf(node, nodelen, "opensearch%s%s", num[0] ? " " : "", num);
	return TA_OK;
}

void
os_index_path(struct sbuf *path, const char *index, const char *rest)
{
	sbuf_reset(path);
	sbuf_addc(path, '/');
	http_escape(path, index, HTTP_KEEP_INDEX);
	sbuf_adds(path, rest);
}

void
os_create_call(const char *index, const char *body, struct sbuf *path,
    struct http_call *call)
{
	os_index_path(path, index, "");
	http_call_set(call, "PUT", path->buf, NULL, body,
	    body ? strlen(body) : 0);
}

enum target_answer
os_create_answer(long status, const struct sbuf *resp, char *why,
    size_t whylen)
{
	char type[96], reason[320];

	os_error_text(resp->buf, resp->len, why, whylen);
	if (status >= 200 && status < 300)
		return TA_OK;
	/* another writer, or an earlier run, created it first */
	os_error(resp->buf, resp->len, type, sizeof(type), reason,
	    sizeof(reason));
	if (status == 400 &&
	    strcmp(type, "resource_already_exists_exception") == 0)
		return TA_EXISTS;
	/* an alias has the name: writes go through it to its index */
	if (status == 400 &&
	    strcmp(type, "invalid_index_name_exception") == 0 &&
	    strstr(reason, "already exists as alias") != NULL)
		return TA_EXISTS;
	return os_answer_class(status, resp->buf, resp->len);
}

int
os_encode(struct sbuf *out, const struct target_write *w,
    struct target_entry *e, struct p2o_err *err)
{
	size_t start = out->len;

	if (w->version > VERSION_MAX)
		return p2o_fail(err, P2O_EXIT_DATA, "%s version %llu does not "
		    "fit the target's signed 64-bit versions",
		    w->del ? "delete" : "index",
		    (unsigned long long)w->version);
	e->entry.off = e->head.off = start;
	sbuf_adds(out, w->del ? "{\"delete\":{\"_index\":" :
	    "{\"index\":{\"_index\":");
	target_span_add(out, w->index, &e->index);
	sbuf_adds(out, ",\"_id\":");
	target_span_add(out, w->id, &e->id);
	/* version 0: a row of poll mode, which has no position and relies
	 * on the order of its writes alone (a plain write) */
	if (w->version != 0) {
		sbuf_adds(out, ",\"version\":");
		sbuf_add_u64(out, w->version);
		sbuf_adds(out, ",\"version_type\":\"external_gte\"");
	}
	e->routing.off = e->routing.len = 0;
	if (w->routing.p) {
		sbuf_adds(out, ",\"routing\":");
		target_span_add(out, w->routing, &e->routing);
	}
	/* an ingest pipeline runs on index actions only */
	e->pipeline.off = e->pipeline.len = 0;
	if (w->pipeline.p && !w->del) {
		sbuf_adds(out, ",\"pipeline\":");
		target_span_add(out, w->pipeline, &e->pipeline);
	}
	/* the engine reads the flag on index actions only */
	if (w->require_alias && !w->del)
		sbuf_adds(out, ",\"require_alias\":true");
	sbuf_adds(out, "}}\n");
	e->head.len = out->len - start;
	e->doc.off = e->doc.len = 0;
	if (!w->del) {
		target_span_add(out, w->doc, &e->doc);
		sbuf_addc(out, '\n');
	}
	e->entry.len = out->len - start;
	return 0;
}

void
os_bulk_call(const char *body, size_t len, struct http_call *call)
{
	http_call_set(call, "POST", BULK_PATH, "application/x-ndjson", body,
	    len);
}

static enum item_verdict
item_verdict(int del, int status, const char *type, const char *reason)
{
	if (status >= 200 && status < 300)
		return ITEM_OK;
	if (status == 409)
		return ITEM_CONFLICT;
	/* an index blocked for a while (a full disk): it will take it */
	if (os_blocked(type, reason))
		return ITEM_RETRY;
	/* a versioned delete of a document (or an index) that is not there */
	if (status == 404 && del)
		return ITEM_NOTFOUND;
	if (status == 429 || status >= 500)
		return ITEM_RETRY;
	if (status < 100) {
		/* no usable status: trust the error type when there is one */
		return type[0] ? ITEM_REJECT : ITEM_RETRY;
	}
	return ITEM_REJECT;
}

/* the engine's words for a write refused because its name is not an
 * alias, prefixed with the rule that asked for one */
static void
alias_rule(struct item_result *it)
{
	static const char rule[] = "target.require_alias: every write must "
	    "name an alias, and this names an index or nothing: ";
	char was[sizeof(it->reason)];
	size_t n = sizeof(rule) - 1;

	memcpy(was, it->reason, sizeof(was));
	memcpy(it->reason, rule, n);
	/* the engine's words, cut to what is left */
	memcpy(it->reason + n, was, sizeof(it->reason) - n - 1);
	it->reason[sizeof(it->reason) - 1] = '\0';
}

/*
 * The common answer as BULK_PATH's filter has the node write it,
 * {"errors":false,"items":[{"index":{"status":201}},...]}, matched byte
 * for byte: bytes equal to that shape are valid JSON, so nothing needs
 * parsing (walking it cost a fifth of the writer's instructions). 0 when
 * every item succeeded and items[] is filled; -1 for any other spelling
 * (whitespace, other members, another action, a status outside 2xx),
 * which all_written then reads.
 */
static int
all_written_exact(const char *body, size_t len, int nsent,
    struct item_result *items)
{
	static const char head[] = "{\"errors\":false,\"items\":[";
	static const char idx[] = "{\"index\":{\"status\":2";
	static const char del[] = "{\"delete\":{\"status\":2";
	const char *p = body, *end = body + len;
	int i, d;

	if (nsent < 0 || body == NULL || len < sizeof(head) - 1 ||
	    memcmp(p, head, sizeof(head) - 1) != 0)
		return -1;
	p += sizeof(head) - 1;
	for (i = 0; i < nsent; i++) {
		if (i > 0 && (p == end || *p++ != ','))
			return -1;
		if ((size_t)(end - p) >= sizeof(idx) - 1 + 4 &&
		    memcmp(p, idx, sizeof(idx) - 1) == 0) {
			d = 0;
			p += sizeof(idx) - 1;
		} else if ((size_t)(end - p) >= sizeof(del) - 1 + 4 &&
		    memcmp(p, del, sizeof(del) - 1) == 0) {
			d = 1;
			p += sizeof(del) - 1;
		} else
			return -1;
		/* the two digits after the 2, then the item's two braces */
		if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9' ||
		    p[2] != '}' || p[3] != '}')
			return -1;
		memset(&items[i], 0, sizeof(items[i]));
		items[i].del = d;
		items[i].status = 200 + (p[0] - '0') * 10 + (p[1] - '0');
		items[i].verdict = ITEM_OK;
		p += 4;
	}
	return end - p == 2 && p[0] == ']' && p[1] == '}' ? 0 : -1;
}

/*
 * The common answer in any other spelling, read without a second walk of
 * the root: the members are noted while it is validated. 0 when every
 * item succeeded and items[] is filled; -1 for anything else, which
 * read_items then judges (and words the errors of).
 */
static int
all_written(const char *body, size_t len, int nsent,
    struct item_result *items)
{
	static const char *const names[] = { "errors", "items" };
	struct jspan v[2], item, act, val, st, k2, v2;
	struct jiter it, m;
	struct jtop top;
	const char *why;
	size_t off;
	int64_t code;
	int i = 0;

	if (nsent < 0 || body == NULL ||
	    jscan_validate_top(body, len, &top, &off, &why) == -1 ||
	    jspan_type(top.obj) != J_OBJECT)
		return -1;
	jtop_pick(&top, top.obj, names, 2, v);
	if (v[0].p == NULL || jspan_type(v[0]) != J_FALSE ||
	    v[1].p == NULL || jiter_init(&it, v[1]) == -1)
		return -1;
	while (jiter_elem(&it, &item)) {
		if (i == nsent || jiter_init(&m, item) == -1 ||
		    !jiter_member(&m, &act, &val) || jiter_member(&m, &k2, &v2))
			return -1;
		if (jspan_type(val) != J_OBJECT || !jobj_get(val, "status", &st) ||
		    jnum_i64(st, &code) == -1 || code < 200 || code >= 300)
			return -1;
		memset(&items[i], 0, sizeof(items[i]));
		items[i].del = jkey_is(act, "delete", 6);
		items[i].status = (int)code;
		items[i].verdict = ITEM_OK;
		i++;
	}
	return i == nsent ? 0 : -1;
}

/* every item of an answer with failures in it, worded */
static enum target_answer
read_items(const char *body, size_t len, int nsent,
    struct item_result *items, char *why, size_t whylen)
{
	struct jspan root, arr, item, act, val, st, k2, v2, e;
	struct jiter it, m;
	const char *jwhy;
	size_t off;
	int64_t code;
	int i = 0, n = 0;

	if (target_body_object(body, len, &root) == -1) {
		if (body == NULL || jscan_validate(body, len, &off, &jwhy) == -1)
			snprintf(why, whylen, "bulk response is not JSON: %s at "
			    "byte %zu", body ? jwhy : "no body", body ? off : 0);
		else
			snprintf(why, whylen, "bulk response has no items");
		return TA_RETRY;
	}
	if (!jobj_get(root, "items", &arr) || jspan_type(arr) != J_ARRAY) {
		if (jobj_get(root, "error", &e))
			os_error_text(body, len, why, whylen);
		else
			snprintf(why, whylen, "bulk response has no items");
		return TA_RETRY;
	}
	jiter_init(&it, arr);
	while (jiter_elem(&it, &item))
		n++;
	if (nsent < 0 || n != nsent) {
		snprintf(why, whylen, "bulk response has %d items for %d sent",
		    n, nsent);
		return TA_RETRY;
	}
	jiter_init(&it, arr);
	while (jiter_elem(&it, &item)) {
		memset(&items[i], 0, sizeof(items[i]));
		if (jiter_init(&m, item) == -1 ||
		    !jiter_member(&m, &act, &val) ||
		    jiter_member(&m, &k2, &v2)) {
			snprintf(why, whylen, "bulk response item %d is not an "
			    "object with one action", i);
			return TA_RETRY;
		}
		items[i].del = jkey_is(act, "delete", 6);
		if (jspan_type(val) != J_OBJECT ||
		    !jobj_get(val, "status", &st) ||
		    jnum_i64(st, &code) == -1 || code < INT32_MIN ||
		    code > INT32_MAX) {
			snprintf(why, whylen, "bulk response item %d has no "
			    "status", i);
			return TA_RETRY;
		}
		items[i].status = (int)code;
		if (jobj_get(val, "error", &e))
			error_fields(e, items[i].type, sizeof(items[i].type),
			    items[i].reason, sizeof(items[i].reason));
		/* a write to an index, not an alias: say which rule it broke */
		if (strstr(items[i].reason, "require_alias") != NULL)
			alias_rule(&items[i]);
		items[i].verdict = item_verdict(items[i].del, items[i].status,
		    items[i].type, items[i].reason);
		i++;
	}
	return TA_OK;
}

enum target_answer
os_bulk_answer(long status, const char *body, size_t len, int nsent,
    struct item_result *items, char *why, size_t whylen)
{
	enum target_answer a;

	if (whylen)
		why[0] = '\0';
	a = os_answer_class(status, body, len);
	if (a != TA_OK) {
		os_error_text(body, len, why, whylen);
		return a;
	}
	if (all_written_exact(body, len, nsent, items) == 0 ||
	    all_written(body, len, nsent, items) == 0)
		return TA_OK;
	return read_items(body, len, nsent, items, why, whylen);
}

void
os_read_call(const struct docref *refs, int n, struct sbuf *body,
    struct http_call *call)
{
	int i;

	sbuf_reset(body);
	sbuf_adds(body, "{\"docs\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(body, ',');
		sbuf_adds(body, "{\"_index\":");
		sbuf_add(body, refs[i].index, refs[i].ilen);
		sbuf_adds(body, ",\"_id\":");
		sbuf_add(body, refs[i].id, refs[i].idlen);
		if (refs[i].rlen) {
			sbuf_adds(body, ",\"routing\":");
			sbuf_add(body, refs[i].routing, refs[i].rlen);
		}
		sbuf_addc(body, '}');
	}
	sbuf_adds(body, "]}");
	http_call_set(call, "POST", "/_mget", NULL, body->buf, body->len);
}

/* found[i]: the _source of the i-th document asked for, p NULL when it
 * does not exist; -1 if the answer is not one for n documents */
static int
read_docs(const char *body, size_t len, int n, struct jspan *found)
{
	struct jspan root, docs, d, v, e, type;
	struct jiter it;
	int i = 0;

	if (target_body_object(body, len, &root) == -1 ||
	    !jobj_get(root, "docs", &docs) || jiter_init(&it, docs) == -1 ||
	    jspan_type(docs) != J_ARRAY)
		return -1;
	while (jiter_elem(&it, &d) == 1) {
		if (i == n || jspan_type(d) != J_OBJECT)
			return -1;
		found[i].p = NULL;
		found[i].n = 0;
		if (jobj_get(d, "error", &e)) {
			/* a missing index holds no document; anything else
			 * (a shard failure) says nothing about the document */
			if (jspan_type(e) != J_OBJECT ||
			    !jobj_get(e, "type", &type) ||
			    !jstr_eq(type, "index_not_found_exception"))
				return -1;
		} else if (!jobj_get(d, "found", &v))
			return -1;
		else if (jspan_type(v) == J_TRUE) {
			if (!jobj_get(d, "_source", &v) ||
			    jspan_type(v) != J_OBJECT)
				return -1;
			found[i] = v;
		}
		i++;
	}
	return i == n ? 0 : -1;
}

enum target_answer
os_read_answer(long status, const struct sbuf *resp, int n, struct jspan *found,
    char *why, size_t whylen)
{
	enum target_answer a = os_answer_class(status, resp->buf, resp->len);

	if (a != TA_OK) {
		os_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	if (read_docs(resp->buf, resp->len, n, found) == -1) {
		snprintf(why, whylen, "unusable _mget response");
		return TA_RETRY;
	}
	return TA_OK;
}

static const struct target_ops ops = {
	OS_SHARED_OPS,
	.mapping_file = os_mapping_file,
	.probe_call = probe_call,
	.probe_answer = probe_answer,
};

const struct target_module target_opensearch = {
	.name = "opensearch",
	.state_place = "index '" OS_STATE_INDEX "'",
	.caps = TCAP_EXTERNAL_VERSIONS | TCAP_CONCURRENT_WRITES |
	    TCAP_ROUTING | TCAP_JOIN | TCAP_PIPELINES | TCAP_MAPPINGS |
	    TCAP_STATE_DOCS | TCAP_ALIASES | TCAP_COMPLETE_DOCS |
	    TCAP_NODES,
	.ops = &ops,
	.rejects = &os_rejects_ops,
	.rejects_place = "index '" OS_REJECTS_INDEX "'",
	.scan = &os_scan_ops,
};
