/*
 * t-target-opensearch.c - the OpenSearch module through its table: what a
 * _bulk answer says about each item (written, version conflict, delete of
 * a missing document, retryable, refused) and about the request, the
 * error bodies, the action line of a write, index creation, the _mget
 * behind TOAST completion, the node at GET /, a block told apart from
 * refused credentials, and the steps of a clear and of a join cascade.
 */
#include <stdlib.h>
#include <string.h>

#include "p2o.h"
#include "tap.h"
#include "target.h"

static const struct target_ops *ops;

static struct sbuf
sb(const char *s)
{
	struct sbuf b = SBUF_INIT;

	sbuf_adds(&b, s);
	return b;
}

static struct jspan
span(const char *s)
{
	struct jspan j = { s, s ? strlen(s) : 0 };

	return j;
}

struct rcase {
	const char *name;
	long status;
	int nsent;
	const char *body;
	enum target_answer want;
	const char *verdicts;	/* per item: o k(onflict) n(otfound) r x */
};

static const struct rcase cases[] = {
	{ "all created", 200, 2,
	  "{\"took\":30,\"errors\":false,\"items\":["
	  "{\"index\":{\"_index\":\"items\",\"_id\":\"1\",\"_version\":100,"
	  "\"result\":\"created\",\"_shards\":{\"total\":2,\"successful\":1,"
	  "\"failed\":0},\"_seq_no\":0,\"_primary_term\":1,\"status\":201}},"
	  "{\"index\":{\"_index\":\"items\",\"_id\":\"2\",\"_version\":100,"
	  "\"result\":\"updated\",\"_shards\":{\"total\":2,\"successful\":1,"
	  "\"failed\":0},\"_seq_no\":1,\"_primary_term\":1,\"status\":200}}]}",
	  TA_OK, "oo" },
	{ "filtered success", 200, 3,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}},"
	  "{\"delete\":{\"status\":200}},{\"index\":{\"status\":200}}]}",
	  TA_OK, "ooo" },
	{ "version conflict", 200, 2,
	  "{\"took\":3,\"errors\":true,\"items\":[{\"index\":{\"_index\":"
	  "\"items\",\"_id\":\"1\",\"status\":409,\"error\":{\"type\":"
	  "\"version_conflict_engine_exception\",\"reason\":\"[1]: version "
	  "conflict, current version [200] is higher than the one provided "
	  "[100]\",\"index\":\"items\",\"shard\":\"0\",\"index_uuid\":"
	  "\"f0BtW3jRQ3-NYxVYF2LrVg\"}}},{\"delete\":{\"_index\":\"items\","
	  "\"_id\":\"2\",\"status\":409,\"error\":{\"type\":"
	  "\"version_conflict_engine_exception\",\"reason\":\"[2]: version "
	  "conflict\"}}}]}",
	  TA_OK, "kk" },
	{ "delete not found", 200, 2,
	  "{\"took\":1,\"errors\":false,\"items\":[{\"delete\":{\"_index\":"
	  "\"items\",\"_id\":\"9\",\"_version\":5,\"result\":\"not_found\","
	  "\"_shards\":{\"total\":2,\"successful\":1,\"failed\":0},"
	  "\"_seq_no\":4,\"_primary_term\":1,\"status\":404}},"
	  "{\"delete\":{\"_index\":\"nope\",\"_id\":\"9\",\"status\":404,"
	  "\"error\":{\"type\":\"index_not_found_exception\",\"reason\":"
	  "\"no such index [nope]\"}}}]}",
	  TA_OK, "nn" },
	{ "mapper parsing", 200, 1,
	  "{\"took\":2,\"errors\":true,\"items\":[{\"index\":{\"_index\":"
	  "\"items\",\"_id\":\"3\",\"status\":400,\"error\":{\"type\":"
	  "\"mapper_parsing_exception\",\"reason\":\"failed to parse field "
	  "[price] of type [long] in document with id '3'. Preview of field's "
	  "value: 'abc'\",\"caused_by\":{\"type\":\"illegal_argument_exception\","
	  "\"reason\":\"For input string: \\\"abc\\\"\"}}}}]}",
	  TA_OK, "x" },
	{ "index 404 is a refusal", 200, 1,
	  "{\"errors\":true,\"items\":[{\"index\":{\"status\":404,\"error\":"
	  "{\"type\":\"index_not_found_exception\",\"reason\":\"no such index "
	  "[x] and [action.auto_create_index] is [false]\"}}}]}",
	  TA_OK, "x" },
	{ "rejected execution", 200, 2,
	  "{\"took\":1,\"errors\":true,\"items\":[{\"index\":{\"_index\":"
	  "\"items\",\"_id\":\"4\",\"status\":429,\"error\":{\"type\":"
	  "\"es_rejected_execution_exception\",\"reason\":\"rejected execution "
	  "of coordinating operation [shard_detail=[items][0][P], "
	  "shard_coordinating_and_primary_bytes=0, "
	  "shard_operation_bytes=98, shard_max_coordinating_and_primary_bytes="
	  "4]\"}}},{\"index\":{\"_index\":\"items\",\"_id\":\"5\",\"status\":201}}]}",
	  TA_OK, "ro" },
	{ "item 503", 200, 1,
	  "{\"errors\":true,\"items\":[{\"index\":{\"_index\":\"items\",\"_id\":"
	  "\"6\",\"status\":503,\"error\":{\"type\":"
	  "\"unavailable_shards_exception\",\"reason\":\"[items][0] primary "
	  "shard is not active Timeout: [1m]\"}}}]}",
	  TA_OK, "r" },
	{ "mixed", 200, 6,
	  "{\"took\":12,\"errors\":true,\"items\":["
	  "{\"index\":{\"_index\":\"items\",\"_id\":\"1\",\"status\":201}},"
	  "{\"index\":{\"_index\":\"items\",\"_id\":\"2\",\"status\":409,"
	  "\"error\":{\"type\":\"version_conflict_engine_exception\","
	  "\"reason\":\"x\"}}},"
	  "{\"delete\":{\"_index\":\"items\",\"_id\":\"3\",\"result\":"
	  "\"not_found\",\"status\":404}},"
	  "{\"index\":{\"_index\":\"items\",\"_id\":\"4\",\"status\":400,"
	  "\"error\":{\"type\":\"mapper_parsing_exception\",\"reason\":\"y\"}}},"
	  "{\"index\":{\"_index\":\"items\",\"_id\":\"5\",\"status\":429,"
	  "\"error\":{\"type\":\"es_rejected_execution_exception\","
	  "\"reason\":\"z\"}}},"
	  "{\"delete\":{\"_index\":\"items\",\"_id\":\"6\",\"status\":200,"
	  "\"result\":\"deleted\"}}]}",
	  TA_OK, "oknxro" },
	{ "whole 429", 429, 1,
	  "{\"error\":{\"root_cause\":[{\"type\":"
	  "\"es_rejected_execution_exception\",\"reason\":\"rejected\"}],"
	  "\"type\":\"es_rejected_execution_exception\",\"reason\":"
	  "\"rejected\"},\"status\":429}",
	  TA_RETRY, NULL },
	{ "whole 503", 503, 1,
	  "{\"error\":{\"type\":\"cluster_block_exception\",\"reason\":"
	  "\"blocked by: [SERVICE_UNAVAILABLE/1/state not recovered "
	  "/initialized];\"},\"status\":503}",
	  TA_RETRY, NULL },
	{ "proxy 502 html", 502, 1, "<html><body>Bad Gateway</body></html>",
	  TA_RETRY, NULL },
	{ "401", 401, 1,
	  "{\"error\":{\"type\":\"security_exception\",\"reason\":\"missing "
	  "authentication credentials\"},\"status\":401}",
	  TA_AUTH, NULL },
	{ "403", 403, 1, "{\"error\":{\"type\":\"security_exception\","
	  "\"reason\":\"no permissions for [indices:data/write/bulk]\"},"
	  "\"status\":403}",
	  TA_AUTH, NULL },
	{ "403 a block", 403, 1,
	  "{\"error\":{\"root_cause\":[{\"type\":\"cluster_block_exception\","
	  "\"reason\":\"index [items] blocked by: [FORBIDDEN/8/index write "
	  "(api)];\"}],\"type\":\"cluster_block_exception\",\"reason\":"
	  "\"index [items] blocked by: [FORBIDDEN/8/index write (api)];\"},"
	  "\"status\":403}",
	  TA_RETRY, NULL },
	{ "403 no body", 403, 1, "", TA_AUTH, NULL },
	{ "items blocked", 200, 2,
	  "{\"errors\":true,\"items\":[{\"index\":{\"status\":403,"
	  "\"error\":{\"type\":\"cluster_block_exception\",\"reason\":"
	  "\"index [items] blocked by: [FORBIDDEN/12/index read-only / allow "
	  "delete (api)];\"}}},{\"index\":{\"status\":403,\"error\":"
	  "{\"type\":\"security_exception\",\"reason\":\"no permissions\"}}}]}",
	  TA_OK, "rx" },
	{ "whole 400", 400, 1,
	  "{\"error\":{\"root_cause\":[{\"type\":"
	  "\"illegal_argument_exception\",\"reason\":\"Malformed action/"
	  "metadata line [1]\"}],\"type\":\"illegal_argument_exception\","
	  "\"reason\":\"Malformed action/metadata line [1]\"},\"status\":400}",
	  TA_REFUSED, NULL },
	{ "413", 413, 1, "", TA_REFUSED, NULL },
	{ "200 not json", 200, 1, "{\"items\":[", TA_RETRY, NULL },
	{ "200 no items", 200, 1, "{\"took\":1}", TA_RETRY, NULL },
	{ "200 too few items", 200, 3,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}}]}",
	  TA_RETRY, NULL },
	{ "200 item without status", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"_id\":\"1\"}}]}",
	  TA_RETRY, NULL },
	{ "200 item not an object", 200, 1,
	  "{\"errors\":false,\"items\":[7]}", TA_RETRY, NULL },
	{ "200 error body", 200, 1,
	  "{\"error\":\"no handler\"}", TA_RETRY, NULL },
	/* the all-written reader's edges: what it cannot vouch for goes to
	 * the full reader, which must then judge it the same as ever */
	{ "200 too many items", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}},"
	  "{\"index\":{\"status\":201}}]}", TA_RETRY, NULL },
	{ "200 item with two actions", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201},"
	  "\"delete\":{\"status\":200}}]}", TA_RETRY, NULL },
	{ "200 all written, whitespace around", 200, 2,
	  " \n{\"errors\" : false , \"items\" : [ {\"index\":{\"status\":"
	  "201}} , {\"d\\u0065lete\":{\"status\":200}} ]}\n",
	  TA_OK, "oo" },
	{ "200 errors false but a conflict", 200, 2,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}},"
	  "{\"index\":{\"status\":409}}]}", TA_OK, "ok" },
	/* the byte-for-byte reader of the filtered answer: its near misses
	 * fall through to the readers above, which judge them as ever */
	{ "200 all written, as the node writes it", 200, 3,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}},"
	  "{\"delete\":{\"status\":200}},{\"index\":{\"status\":299}}]}",
	  TA_OK, "ooo" },
	{ "200 status of three digits past 2xx", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":2010}}]}",
	  TA_OK, "r" },
	{ "200 exact but a byte after the end", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}}]}x",
	  TA_RETRY, NULL },
	{ "200 exact but cut short", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":20",
	  TA_RETRY, NULL },
	{ "200 status not an integer", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":2.01e2}}]}",
	  TA_RETRY, NULL },
};

