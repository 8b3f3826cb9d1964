/*
 * t-writer-resp.c - classification of OpenSearch responses by the writer:
 * bulk items (written, version conflict, delete of a missing document,
 * retryable, refused), whole-request failures, delete_by_query results,
 * and the _mget read and document splice behind TOAST completion.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "writer-test.h"

struct rcase {
	const char *name;
	long status;
	int nsent;
	const char *body;
	enum resp_verdict want;
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
	  RESP_ITEMS, "oo" },
	{ "filtered success", 200, 3,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}},"
	  "{\"delete\":{\"status\":200}},{\"index\":{\"status\":200}}]}",
	  RESP_ITEMS, "ooo" },
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
	  RESP_ITEMS, "kk" },
	{ "delete not found", 200, 2,
	  "{\"took\":1,\"errors\":false,\"items\":[{\"delete\":{\"_index\":"
	  "\"items\",\"_id\":\"9\",\"_version\":5,\"result\":\"not_found\","
	  "\"_shards\":{\"total\":2,\"successful\":1,\"failed\":0},"
	  "\"_seq_no\":4,\"_primary_term\":1,\"status\":404}},"
	  "{\"delete\":{\"_index\":\"nope\",\"_id\":\"9\",\"status\":404,"
	  "\"error\":{\"type\":\"index_not_found_exception\",\"reason\":"
	  "\"no such index [nope]\"}}}]}",
	  RESP_ITEMS, "nn" },
	{ "mapper parsing", 200, 1,
	  "{\"took\":2,\"errors\":true,\"items\":[{\"index\":{\"_index\":"
	  "\"items\",\"_id\":\"3\",\"status\":400,\"error\":{\"type\":"
	  "\"mapper_parsing_exception\",\"reason\":\"failed to parse field "
	  "[price] of type [long] in document with id '3'. Preview of field's "
	  "value: 'abc'\",\"caused_by\":{\"type\":\"illegal_argument_exception\","
	  "\"reason\":\"For input string: \\\"abc\\\"\"}}}}]}",
	  RESP_ITEMS, "x" },
	{ "index 404 is a refusal", 200, 1,
	  "{\"errors\":true,\"items\":[{\"index\":{\"status\":404,\"error\":"
	  "{\"type\":\"index_not_found_exception\",\"reason\":\"no such index "
	  "[x] and [action.auto_create_index] is [false]\"}}}]}",
	  RESP_ITEMS, "x" },
	{ "rejected execution", 200, 2,
	  "{\"took\":1,\"errors\":true,\"items\":[{\"index\":{\"_index\":"
	  "\"items\",\"_id\":\"4\",\"status\":429,\"error\":{\"type\":"
	  "\"es_rejected_execution_exception\",\"reason\":\"rejected execution "
	  "of coordinating operation [shard_detail=[items][0][P], "
	  "shard_coordinating_and_primary_bytes=0, "
	  "shard_operation_bytes=98, shard_max_coordinating_and_primary_bytes="
	  "4]\"}}},{\"index\":{\"_index\":\"items\",\"_id\":\"5\",\"status\":201}}]}",
	  RESP_ITEMS, "ro" },
	{ "item 503", 200, 1,
	  "{\"errors\":true,\"items\":[{\"index\":{\"_index\":\"items\",\"_id\":"
	  "\"6\",\"status\":503,\"error\":{\"type\":"
	  "\"unavailable_shards_exception\",\"reason\":\"[items][0] primary "
	  "shard is not active Timeout: [1m]\"}}}]}",
	  RESP_ITEMS, "r" },
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
	  RESP_ITEMS, "oknxro" },
	{ "whole 429", 429, 1,
	  "{\"error\":{\"root_cause\":[{\"type\":"
	  "\"es_rejected_execution_exception\",\"reason\":\"rejected\"}],"
	  "\"type\":\"es_rejected_execution_exception\",\"reason\":"
	  "\"rejected\"},\"status\":429}",
	  RESP_RETRY, NULL },
	{ "whole 503", 503, 1,
	  "{\"error\":{\"type\":\"cluster_block_exception\",\"reason\":"
	  "\"blocked by: [SERVICE_UNAVAILABLE/1/state not recovered "
	  "/initialized];\"},\"status\":503}",
	  RESP_RETRY, NULL },
	{ "proxy 502 html", 502, 1, "<html><body>Bad Gateway</body></html>",
	  RESP_RETRY, NULL },
	{ "401", 401, 1,
	  "{\"error\":{\"type\":\"security_exception\",\"reason\":\"missing "
	  "authentication credentials\"},\"status\":401}",
	  RESP_AUTH, NULL },
	{ "403", 403, 1, "{\"error\":{\"type\":\"security_exception\","
	  "\"reason\":\"no permissions for [indices:data/write/bulk]\"},"
	  "\"status\":403}",
	  RESP_AUTH, NULL },
	{ "whole 400", 400, 1,
	  "{\"error\":{\"root_cause\":[{\"type\":"
	  "\"illegal_argument_exception\",\"reason\":\"Malformed action/"
	  "metadata line [1]\"}],\"type\":\"illegal_argument_exception\","
	  "\"reason\":\"Malformed action/metadata line [1]\"},\"status\":400}",
	  RESP_REJECT, NULL },
	{ "413", 413, 1, "", RESP_REJECT, NULL },
	{ "200 not json", 200, 1, "{\"items\":[", RESP_RETRY, NULL },
	{ "200 no items", 200, 1, "{\"took\":1}", RESP_RETRY, NULL },
	{ "200 too few items", 200, 3,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}}]}",
	  RESP_RETRY, NULL },
	{ "200 item without status", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"_id\":\"1\"}}]}",
	  RESP_RETRY, NULL },
	{ "200 item not an object", 200, 1,
	  "{\"errors\":false,\"items\":[7]}", RESP_RETRY, NULL },
	{ "200 error body", 200, 1,
	  "{\"error\":\"no handler\"}", RESP_RETRY, NULL },
	/* the all-written reader's edges: what it cannot vouch for goes to
	 * the full reader, which must then judge it the same as ever */
	{ "200 too many items", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}},"
	  "{\"index\":{\"status\":201}}]}", RESP_RETRY, NULL },
	{ "200 item with two actions", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201},"
	  "\"delete\":{\"status\":200}}]}", RESP_RETRY, NULL },
	{ "200 all written, whitespace around", 200, 2,
	  " \n{\"errors\" : false , \"items\" : [ {\"index\":{\"status\":"
	  "201}} , {\"d\\u0065lete\":{\"status\":200}} ]}\n",
	  RESP_ITEMS, "oo" },
	{ "200 errors false but a conflict", 200, 2,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}},"
	  "{\"index\":{\"status\":409}}]}", RESP_ITEMS, "ok" },
	{ "200 status not an integer", 200, 1,
	  "{\"errors\":false,\"items\":[{\"index\":{\"status\":2.01e2}}]}",
	  RESP_RETRY, NULL },
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
	struct item_result items[8];
	char why[256], got[16];
	enum resp_verdict v;
	size_t i;
	int k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rcase *c = &cases[i];

		why[0] = '\0';
		v = bulkresp_classify(c->status, c->body, strlen(c->body),
		    c->nsent, items, why, sizeof(why));
		is_int(v, c->want, "%s: response verdict", c->name);
		if (v != RESP_ITEMS) {
			ok(why[0] != '\0', "%s: says why (%s)", c->name, why);
			continue;
		}
		for (k = 0; k < c->nsent; k++)
			got[k] = letter(items[k].verdict);
		got[k] = '\0';
		is_str(got, c->verdicts, "%s: item verdicts", c->name);
	}

	v = bulkresp_classify(200, cases[4].body, strlen(cases[4].body), 1,
	    items, why, sizeof(why));
	is_str(items[0].type, "mapper_parsing_exception", "refusal type kept");
	ok(strncmp(items[0].reason, "failed to parse field [price]", 29) == 0,
	    "refusal reason kept");
	is_str(items[0].action, "index", "item action kept");
	is_int(items[0].status, 400, "item status kept");

	resp_error_text(cases[13].body, strlen(cases[13].body), why,
	    sizeof(why));
	is_str(why, "security_exception: no permissions for "
	    "[indices:data/write/bulk]", "error text of a 403");
	resp_error_text("<html>\n<b>x</b>", 15, why, sizeof(why));
	is_str(why, "<html> <b>x</b>", "excerpt of a non-JSON body");

	is_int(resp_status_class(200), RESP_ITEMS, "200 ok");
	is_int(resp_status_class(404), RESP_REJECT, "404 refused");
	is_int(resp_status_class(500), RESP_RETRY, "500 retry");
	is_int(resp_status_class(0), RESP_RETRY, "no status retry");
}

