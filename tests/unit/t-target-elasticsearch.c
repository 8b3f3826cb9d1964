/*
 * t-target-elasticsearch.c - what the Elasticsearch module does otherwise
 * than the OpenSearch one, through its table: the probe (node info, the
 * version and build flavour; another engine or major refused naming
 * both), and a clear that scrolls and bulk-deletes, since a node may have
 * no _delete_by_query. Also what the OpenSearch probe says of an
 * Elasticsearch node. The shared data path is t-target-opensearch.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "p2o.h"
#include "tap.h"
#include "target.h"

static const struct target_ops *ops;

static enum target_answer
probe(const struct target_ops *o, long status, const char *body, char *node,
    char *why)
{
	struct sbuf r = SBUF_INIT;
	enum target_answer a;

	sbuf_adds(&r, body);
	a = o->probe_answer(status, &r, node, 64, why, 256);
	sbuf_release(&r);
	return a;
}

static void
test_probe(void)
{
	const struct target_ops *os = target_module_find("opensearch")->ops;
	struct http_call call;
	char node[64], why[256];

	ops->probe_call(&call);
	ok(strcmp(call.method, "GET") == 0 &&
	    strncmp(call.path, "/_nodes/_local?", 15) == 0,
	    "the probe asks the node's information");
	is_int(probe(ops, 200, "{\"nodes\":{\"x1\":{\"version\":\"8.19.3\","
	    "\"build_flavor\":\"default\"}}}", node, why), TA_OK,
	    "an Elasticsearch 8 node");
	is_str(node, "elasticsearch 8.19.3", "what is there");
	is_int(probe(ops, 200, "{\"nodes\":{\"x1\":{\"version\":\"2.19.6\"}}}",
	    node, why), TA_REFUSED, "an OpenSearch node: refused");
	ok(strstr(why, "target.flavor is elasticsearch") &&
	    strstr(why, "2.19.6") && strstr(why, "opensearch"),
	    "naming both: %s", why);
	is_int(probe(ops, 200, "{\"nodes\":{\"x1\":{\"version\":\"7.17.1\","
	    "\"build_flavor\":\"default\"}}}", node, why), TA_REFUSED,
	    "Elasticsearch 7: refused");
	ok(strstr(why, "7.17.1") && strstr(why, "8.x"), "saying so: %s", why);
	is_int(probe(ops, 401, "{}", node, why), TA_AUTH, "401: credentials");
	is_int(probe(ops, 503, "{}", node, why), TA_RETRY, "503: not yet");
	is_int(probe(ops, 200, "{\"nodes\":{}}", node, why), TA_RETRY,
	    "no node in the answer: not yet");

	is_int(probe(os, 200, "{\"version\":{\"number\":\"8.19.3\","
	    "\"build_flavor\":\"default\"},\"tagline\":\"You Know, for "
	    "Search\"}", node, why), TA_REFUSED,
	    "the OpenSearch module refuses an Elasticsearch node");
	ok(strstr(why, "target.flavor is opensearch") && strstr(why,
	    "8.19.3") && strstr(why, "elasticsearch"), "naming both: %s", why);
	is_int(probe(os, 405, "{\"error\":\"Incorrect HTTP method for uri [/] "
	    "and method [GET], allowed: [DELETE]\",\"status\":405}", node, why),
	    TA_REFUSED, "a node that does not serve GET /: Elasticsearch");
	ok(strstr(why, "target.flavor is opensearch") != NULL, "saying so: %s",
	    why);
	is_int(probe(os, 200, "{\"version\":{\"distribution\":\"opensearch\","
	    "\"number\":\"4.0.0\"}}", node, why), TA_REFUSED,
	    "and an OpenSearch major it was not written for");
	is_int(probe(os, 200, "{\"version\":{\"distribution\":\"opensearch\","
	    "\"number\":\"3.1.0\"}}", node, why), TA_OK, "OpenSearch 3: taken");
}

static enum target_answer
step(struct target_proc *p, struct http_call *call, long status,
    const char *resp)
{
	struct sbuf r = SBUF_INIT;
	char why[512];
	enum target_answer a;

	sbuf_adds(&r, resp);
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

	target_proc_init(&p);
	p.kind = PROC_CLEAR;
	p.index = "items";
	p.version = 42;
	ops->proc_call(&p, &call);
	is_str(call.path, "/items/_refresh", "clear: a refresh first");
	is_int(step(&p, &call, 200, "{}"), TA_NEXT, "then a search");
	is_str(call.path, "/items/_search?scroll=1m", "scrolled, not routed");
	is_str(call.body, "{\"size\":5000,\"_source\":false,\"sort\":"
	    "[\"_doc\"],\"query\":{\"match_all\":{}}}",
	    "of everything, a page at a time, in index order");
	is_int(step(&p, &call, 200, "{\"_scroll_id\":\"s1\",\"hits\":{\"hits\":"
	    "[{\"_index\":\"items\",\"_id\":\"1\"},{\"_index\":\"items\","
	    "\"_id\":\"2\",\"_routing\":\"r\"}]}}"), TA_NEXT, "a page");
	is_str(call.body, "{\"delete\":{\"_index\":\"items\",\"_id\":\"1\","
	    "\"version\":42,\"version_type\":\"external_gte\"}}\n"
	    "{\"delete\":{\"_index\":\"items\",\"_id\":\"2\",\"version\":42,"
	    "\"version_type\":\"external_gte\",\"routing\":\"r\"}}\n",
	    "deleted in bulk at the truncate's version (a newer copy stays), "
	    "where routed");
	is_int(step(&p, &call, 200, "{\"errors\":true,\"items\":[{\"delete\":"
	    "{\"status\":404}},{\"delete\":{\"status\":429}}]}"), TA_RETRY,
	    "a delete not done: the page again");
	is_int(step(&p, &call, 200, "{\"errors\":false,\"items\":[{\"delete\":"
	    "{\"status\":200}},{\"delete\":{\"status\":200}}]}"), TA_NEXT,
	    "the page deleted");
	ok(p.page_done == 2, "and counted");
	is_str(call.path, "/_search/scroll", "the next page");
	is_int(step(&p, &call, 200, "{\"_scroll_id\":\"s1\",\"hits\":{\"hits\":"
	    "[]}}"), TA_NEXT, "no more: the scroll is closed");
	is_str(call.method, "DELETE", "by a DELETE");
	is_int(step(&p, &call, 200, "{}"), TA_OK, "and the clear is done");
	target_proc_reset(&p);
	p.kind = PROC_CLEAR;
	p.index = "gone";
	ops->proc_call(&p, &call);
	is_int(step(&p, &call, 404, "{}"), TA_OK, "no index: nothing to clear");
	ok(p.gone, "and it says so");
	target_proc_release(&p);
}

/* a JSON value kept whole: Elasticsearch calls it flattened, and refuses
 * OpenSearch's flat_object */