static char
letter(enum item_verdict v)
{
	switch (v) {
	case ITEM_OK: return 'o';
	case ITEM_CONFLICT: return 'k';
	case ITEM_NOTFOUND: return 'n';
	case ITEM_RETRY: return 'r';
	case ITEM_REJECT: return 'x';
	}
	return '?';
}

static void
test_bulk(void)
{
	static const char proxy[] = "{\"errors\":true,\"items\":[{\"index\":"
	    "{\"status\":400,\"error\":\"proxy says no\"}}]}";
	static const char noalias[] = "{\"errors\":true,\"items\":[{\"index\":"
	    "{\"_index\":\"items\",\"_id\":\"7\",\"status\":404,\"error\":"
	    "{\"type\":\"index_not_found_exception\",\"reason\":\"no such "
	    "index [items] and [require_alias] request flag is [true] and "
	    "[items] is not an alias\",\"index\":\"items\"}}}]}";
	struct item_result items[8];
	char why[256], got[16];
	enum target_answer v;
	size_t i;
	int k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rcase *c = &cases[i];

		why[0] = '\0';
		v = ops->bulk_answer(c->status, c->body, strlen(c->body),
		    c->nsent, items, why, sizeof(why));
		is_int(v, c->want, "%s: response verdict", c->name);
		if (v != TA_OK) {
			ok(why[0] != '\0', "%s: says why (%s)", c->name, why);
			continue;
		}
		for (k = 0; k < c->nsent; k++)
			got[k] = letter(items[k].verdict);
		got[k] = '\0';
		is_str(got, c->verdicts, "%s: item verdicts", c->name);
	}

	v = ops->bulk_answer(200, cases[4].body, strlen(cases[4].body), 1,
	    items, why, sizeof(why));
	is_str(items[0].type, "mapper_parsing_exception", "refusal type kept");
	ok(strncmp(items[0].reason, "failed to parse field [price]", 29) == 0,
	    "refusal reason kept");
	ok(!items[0].del, "an index item");
	is_int(items[0].status, 400, "item status kept");
	v = ops->bulk_answer(200, cases[8].body, strlen(cases[8].body), 6,
	    items, why, sizeof(why));
	ok(items[2].del && items[5].del && !items[0].del, "delete items known");
	v = ops->bulk_answer(200, proxy, strlen(proxy), 1, items, why,
	    sizeof(why));
	ok(v == TA_OK && strcmp(items[0].type, "error") == 0 &&
	    strcmp(items[0].reason, "proxy says no") == 0,
	    "an error given as a string");

	v = ops->bulk_answer(200, noalias, strlen(noalias), 1, items, why,
	    sizeof(why));
	ok(v == TA_OK && items[0].verdict == ITEM_REJECT &&
	    strncmp(items[0].reason, "target.require_alias: every write must "
	    "name an alias, and this names an index or nothing: no such index "
	    "[items]", 109) == 0, "a write to an index, not an alias, is "
	    "refused naming the rule: %s", items[0].reason);

	ops->error_text(cases[13].body, strlen(cases[13].body), why,
	    sizeof(why));
	is_str(why, "security_exception: no permissions for "
	    "[indices:data/write/bulk]", "error text of a 403");
	ops->error_text("<html>\n<b>x</b>", 15, why, sizeof(why));
	is_str(why, "<html> <b>x</b>", "excerpt of a non-JSON body");
	ops->error_text("", 0, why, sizeof(why));
	is_str(why, "empty response", "an empty body");
}