#define DBQ(s)	dbq_complete(s, strlen(s))

static void
test_dbq(void)
{
	ok(DBQ("{\"took\":147,\"timed_out\":false,\"total\":3,"
	    "\"deleted\":3,\"batches\":1,\"version_conflicts\":0,\"noops\":0,"
	    "\"retries\":{\"bulk\":0,\"search\":0},\"throttled_millis\":0,"
	    "\"requests_per_second\":-1.0,\"throttled_until_millis\":0,"
	    "\"failures\":[]}"), "delete_by_query done");
	ok(!DBQ("{\"timed_out\":true,\"failures\":[]}"),
	    "timed out is not done");
	ok(!DBQ("{\"timed_out\":false,\"failures\":[{\"index\":"
	    "\"items\",\"id\":\"1\",\"cause\":{\"type\":\"x\"},\"status\":500}]}"),
	    "failures are not done");
	ok(!DBQ("garbage"), "garbage is not done");
}

static struct jspan
span(const char *s)
{
	struct jspan j = { s, strlen(s) };

	return j;
}

static void
complete_is(const char *doc, const char *fields, const char *source,
    const char *want, int wantn, const char *name)
{
	struct sbuf out = SBUF_INIT;
	struct jspan src = { NULL, 0 };
	int n;

	if (source)
		src = span(source);
	n = toast_complete(&out, span(doc), span(fields), src);
	is_int(n, wantn, "%s: fields copied", name);
	if (n >= 0)
		is_str(out.buf, want, "%s: document", name);
	sbuf_release(&out);
}

