/*
 * validate/target.c - validate's target checks, every one a question to
 * the target module (lib/target.h) that changes nothing: the node and its
 * version, the credentials, every ingest pipeline a section names, what a
 * write to each index name would meet, and an existing index's mapping
 * against the section's mapping_file. With several nodes (target.urls)
 * each node is also asked on its own.
 */
#include <string.h>

#include "validate/check.h"
#include "p2o.h"
#include "target.h"

static void
pipelines(struct check_report *r, struct target_conn *tc,
    const struct config *cfg)
{
	const struct sync_section *s;
	struct p2o_err e;
	int i, k, rc, seen;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		/* a pipeline is set only in a section's more */
		if (sync_more(s)->pipeline == NULL)
			continue;
		for (seen = 0, k = 0; k < i; k++)
			seen |= sync_more(&cfg->syncs[k])->pipeline != NULL &&
			    strcmp(sync_more(&cfg->syncs[k])->pipeline,
			    s->more->pipeline) == 0;
		if (seen)
			continue;
		p2o_err_clear(&e);
		rc = tc->mod->ops->pipeline_exists(tc, s->more->pipeline, &e);
		if (rc == 1)
			check_ok(r, "target: ingest pipeline '%s' exists",
			    s->more->pipeline);
		else if (rc == 0)
			check_fail(r, "target: ingest pipeline '%s' "
			    "('sync.%s.pipeline') does not exist: every write "
			    "naming it would be refused; create it first (PUT "
			    "_ingest/pipeline/%s)", s->more->pipeline, s->name,
			    s->more->pipeline);
		else
			check_fail(r, "target: reading ingest pipeline '%s': %s",
			    s->more->pipeline, e.msg);
	}
}

static void
mapping(struct check_report *r, struct target_conn *tc,
    const struct sync_section *s, const char *body)
{
	struct sbuf report = SBUF_INIT;
	struct p2o_err e;
	int n;

	p2o_err_clear(&e);
	if (tc->mod->ops->mapping_conflicts(tc, s->index, body, &report, &n,
	    &e) == -1)
		check_fail(r, "target: index '%s': reading its mapping: %s",
		    s->index, e.msg);
	else if (n > 0)
		check_fail(r, "target: index '%s' exists with a mapping that "
		    "contradicts 'sync.%s.mapping_file': %s (an existing index "
		    "is never changed: reindex, or fix the file)", s->index,
		    s->name, report.buf);
	else
		check_ok(r, "target: index '%s' maps the fields of its "
		    "mapping_file as the file does", s->index);
	sbuf_release(&report);
}

static void
indices(struct check_report *r, struct target_conn *tc,
    const struct config *cfg)
{
	const struct sync_section *s;
	struct target_index_state st;
	struct p2o_err e;
	const char *body;
	int i;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (!section_first_of_index(cfg, i))
			continue;
		if (s->index_templated) {
			check_ok(r, "target: index template '%s': each index is "
			    "created at its first document", s->index);
			continue;
		}
		p2o_err_clear(&e);
		if (tc->mod->ops->index_state(tc, s->index, &st, &e) == -1) {
			check_fail(r, "target: index '%s': %s", s->index, e.msg);
			continue;
		}
		body = config_index_body(cfg, s->index);
		if (cfg->target_require_alias && !st.alias)
			check_fail(r, "target: '%s' is %s, and target."
			    "require_alias writes only through an alias: create "
			    "an index and an alias '%s' naming it (pg2osync "
			    "reindex builds both)", s->index, st.exists ?
			    "an index, not an alias" : "not there", s->index);
		else if (st.alias && !st.write_index)
			check_fail(r, "target: index name '%s' is an alias of %d "
			    "indices and none is its write index: the target "
			    "refuses writes to it (name an index, or set "
			    "is_write_index on one)", s->index, st.nindices);
		else if (st.closed)
			check_fail(r, "target: index '%s' is closed: the target "
			    "refuses writes to it (POST %s/_open)", s->index,
			    s->index);
		else if (st.blocked[0])
			check_fail(r, "target: index '%s' refuses writes (%s is "
			    "set)", s->index, st.blocked);
		else if (!st.exists)
			check_ok(r, "target: index '%s' does not exist yet; the "
			    "writer creates it%s", s->index, body ?
			    " with its mapping" : "");
		else {
			check_ok(r, "target: %s '%s' exists and takes writes",
			    st.alias ? "alias" : "index", s->index);
			if (body != NULL)
				mapping(r, tc, s, body);
		}
	}
}