static void
test_probe(void)
{
	struct sbuf r = sb("{\"name\":\"n1\",\"version\":{\"distribution\":"
	    "\"opensearch\",\"number\":\"2.19.6\"},\"tagline\":\"x\"}");
	struct http_call call;
	char node[64], why[128];

	ops->probe_call(&call);
	ok(strcmp(call.method, "GET") == 0 && strcmp(call.path, "/") == 0,
	    "the probe is GET /");
	is_int(ops->probe_answer(200, &r, node, sizeof(node), why,
	    sizeof(why)), TA_OK, "200: there");
	is_str(node, "opensearch 2.19.6", "what is there");
	is_int(ops->probe_answer(401, &r, node, sizeof(node), why,
	    sizeof(why)), TA_AUTH, "401: credentials");
	is_int(ops->probe_answer(404, &r, node, sizeof(node), why,
	    sizeof(why)), TA_RETRY, "404: not there yet");
	is_int(ops->probe_answer(0, &r, node, sizeof(node), why,
	    sizeof(why)), TA_RETRY, "no status: not there yet");
	sbuf_release(&r);
}

static void
encode_is(const struct target_write *w, const char *want, const char *name)
{
	struct sbuf a = SBUF_INIT;
	struct target_entry e;
	struct p2o_err err;

	sbuf_adds(&a, "xx");
	if (ops->encode(&a, w, &e, &err) == -1) {
		ok(0, "%s: %s", name, err.msg);
		sbuf_release(&a);
		return;
	}
	is_str(a.buf + 2, want, "%s: entry", name);
	ok(e.entry.off == 2 && e.entry.len == a.len - 2 && e.head.off == 2,
	    "%s: entry span", name);
	if (w->del)
		ok(e.doc.len == 0 && e.head.len == e.entry.len,
		    "%s: a head alone", name);
	else
		ok(e.doc.off == e.head.off + e.head.len &&
		    memcmp(a.buf + e.doc.off, w->doc.p, w->doc.n) == 0 &&
		    e.doc.len == w->doc.n,
		    "%s: the document follows the head, verbatim", name);
	ok(memcmp(a.buf + e.index.off, w->index.p, w->index.n) == 0 &&
	    memcmp(a.buf + e.id.off, w->id.p, w->id.n) == 0 &&
	    e.routing.len == w->routing.n && (w->routing.p == NULL ||
	    memcmp(a.buf + e.routing.off, w->routing.p, w->routing.n) == 0),
	    "%s: index, id and routing spans", name);
	sbuf_release(&a);
}

