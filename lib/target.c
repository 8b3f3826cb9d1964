/*
 * target.c - the table of target modules and what every module shares:
 * finding one by name, its capabilities, a blocking connection for the
 * state and administration operations, and the buffers of a barrier
 * procedure. Knows no engine's protocol: that is each module's
 * (lib/target/). Never exits and never quotes a credential.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "p2o.h"
#include "target.h"

extern const struct target_module target_opensearch;
extern const struct target_module target_elasticsearch;
extern const struct target_module target_meilisearch;

/* the first is the default */
static const struct target_module *const modules[] = {
	&target_opensearch,
	&target_elasticsearch,
	&target_meilisearch,
};

static const struct {
	unsigned cap;
	const char *name;
} cap_names[] = {
	{ TCAP_EXTERNAL_VERSIONS, "external versions" },
	{ TCAP_CONCURRENT_WRITES, "concurrent writes" },
	{ TCAP_ROUTING, "routing" },
	{ TCAP_JOIN, "join" },
	{ TCAP_PIPELINES, "ingest pipelines" },
	{ TCAP_MAPPINGS, "mappings" },
	{ TCAP_ASYNC_TASKS, "asynchronous tasks" },
	{ TCAP_STATE_DOCS, "state documents" },
	{ TCAP_ALIASES, "aliases" },
	{ TCAP_INDEX_SWAP, "index swaps" },
	{ TCAP_COMPLETE_DOCS, "completing a document from its stored copy" },
};

const struct target_module *
target_module_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return modules[0];
	for (i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		if (strcmp(modules[i]->name, name) == 0)
			return modules[i];
	return NULL;
}

int
target_can(const struct target_module *m, unsigned caps)
{
	return (m->caps & caps) == caps;
}

const char *
target_cap_name(unsigned cap)
{
	size_t i;

	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (cap_names[i].cap == cap)
			return cap_names[i].name;
	return "";
}

void
target_http_opts(const struct config *cf, struct http_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->username = cf->target_username;
	o->password = cf->target_password;
	o->api_key = cf->target_api_key;
	o->api_key_scheme = cf->target_module ?
	    cf->target_module->api_key_scheme : NULL;
	o->ca_file = cf->target_ca_file;
	o->no_verify = !cf->target_tls_verify;
}

int
target_conn_open(struct target_conn *c, const struct config *cf,
    struct p2o_err *err)
{
	struct http_opts o;

	memset(c, 0, sizeof(*c));
	c->mod = cf->target_module ? cf->target_module :
	    target_module_find(NULL);
	if (cf->target_url == NULL)
		return p2o_fail(err, P2O_EXIT_CONFIG, "%s: target.url: missing",
		    cf->path);
	c->state_dir = cf->target_state_dir;
	target_http_opts(cf, &o);
	if (http_init(&c->http, cf->target_url, &o) == -1)
		return p2o_fail(err, P2O_EXIT_CONFIG, "target: %s",
		    c->http.err);
	return 0;
}

void
target_conn_release(struct target_conn *c)
{
	http_release(&c->http);
	memset(c, 0, sizeof(*c));
}

int
target_request(struct target_conn *c, const struct http_call *call,
    struct sbuf *resp, long *status, struct p2o_err *err)
{
	sbuf_reset(resp);
	if (http_request(&c->http, call->method, call->path, call->ctype,
	    call->body, call->len, resp, status) == -1)
		return p2o_fail(err, c->http.tls_failed ? P2O_EXIT_REFUSED :
		    P2O_EXIT_TEMPFAIL, "%s", c->http.err);
	return 0;
}

void
target_proc_init(struct target_proc *p)
{
	memset(p, 0, sizeof(*p));
	sbuf_init(&p->path);
	sbuf_init(&p->body);
	sbuf_init(&p->query);
	sbuf_init(&p->scroll);
	sbuf_init(&p->plan);
}

void
target_proc_reset(struct target_proc *p)
{
	p->kind = 0;
	p->index = p->parent = NULL;
	p->field.p = p->value.p = p->children.p = p->parent_id.p = NULL;
	p->field.n = p->value.n = p->children.n = p->parent_id.n = 0;
	p->gone = 0;
	p->version = 0;
	p->step = 0;
	p->npage = 0;
	p->task = 0;
	p->task_open = 0;
	p->at = p->next_at = 0;
	p->done = 0;
	p->poll_ms = 0;
	p->sent_all = 0;
	p->page_done = 0;
	p->page_bytes = 0;
	p->deleted = p->newer = 0;
	sbuf_reset(&p->path);
	sbuf_reset(&p->body);
	sbuf_reset(&p->query);
	sbuf_reset(&p->scroll);
	sbuf_reset(&p->plan);
}

void
target_proc_release(struct target_proc *p)
{
	sbuf_release(&p->path);
	sbuf_release(&p->body);
	sbuf_release(&p->query);
	sbuf_release(&p->scroll);
	sbuf_release(&p->plan);
	free(p->items);
	memset(p, 0, sizeof(*p));
}

void
target_rejects_release(struct target_rejects *set)
{
	int i;

	for (i = 0; i < set->nmem; i++)
		free(set->mem[i]);
	free(set->mem);
	free(set->r);
	free(set->key);
	memset(set, 0, sizeof(*set));
}