/* the op of own a completion copies from: -1 the stored document */
static int
src_op(const struct toast_from *from, const struct batch *own, int i)
{
	if (from[i].b == NULL)
		return -1;
	return from[i].b == own ? from[i].i : -3;
}

static void
test_toast(void)
{
	static const char *ops[] = {
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"1\",\"v\":1,"
		    "\"doc\":{\"id\":1,\"body\":\"first\"}}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"2\",\"v\":1,"
		    "\"toast\":[\"body\"],\"doc\":{\"id\":2}}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"1\",\"v\":2,"
		    "\"toast\":[\"body\"],\"doc\":{\"id\":1,\"n\":2}}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"3\",\"v\":1,"
		    "\"routing\":\"r\",\"toast\":[\"body\"],\"doc\":{\"id\":3}}",
		"{\"k\":\"delete\",\"index\":\"t\",\"id\":\"4\",\"v\":1}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"4\",\"v\":2,"
		    "\"toast\":[\"body\"],\"doc\":{\"id\":4}}",
		"{\"k\":\"index\",\"index\":\"u\",\"id\":\"2\",\"v\":1,"
		    "\"toast\":[\"body\"],\"doc\":{\"id\":2}}",
		"{\"k\":\"index\",\"index\":\"t\",\"id\":\"2\",\"v\":3,"
		    "\"toast\":[\"body\",\"tags\"],\"doc\":{\"id\":2}}",
		"{\"k\":\"commit\",\"pos\":9}",
	};
	struct batch b;
	struct frame f;
	struct sbuf body = SBUF_INIT;
	struct jspan found[8];
	char err[128];
	struct toast_from src[16];
	int asked[16], i, nread, nasked;
	const char *resp;

	batch_init(&b, 100, 1 << 20);
	for (i = 0; i < (int)(sizeof(ops) / sizeof(ops[0])); i++) {
		f = mkframe(ops[i]);
		if (batch_add(&b, &f, err, sizeof(err)) == -1)
			printf("# %s\n", err);
	}
	ok(toast_needed(&b, b.nops), "batch needs completion");
	ok(!toast_needed(&b, 1), "first op alone does not");
	nread = toast_plan(&b, b.nops, NULL, 0, src);
	is_int(nread, 3, "three stored documents to read");
	is_int(src_op(src, &b, 1), -1, "t/2 read from the target");
	is_int(src_op(src, &b, 2), 0, "t/1 completed from the earlier op in the batch");
	is_int(src_op(src, &b, 3), -1, "t/3 (routed) read from the target");
	is_int(src_op(src, &b, 5), 4, "t/4 follows the delete before it");
	is_int(src_op(src, &b, 6), -1, "u/2 is another document than t/2");
	is_int(src_op(src, &b, 7), 1, "second t/2 completed from the first");
	nasked = toast_mget_body(&b, b.nops, src, &body, asked);
	is_int(nasked, 3, "mget asks three docs");
	is_str(body.buf, "{\"docs\":[{\"_index\":\"t\",\"_id\":\"2\"},"
	    "{\"_index\":\"t\",\"_id\":\"3\",\"routing\":\"r\"},"
	    "{\"_index\":\"u\",\"_id\":\"2\"}]}", "mget body");
	ok(asked[0] == 1 && asked[1] == 3 && asked[2] == 6, "asked order");
	batch_release(&b);

	/* a key change: completion reads the document under its old id, or
	 * the pending write of that old id in the same batch */
	batch_init(&b, 100, 1 << 20);
	{
		const char *moved[] = {
			"{\"k\":\"index\",\"index\":\"t\",\"id\":\"9\",\"v\":2,"
			    "\"toast\":[\"body\"],\"toast_id\":\"8\",\"doc\":{\"id\":9}}",
			"{\"k\":\"index\",\"index\":\"t\",\"id\":\"5\",\"v\":2,"
			    "\"doc\":{\"id\":5,\"body\":\"b\"}}",
			"{\"k\":\"index\",\"index\":\"t\",\"id\":\"6\",\"v\":3,"
			    "\"toast\":[\"body\"],\"toast_id\":\"5\",\"doc\":{\"id\":6}}",
			"{\"k\":\"commit\",\"pos\":9}",
		};
		for (i = 0; i < 4; i++) {
			f = mkframe(moved[i]);
			if (batch_add(&b, &f, err, sizeof(err)) == -1)
				printf("# %s\n", err);
		}
	}
	nread = toast_plan(&b, b.nops, NULL, 0, src);
	is_int(nread, 1, "key change: one stored document to read");
	is_int(src_op(src, &b, 0), -1, "t/9 reads the stored t/8");
	is_int(src_op(src, &b, 2), 1, "t/6 completes from the pending t/5");
	nasked = toast_mget_body(&b, b.nops, src, &body, asked);
	is_str(body.buf, "{\"docs\":[{\"_index\":\"t\",\"_id\":\"8\"}]}",
	    "mget asks the old id");

	resp = "{\"docs\":[{\"_index\":\"t\",\"_id\":\"2\",\"_version\":1,"
	    "\"_seq_no\":0,\"_primary_term\":1,\"found\":true,\"_source\":"
	    "{\"id\":2,\"body\":\"stored \\u00e9\",\"tags\":[1, 2]}},"
	    "{\"_index\":\"t\",\"_id\":\"3\",\"found\":false},"
	    "{\"_index\":\"u\",\"_id\":\"2\",\"error\":{\"root_cause\":[],"
	    "\"type\":\"index_not_found_exception\",\"reason\":\"no such index"
	    " [u]\",\"index\":\"u\"}}]}";
	ok(toast_mget_parse(resp, strlen(resp), 3, found) == 0, "mget parsed");
	ok(found[0].p && strncmp(found[0].p, "{\"id\":2,\"body\"", 14) == 0,
	    "found doc's _source span");
	ok(found[1].p == NULL, "not found");
	ok(found[2].p == NULL, "missing index is not found");
	ok(toast_mget_parse(resp, strlen(resp), 2, found) == -1,
	    "count mismatch refused");
	resp = "{\"docs\":[{\"_index\":\"t\",\"_id\":\"2\",\"error\":{\"type\":"
	    "\"no_shard_available_action_exception\",\"reason\":\"x\"}}]}";
	ok(toast_mget_parse(resp, strlen(resp), 1, found) == -1,
	    "a shard failure is not a missing document");
	ok(toast_mget_parse("{\"docs\":[", 9, 1, found) == -1, "garbled");

	complete_is("{\"id\":2}", "[\"body\",\"tags\"]",
	    "{\"id\":2,\"body\":\"stored \\u00e9\",\"tags\":[1, 2]}",
	    "{\"id\":2,\"body\":\"stored \\u00e9\",\"tags\":[1, 2]}", 2,
	    "values spliced verbatim");
	complete_is("{}", "[\"body\"]", "{\"body\":12345678901234567890.10}",
	    "{\"body\":12345678901234567890.10}", 1,
	    "empty doc, number kept exact");
	complete_is("{\"id\":2,\"body\":\"new\"}", "[\"body\"]",
	    "{\"body\":\"old\"}", "{\"id\":2,\"body\":\"new\"}", 0,
	    "a value the op carries wins");
	complete_is("{\"id\":2}", "[\"body\",\"body\"]",
	    "{\"body\":1}", "{\"id\":2,\"body\":1}", 1,
	    "a field listed twice is copied once");
	complete_is("{\"id\":2}", "[\"gone\"]", "{\"body\":1}",
	    "{\"id\":2}", 0, "a field the stored doc lacks stays absent");
	complete_is("{\"id\":2}", "[\"body\"]", NULL, "{\"id\":2}", 0,
	    "no stored document: doc unchanged");
	complete_is("{\"id\":2}", "[\"a\\\"b\"]", "{\"a\\\"b\":true}",
	    "{\"id\":2,\"a\\\"b\":true}", 1, "escaped field name");
	complete_is("{\"id\":2}", "[\"body\"]", "[1]", NULL, -1,
	    "a source that is not an object is an error");
	sbuf_release(&body);
	batch_release(&b);
}

int
main(void)
{
	test_bulk();
	test_dbq();
	test_toast();
	return done_testing();
}