static void
test_encode(void)
{
	struct target_write w;
	struct sbuf a = SBUF_INIT;
	struct target_entry e;
	struct p2o_err err;

	memset(&w, 0, sizeof(w));
	w.index = span("\"items\"");
	w.id = span("\"7\"");
	w.doc = span("{\"id\":7,\"n\":1.50}");
	w.version = 42;
	encode_is(&w, "{\"index\":{\"_index\":\"items\",\"_id\":\"7\","
	    "\"version\":42,\"version_type\":\"external_gte\"}}\n"
	    "{\"id\":7,\"n\":1.50}\n", "index");
	w.routing = span("\"t1\"");
	w.pipeline = span("\"embed\"");
	encode_is(&w, "{\"index\":{\"_index\":\"items\",\"_id\":\"7\","
	    "\"version\":42,\"version_type\":\"external_gte\",\"routing\":"
	    "\"t1\",\"pipeline\":\"embed\"}}\n{\"id\":7,\"n\":1.50}\n",
	    "routed, with a pipeline");
	w.require_alias = 1;
	encode_is(&w, "{\"index\":{\"_index\":\"items\",\"_id\":\"7\","
	    "\"version\":42,\"version_type\":\"external_gte\",\"routing\":"
	    "\"t1\",\"pipeline\":\"embed\",\"require_alias\":true}}\n"
	    "{\"id\":7,\"n\":1.50}\n", "an index write through an alias only "
	    "(target.require_alias)");
	w.del = 1;
	w.doc = span(NULL);
	encode_is(&w, "{\"delete\":{\"_index\":\"items\",\"_id\":\"7\","
	    "\"version\":42,\"version_type\":\"external_gte\",\"routing\":"
	    "\"t1\"}}\n", "a delete carries no pipeline, nor the alias flag "
	    "the engine ignores on it");
	w.version = (uint64_t)INT64_MAX + 1;
	ok(ops->encode(&a, &w, &e, &err) == -1 && err.code == P2O_EXIT_DATA &&
	    a.len == 0, "a version past signed 64 bits refused (%s)", err.msg);
	sbuf_release(&a);
	ops->bulk_call("b", 1, &(struct http_call){ 0 });
}

