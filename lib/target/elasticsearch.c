/*
 * elasticsearch.c - the Elasticsearch 8 and 9 target. Its data path, state
 * documents and index settings are the OpenSearch module's (the two speak
 * the same _bulk, external_gte versions, _mget, _settings and scroll):
 * this file holds what differs: the probe, and the type of a JSON value
 * kept whole in a mapping file (flattened). A clear is the OpenSearch
 * module's too: a scroll and a bulk delete of each page at the truncate's
 * version, which needs nothing but the core (a node without the reindex
 * module has no _delete_by_query).
 *
 *  - The probe asks the node's own information, not GET /: that answer is
 *    the rest-root module's, which a node may lack (the integ-test
 *    distribution does), while node info says the version and the build
 *    flavour on every Elasticsearch node. OpenSearch has no build flavour.
 *
 * Pure, as the OpenSearch module: never makes a request, logs or exits.
 */
#include <stdio.h>
#include <string.h>

#include "opensearch.h"

/* the Elasticsearch major versions this module was written and tested for */
#define ES_MAJOR_MIN	8
#define ES_MAJOR_MAX	9

static void
probe_call(struct http_call *call)
{
	http_call_set(call, "GET", "/_nodes/_local?filter_path="
	    "nodes.*.version,nodes.*.build_flavor", NULL, NULL, 0);
}

/* {"nodes":{"<id>":{"version":"8.19.3","build_flavor":"default"}}} */
static enum target_answer
probe_answer(long status, const struct sbuf *resp, char *node,
    size_t nodelen, char *why, size_t whylen)
{
	enum target_answer a = os_answer_class(status, resp->buf, resp->len);
	struct jspan obj, nodes, k, one, v;
	struct jiter it;
	char num[32] = "", flavor[32] = "";
	int major;

	if (nodelen)
		node[0] = '\0';
	if (a != TA_OK) {
		os_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	if (target_body_object(resp->buf, resp->len, &obj) == -1 ||
	    !jobj_get(obj, "nodes", &nodes) || jiter_init(&it, nodes) == -1 ||
	    !jiter_member(&it, &k, &one) || jspan_type(one) != J_OBJECT) {
		snprintf(why, whylen, "the node's information is not the "
		    "answer of an Elasticsearch node");
		return TA_RETRY;
	}
	if (jobj_get(one, "version", &v))
		os_copy_cut(v, num, sizeof(num));
	if (jobj_get(one, "build_flavor", &v))
		os_copy_cut(v, flavor, sizeof(flavor));
	major = os_major(num);
	if (flavor[0] == '\0') {
		snprintf(why, whylen, "target.flavor is elasticsearch but the "
		    "node (version %s, no build flavour) is not Elasticsearch; "
		    "set target.flavor: opensearch for an OpenSearch node",
		    num[0] ? num : "unknown");
		return TA_REFUSED;
	}
	if (major < ES_MAJOR_MIN || major > ES_MAJOR_MAX) {
		snprintf(why, whylen, "target.flavor is elasticsearch but the "
		    "node runs Elasticsearch %s; supported: %d.x to %d.x", num,
		    ES_MAJOR_MIN, ES_MAJOR_MAX);
		return TA_REFUSED;
	}
	snprintf(node, nodelen, "elasticsearch %s", num);
	return TA_OK;
}

/* Elasticsearch's type for a JSON value kept whole is flattened (OpenSearch
 * calls it flat_object, which Elasticsearch refuses) */
static void
mapping_file(const struct target_field *f, int n, struct sbuf *out)
{
	os_mapping_fields(f, n, "flattened", out);
}

static const struct target_ops ops = {
	OS_SHARED_OPS,
	.probe_call = probe_call,
	.probe_answer = probe_answer,
	.mapping_file = mapping_file,
};

/* join and ingest pipelines are Elasticsearch's own (the parent-join and
 * ingest-common modules of every full distribution) */
const struct target_module target_elasticsearch = {
	.name = "elasticsearch",
	.state_place = "index '" OS_STATE_INDEX "'",
	.caps = TCAP_EXTERNAL_VERSIONS | TCAP_CONCURRENT_WRITES |
	    TCAP_ROUTING | TCAP_JOIN | TCAP_PIPELINES | TCAP_MAPPINGS |
	    TCAP_STATE_DOCS | TCAP_ALIASES | TCAP_COMPLETE_DOCS |
	    TCAP_NODES,
	.ops = &ops,
	/* the quarantine and the read-back speak _bulk, _search and the
	 * scroll API, which both engines answer the same */
	.rejects = &os_rejects_ops,
	.rejects_place = "index '" OS_REJECTS_INDEX "'",
	.scan = &os_scan_ops,
};