static void
test_mapping_file(void)
{
	struct target_field f[2] = {
		{ .name = "doc", .kind = TF_FLAT },
		{ .name = "n", .kind = TF_LONG },
	};
	struct sbuf out = SBUF_INIT;

	ops->mapping_file(f, 2, &out);
	is_str(out.buf, "{\"mappings\":{\"properties\":{\"doc\":{\"type\":"
	    "\"flattened\"},\"n\":{\"type\":\"long\"}}}}\n",
	    "a flat JSON field is 'flattened' in an Elasticsearch mapping file");
	sbuf_reset(&out);
	target_module_find("opensearch")->ops->mapping_file(f, 1, &out);
	ok(strstr(out.buf, "\"flat_object\"") != NULL,
	    "and 'flat_object' in OpenSearch's");
	sbuf_release(&out);
}

int
main(void)
{
	const struct target_module *m = target_module_find("elasticsearch");

	if (m == NULL) {
		printf("not ok 1 - no elasticsearch module\n1..1\n");
		return 1;
	}
	ops = m->ops;
	ok(target_can(m, TCAP_EXTERNAL_VERSIONS | TCAP_CONCURRENT_WRITES |
	    TCAP_STATE_DOCS) && !target_can(m, TCAP_ASYNC_TASKS),
	    "external versions, concurrent writes, state documents");
	test_probe();
	test_clear();
	test_mapping_file();
	return done_testing();
}