static void
test_create(void)
{
	struct sbuf path = SBUF_INIT, r;
	struct http_call call;
	char why[256];

	ops->create_call("events-2024+x", "{}", &path, &call);
	ok(strcmp(call.method, "PUT") == 0 &&
	    strcmp(call.path, "/events-2024+x") == 0 && call.len == 2,
	    "created by PUT /<index> with its body");
	ops->create_call("a b/c", NULL, &path, &call);
	is_str(call.path, "/a%20b%2Fc", "the name escaped");
	ok(call.body == NULL && call.len == 0, "no body: the defaults");
	r = sb("{\"acknowledged\":true}");
	is_int(ops->create_answer(200, &r, why, sizeof(why)), TA_OK,
	    "200 created");
	sbuf_release(&r);
	r = sb("{\"error\":{\"type\":\"resource_already_exists_exception\","
	    "\"reason\":\"index [x] already exists\"},\"status\":400}");
	is_int(ops->create_answer(400, &r, why, sizeof(why)), TA_EXISTS,
	    "already there");
	sbuf_release(&r);
	r = sb("{\"error\":{\"type\":\"invalid_index_name_exception\","
	    "\"reason\":\"Invalid index name [items], already exists as "
	    "alias\",\"index\":\"items\"},\"status\":400}");
	is_int(ops->create_answer(400, &r, why, sizeof(why)), TA_EXISTS,
	    "an alias of the name is there: writes go through it");
	sbuf_release(&r);
	r = sb("{\"error\":{\"type\":\"invalid_index_name_exception\","
	    "\"reason\":\"Invalid index name [Items], must be lowercase\"},"
	    "\"status\":400}");
	is_int(ops->create_answer(400, &r, why, sizeof(why)), TA_REFUSED,
	    "an invalid name is still refused");
	sbuf_release(&r);
	r = sb("{\"error\":{\"type\":\"mapper_parsing_exception\","
	    "\"reason\":\"bad mapping\"},\"status\":400}");
	is_int(ops->create_answer(400, &r, why, sizeof(why)), TA_REFUSED,
	    "a bad mapping refused");
	is_str(why, "mapper_parsing_exception: bad mapping", "and why");
	is_int(ops->create_answer(403, &r, why, sizeof(why)), TA_AUTH, "403");
	sbuf_release(&r);
	r = sb("{\"error\":{\"root_cause\":[{\"type\":"
	    "\"index_create_block_exception\",\"reason\":\"blocked by: "
	    "[FORBIDDEN/10/cluster create-index blocked (api)];\"}],\"type\":"
	    "\"index_create_block_exception\",\"reason\":\"blocked by: "
	    "[FORBIDDEN/10/cluster create-index blocked (api)];\"},"
	    "\"status\":403}");
	is_int(ops->create_answer(403, &r, why, sizeof(why)), TA_RETRY,
	    "403 create-index blocked (a full disk): waited out");
	is_int(ops->create_answer(503, &r, why, sizeof(why)), TA_RETRY, "503");
	sbuf_release(&r);
	sbuf_release(&path);
}