/*
 * Each node of several on its own: one that does not answer is no
 * failure, as its requests go to the others (the pipeline runs while one
 * node answers), but is said; one that refuses the credentials or the
 * certificate, or is another engine or version, fails.
 */
static void
each_node(struct check_report *r, const struct config *cfg,
    const struct target_module *mod)
{
	const char *const *urls;
	struct http_client c;
	struct http_opts o;
	struct http_call call;
	struct sbuf resp = SBUF_INIT;
	char node[128], why[400];
	long status;
	int i, n;

	urls = config_target_urls(cfg, &n);
	if (n < 2)
		return;
	target_http_opts(cfg, &o);
	for (i = 0; i < n; i++) {
		if (http_init(&c, &urls[i], 1, &o) == -1) {
			check_fail(r, "target: node '%s': %s", urls[i], c.err);
			continue;
		}
		memset(&call, 0, sizeof(call));
		mod->ops->probe_call(&call);
		if (http_request(&c, call.method, call.path, call.ctype,
		    call.body, call.len, &resp, &status) == -1) {
			if (c.tls_failed)
				check_fail(r, "target: node '%s': %s", urls[i],
				    c.err);
			else
				check_skip(r, "target: node '%s' does not "
				    "answer (%s): the other nodes take its "
				    "requests", urls[i], c.err);
			http_release(&c);
			continue;
		}
		switch (mod->ops->probe_answer(status, &resp, node,
		    sizeof(node), why, sizeof(why))) {
		case TA_OK:
			check_ok(r, "target: node '%s' is %s", urls[i], node);
			break;
		case TA_AUTH:
			check_fail(r, "target: node '%s' refused the "
			    "credentials (HTTP %ld: %s)", urls[i], status, why);
			break;
		case TA_REFUSED:
			check_fail(r, "target: node '%s': %s", urls[i], why);
			break;
		default:
			check_skip(r, "target: node '%s' answered HTTP %ld (%s): "
			    "the other nodes take its requests", urls[i],
			    status, why);
			break;
		}
		http_release(&c);
	}
	sbuf_release(&resp);
}

void
validate_target(struct check_report *r, const struct config *cfg)
{
	struct target_conn tc;
	struct http_call call;
	struct sbuf resp = SBUF_INIT;
	struct p2o_err e;
	char node[128], why[400];
	const char *where;
	enum target_answer a;
	long status;

	p2o_err_clear(&e);
	if (target_conn_open(&tc, cfg, &e) == -1) {
		check_fail(r, "target: %s", e.msg);
		return;
	}
	/* the one url, or the list of nodes: any of them may answer */
	where = tc.http.nodes->names;
	memset(&call, 0, sizeof(call));
	tc.mod->ops->probe_call(&call);
	if (target_request(&tc, &call, &resp, &status, &e) == -1) {
		check_fail(r, "target: %s is unreachable: %s", where, e.msg);
		check_skip(r, "target: pipelines and indices: not checked "
		    "without the target");
		goto out;
	}
	a = tc.mod->ops->probe_answer(status, &resp, node, sizeof(node), why,
	    sizeof(why));
	if (a == TA_AUTH) {
		check_fail(r, "target: %s refused the credentials (HTTP %ld: "
		    "%s)", where, status, why);
		goto out;
	}
	if (a == TA_REFUSED) {
		/* another engine or version than target.flavor names */
		check_fail(r, "target: %s", why);
		goto out;
	}
	if (a != TA_OK) {
		check_fail(r, "target: %s answered HTTP %ld: %s", where, status,
		    why);
		goto out;
	}
	check_ok(r, "target: %s at %s accepts the credentials", node, where);
	each_node(r, cfg, tc.mod);
	pipelines(r, &tc, cfg);
	indices(r, &tc, cfg);
out:
	sbuf_release(&resp);
	target_conn_release(&tc);
}