static void
test_read(void)
{
	struct docref refs[3] = {
		{ "\"t\"", "\"2\"", NULL, 3, 3, 0 },
		{ "\"t\"", "\"3\"", "\"r\"", 3, 3, 3 },
		{ "\"u\"", "\"2\"", NULL, 3, 3, 0 },
	};
	struct sbuf body = SBUF_INIT, r;
	struct http_call call;
	struct jspan found[4];
	char why[128];

	ops->read_call(refs, 3, &body, &call);
	ok(strcmp(call.method, "POST") == 0 && strcmp(call.path, "/_mget") == 0,
	    "read by POST /_mget");
	is_str(body.buf, "{\"docs\":[{\"_index\":\"t\",\"_id\":\"2\"},"
	    "{\"_index\":\"t\",\"_id\":\"3\",\"routing\":\"r\"},"
	    "{\"_index\":\"u\",\"_id\":\"2\"}]}", "mget body");
	ok(call.body == body.buf && call.len == body.len, "the call sends it");

	r = sb("{\"docs\":[{\"_index\":\"t\",\"_id\":\"2\",\"_version\":1,"
	    "\"_seq_no\":0,\"_primary_term\":1,\"found\":true,\"_source\":"
	    "{\"id\":2,\"body\":\"stored \\u00e9\",\"tags\":[1, 2]}},"
	    "{\"_index\":\"t\",\"_id\":\"3\",\"found\":false},"
	    "{\"_index\":\"u\",\"_id\":\"2\",\"error\":{\"root_cause\":[],"
	    "\"type\":\"index_not_found_exception\",\"reason\":\"no such index"
	    " [u]\",\"index\":\"u\"}}]}\n");
	is_int(ops->read_answer(200, &r, 3, found, why, sizeof(why)), TA_OK,
	    "mget parsed");
	ok(found[0].p && strncmp(found[0].p, "{\"id\":2,\"body\"", 14) == 0,
	    "found doc's _source span");
	ok(found[1].p == NULL, "not found");
	ok(found[2].p == NULL, "missing index is not found");
	is_int(ops->read_answer(200, &r, 2, found, why, sizeof(why)),
	    TA_RETRY, "count mismatch refused");
	is_int(ops->read_answer(401, &r, 3, found, why, sizeof(why)),
	    TA_AUTH, "401");
	is_int(ops->read_answer(404, &r, 3, found, why, sizeof(why)),
	    TA_RETRY, "any other failure is asked again");
	sbuf_release(&r);
	r = sb("{\"docs\":[{\"_index\":\"t\",\"_id\":\"2\",\"error\":"
	    "{\"type\":\"no_shard_available_action_exception\",\"reason\":"
	    "\"x\"}}]}");
	is_int(ops->read_answer(200, &r, 1, found, why, sizeof(why)),
	    TA_RETRY, "a shard failure is not a missing document");
	sbuf_release(&r);
	r = sb("{\"docs\":[");
	is_int(ops->read_answer(200, &r, 1, found, why, sizeof(why)),
	    TA_RETRY, "garbled");
	sbuf_release(&r);
	sbuf_release(&body);
}

/* one answer to the procedure's current request */
static enum target_answer
step(struct target_proc *p, struct http_call *call, long status,
    const char *resp)
{
	struct sbuf r = sb(resp);
	char why[512];
	enum target_answer a;

	a = ops->proc_answer(p, status, &r, why, sizeof(why));
	if (a == TA_RETRY || a == TA_REFUSED || a == TA_AUTH)
		printf("# %s\n", why);
	sbuf_release(&r);
	ops->proc_call(p, call);
	return a;
}

static void
test_clear(void)
{
	struct target_proc p;
	struct http_call call;
	struct sbuf big = SBUF_INIT;
	int i;

	target_proc_init(&p);
	p.kind = PROC_CLEAR;
	p.index = "events-*";
	p.field = span("\"rel\"");
	p.value = span("\"answer\"");
	p.version = 6200;
	ops->proc_call(&p, &call);
	ok(strcmp(call.path, "/events-*/_refresh") == 0 &&
	    call.body == NULL, "clear: a refresh first");
	is_int(step(&p, &call, 200, "{\"_shards\":{}}"), TA_NEXT,
	    "refreshed: on to the search");
	is_str(call.path, "/events-*/_search?scroll=1m",
	    "a scroll over the glob, unrouted");
	is_str(call.body, "{\"size\":5000,\"_source\":false,\"sort\":"
	    "[\"_doc\"],\"query\":{\"term\":{\"rel\":\"answer\"}}}",
	    "of the join's half, in index order");
	is_int(step(&p, &call, 200, "{\"_scroll_id\":\"S1\",\"hits\":"
	    "{\"hits\":[{\"_index\":\"events-1\",\"_id\":\"a\"},"
	    "{\"_index\":\"events-2\",\"_id\":\"b\",\"_routing\":\"t7\"}]}}"),
	    TA_NEXT, "two documents found");
	ok(strncmp(call.path, "/_bulk", 6) == 0 && call.body &&
	    strcmp(call.body, "{\"delete\":{\"_index\":\"events-1\",\"_id\":"
	    "\"a\",\"version\":6200,\"version_type\":\"external_gte\"}}\n"
	    "{\"delete\":{\"_index\":\"events-2\",\"_id\":\"b\",\"version\":"
	    "6200,\"version_type\":\"external_gte\",\"routing\":\"t7\"}}\n")
	    == 0, "deleted at the truncate's version, each where it is routed");
	is_int(step(&p, &call, 200, "{\"errors\":true,\"items\":["
	    "{\"delete\":{\"status\":200}},{\"delete\":{\"status\":429,"
	    "\"error\":{\"type\":\"cluster_block_exception\",\"reason\":"
	    "\"index [events-2] blocked by: [TOO_MANY_REQUESTS/12/disk usage "
	    "exceeded flood-stage watermark, index has read-only-allow-delete "
	    "block];\"}}}]}"), TA_RETRY, "one blocked: the page again");
	ok(p.page_done == 2 && p.deleted == 0, "its items counted, the page "
	    "not yet");
	p.page_done = 0;
	ok(strncmp(call.path, "/_bulk", 6) == 0, "the same page");
	is_int(step(&p, &call, 200, "{\"errors\":true,\"items\":["
	    "{\"delete\":{\"status\":404}},{\"delete\":{\"status\":409,"
	    "\"error\":{\"type\":\"version_conflict_engine_exception\","
	    "\"reason\":\"[b]: version conflict, current version [6300] is "
	    "higher than the one provided [6200]\"}}}]}"), TA_NEXT,
	    "one deleted (again), one newer than the truncate: it stays");
	ok(p.deleted == 1 && p.newer == 1, "counted apart");
	is_str(call.path, "/_search/scroll", "the next page");
	is_int(step(&p, &call, 200, "{\"_scroll_id\":\"S1\",\"hits\":"
	    "{\"hits\":[]}}"), TA_NEXT, "no more");
	ok(strcmp(call.method, "DELETE") == 0, "the scroll released");
	is_int(step(&p, &call, 200, "{}"), TA_OK, "cleared");
	ok(!p.gone, "the index was there");

	target_proc_reset(&p);
	p.kind = PROC_CLEAR;
	p.index = "gone";
	ops->proc_call(&p, &call);
	is_int(step(&p, &call, 404, "{}"), TA_OK, "no index: nothing to clear");
	ok(p.gone, "and it says so");
	target_proc_reset(&p);
	p.kind = PROC_CLEAR;
	p.index = "x";
	ops->proc_call(&p, &call);
	step(&p, &call, 200, "{}");
	ok(call.body && strcmp(call.body, "{\"size\":5000,\"_source\":false,"
	    "\"sort\":[\"_doc\"],\"query\":{\"match_all\":{}}}") == 0,
	    "no field: everything");
	is_int(step(&p, &call, 404, "{}"), TA_OK, "the index went meanwhile");
	target_proc_reset(&p);
	p.kind = PROC_CLEAR;
	p.index = "x";
	p.version = 9;
	ops->proc_call(&p, &call);
	is_int(step(&p, &call, 400, "{\"error\":{\"type\":\"x\","
	    "\"reason\":\"y\"}}"), TA_REFUSED, "a refusal");
	is_int(step(&p, &call, 503, "{}"), TA_RETRY, "a failure");
	is_int(step(&p, &call, 403, "{\"error\":{\"type\":"
	    "\"security_exception\",\"reason\":\"no permissions for "
	    "[indices:admin/refresh]\"},\"status\":403}"), TA_AUTH,
	    "credentials");
	is_int(step(&p, &call, 403, "{\"error\":{\"type\":"
	    "\"cluster_block_exception\",\"reason\":\"index [x] blocked by: "
	    "[FORBIDDEN/8/index write (api)];\"},\"status\":403}"), TA_RETRY,
	    "a block is waited out");
	is_int(step(&p, &call, 200, "{}"), TA_NEXT, "refreshed");
	sbuf_adds(&big, "{\"_scroll_id\":\"S\",\"hits\":{\"hits\":[");
	for (i = 0; i <= 5000; i++)
		sbuf_addf(&big, "%s{\"_index\":\"x\",\"_id\":\"%d\"}",
		    i ? "," : "", i);
	sbuf_adds(&big, "]}}");
	is_int(step(&p, &call, 200, big.buf), TA_RETRY,
	    "more hits than the page asked for");
	is_int(step(&p, &call, 200, "{\"hits\":[]}"), TA_RETRY,
	    "an unusable search answer");
	sbuf_release(&big);
	target_proc_release(&p);
}

static void
test_cascade(void)
{
	struct target_proc p;
	struct http_call call;

	target_proc_init(&p);
	p.kind = PROC_CASCADE;
	p.index = "qa";
	p.children = span("[\"answer\",\"comment\"]");
	p.parent = "q 1";
	p.parent_id = span("\"q 1\"");
	p.version = 77;
	ops->proc_call(&p, &call);
	is_str(call.path, "/qa/_refresh", "cascade: a refresh first");
	is_int(step(&p, &call, 200, "{}"), TA_NEXT, "then the search");
	is_str(call.path, "/qa/_search?scroll=1m&routing=q%201",
	    "routed to the parent's shard, scrolled");
	is_str(call.body, "{\"size\":1000,\"_source\":false,\"sort\":"
	    "[\"_doc\"],\"query\":{\"bool\":{\"should\":[{\"parent_id\":{\"type\":\"answer\","
	    "\"id\":\"q 1\"}},{\"parent_id\":{\"type\":\"comment\",\"id\":"
	    "\"q 1\"}}]}}}", "for each child relation");
	is_int(step(&p, &call, 200, "{\"_scroll_id\":\"S1\",\"hits\":"
	    "{\"hits\":[{\"_index\":\"qa\",\"_id\":\"a1\",\"_routing\":"
	    "\"q 1\"},{\"_index\":\"qa\",\"_id\":\"a2\"}]}}"), TA_NEXT,
	    "two children found");
	ok(call.body && strcmp(call.body, "{\"delete\":{\"_index\":\"qa\","
	    "\"_id\":\"a1\",\"version\":77,\"version_type\":\"external_gte\","
	    "\"routing\":\"q 1\"}}\n{\"delete\":{\"_index\":\"qa\",\"_id\":"
	    "\"a2\",\"version\":77,\"version_type\":\"external_gte\","
	    "\"routing\":\"q 1\"}}\n") == 0 &&
	    strncmp(call.path, "/_bulk", 6) == 0,
	    "deleted at the parent delete's version, where they are routed");
	is_int(step(&p, &call, 200, "{\"errors\":true,\"items\":["
	    "{\"delete\":{\"status\":200}},{\"delete\":{\"status\":503}}]}"),
	    TA_RETRY, "one not deleted: the page again");
	ok(p.page_done == 2 && p.items[0].del && p.page_bytes > 0,
	    "its items counted");
	p.page_done = 0;
	ok(strncmp(call.path, "/_bulk", 6) == 0, "the same page");
	is_int(step(&p, &call, 200, "{\"errors\":false,\"items\":["
	    "{\"delete\":{\"status\":200}},{\"delete\":{\"status\":404}}]}"),
	    TA_NEXT, "the page deleted");
	is_str(call.path, "/_search/scroll", "the next page");
	is_str(call.body, "{\"scroll\":\"1m\",\"scroll_id\":\"S1\"}",
	    "by its scroll id");
	is_int(step(&p, &call, 404, "{}"), TA_NEXT,
	    "a scroll expired during a backoff: from the start");
	is_str(call.path, "/qa/_refresh", "refreshed again");
	step(&p, &call, 200, "{}");
	is_int(step(&p, &call, 200, "{\"_scroll_id\":\"S2\",\"hits\":"
	    "{\"hits\":[]}}"), TA_NEXT, "no children left");
	ok(strcmp(call.method, "DELETE") == 0 && strcmp(call.path,
	    "/_search/scroll") == 0 && strcmp(call.body,
	    "{\"scroll_id\":[\"S2\"]}") == 0, "the scroll released");
	is_int(step(&p, &call, 500, "{}"), TA_OK, "whatever it answers: done");
	target_proc_reset(&p);
	p.kind = PROC_CASCADE;
	p.index = "qa";
	p.parent = "1";
	p.parent_id = span("\"1\"");
	p.step = 1;
	is_int(step(&p, &call, 404, "{}"), TA_OK, "no index: no children");
	is_int((p.step = 1, step(&p, &call, 200, "{\"hits\":{}}")), TA_RETRY,
	    "an unusable search answer");
	{
		struct sbuf big = SBUF_INIT;
		int i;

		sbuf_adds(&big, "{\"hits\":{\"hits\":[");
		for (i = 0; i <= 1000; i++)
			sbuf_addf(&big, "%s{\"_index\":\"qa\",\"_id\":\"%d\"}",
			    i ? "," : "", i);
		sbuf_adds(&big, "]}}");
		p.step = 1;
		is_int(step(&p, &call, 200, big.buf), TA_RETRY,
		    "more hits than the page asked for");
		sbuf_release(&big);
	}
	target_proc_release(&p);
}

int
main(void)
{
	const struct target_module *m = target_module_find("opensearch");

	if (m == NULL || target_module_find(NULL) != m)
		BAIL_OUT("opensearch is not the default target");
	ops = m->ops;
	ok(target_can(m, TCAP_ALL & ~(TCAP_ASYNC_TASKS | TCAP_INDEX_SWAP)) &&
	    !target_can(m, TCAP_ASYNC_TASKS) &&
	    !target_can(m, TCAP_INDEX_SWAP),
	    "opensearch answers every write synchronously, rebuilds through "
	    "aliases, and can do the rest");
	ok(target_module_find("nope") == NULL, "an unknown target");
	test_bulk();
	test_probe();
	test_encode();
	test_create();
	test_read();
	test_clear();
	test_cascade();
	return done_testing();
}
