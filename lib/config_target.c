/*
 * config_target.c - the target section: the search engine documents are
 * written to. Owns its keys, what a target url may hold, the rules between
 * the credential keys, which target module serves it, and the check of
 * every key elsewhere that needs a capability of the target (routing,
 * join, a pipeline, a mapping, requests open at once) against what that
 * module declares (lib/target.h): refused at load, naming the key. The
 * target also answers, through its table, whether each index name is one
 * it takes and what body each index is created with: config knows no
 * engine's naming rules or request bodies. target.urls names the nodes
 * of one cluster: a target whose nodes each keep documents of their own
 * does not take it (TCAP_NODES).
 *
 * It never quotes the url or a password.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config_sections.h"
#include "nodes.h"
#include "sbuf.h"
#include "target.h"

/* the keys of a sync section that need a capability */
static const struct {
	const char *key;
	unsigned cap;
	const char *why;
} section_needs[] = {
	{ "routing", TCAP_ROUTING, "its documents would land on shards no "
	    "routed query reads" },
	{ "join", TCAP_JOIN, "its parent and child documents need one index "
	    "with a join field" },
	{ "pipeline", TCAP_PIPELINES, "its documents would be written without "
	    "the fields the pipeline computes" },
	{ "mapping_file", TCAP_MAPPINGS, "its index cannot be created with "
	    "the mapping" },
};

static const struct cs_node url_elem = { NULL, CS_STR };

/* the names of the modules (lib/target.c), the default first */
static const char *const flavors[] = { "opensearch", "elasticsearch",
    "meilisearch", "qdrant", "postgres", NULL };

const struct cs_node config_target_keys[] = {
	{ "url", CS_STR, CFG(target_url) },
	{ "url_env", CS_STR, CFG(target_url_env),
	    .check = config_check_envname },
	{ "urls", CS_LIST, CFG(target_urls), .elem = &url_elem,
	    .elem_size = sizeof(char *), .count_off = CFG(ntarget_urls),
	    .distinct = 1, .expect = "must be a list of urls, one per node",
	    .empty = "must name at least one node" },
	{ "api_key_env", CS_STR, CFG(target_api_key_env),
	    .check = config_check_envname },
	{ "ca_file", CS_STR, CFG(target_ca_file) },
	{ "tls_verify", CS_BOOL, CFG(target_tls_verify), .def = "true" },
	{ "flavor", CS_ENUM, CFG(target_flavor), .choices = flavors,
	    .def = "opensearch" },
	{ "state_dir", CS_STR, CFG(target_state_dir) },
	{ "require_alias", CS_BOOL, CFG(target_require_alias),
	    .def = "false" },
	{ "username", CS_STR, CFG(target_username) },
	{ "password", CS_STR, CFG(target_password) },
	{ "password_env", CS_STR, CFG(target_password_env),
	    .check = config_check_envname },
	{ NULL }
};

/* checks target.url and strips trailing slashes in place */
static int
check_target_url(char *url, char *why, size_t len)
{
	const char *host, *end, *port;
	size_t n;

	if (config_has_prefix(url, "http://"))
		host = url + 7;
	else if (config_has_prefix(url, "https://"))
		host = url + 8;
	else {
		snprintf(why, len, "must start with http:// or https://");
		return -1;
	}
	end = host + strcspn(host, "/");
	if (end == host) {
		snprintf(why, len, "must name a host");
		return -1;
	}
	if (memchr(host, '@', (size_t)(end - host))) {
		snprintf(why, len, "must not hold credentials; use "
		    "'target.username' and 'target.password_env'");
		return -1;
	}
	if (strpbrk(url, "?# \t\r\n")) {
		snprintf(why, len, "must not hold a query, a fragment or "
		    "white space");
		return -1;
	}
	/* Serverless is refused: SigV4-only, and custom ids work on
	 * one collection type of three */
	port = memchr(host, ':', (size_t)(end - host));
	n = (size_t)((port ? port : end) - host);
	if (n >= 19 && strncasecmp(host + n - 19, ".aoss.amazonaws.com", 19)
	    == 0) {
		snprintf(why, len, "names Amazon OpenSearch Serverless, which "
		    "is not supported");
		return -1;
	}
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/' && url + n - 1 >= end)
		url[--n] = '\0';
	return 0;
}

/* each node of target.urls as target.url is checked, none named twice */
static int
check_target_urls(struct cs_walk *w, struct config *cfg)
{
	char why[256];
	int i, k;

	if (cfg->ntarget_urls > NODES_MAX)
		return cs_err(w, cs_line(w, "target.urls"), "'target.urls' "
		    "lists %d nodes: at most %d", cfg->ntarget_urls,
		    NODES_MAX);
	for (i = 0; i < cfg->ntarget_urls; i++) {
		if (check_target_url(cfg->target_urls[i], why, sizeof(why))
		    == -1)
			return cs_err(w, cs_line(w, "target.urls[%d]", i),
			    "'target.urls[%d]' %s", i, why);
		for (k = 0; k < i; k++)
			if (strcmp(cfg->target_urls[k], cfg->target_urls[i])
			    == 0)
				return cs_err(w, cs_line(w, "target.urls[%d]",
				    i), "'target.urls[%d]' names the node of "
				    "'target.urls[%d]' again", i, k);
	}
	return 0;
}

int
config_target_finish(struct cs_walk *w, void *base, const char *path,
    int line)
{
	struct config *cfg = base;
	char why[256];

	cfg->target_module = target_module_find(cfg->target_flavor);
	if (cfg->target_module == NULL)
		return cs_err(w, cs_line(w, "target.flavor"), "'target.flavor' "
		    "names no target module");
	int lstate = cs_line(w, "target.state_dir");

	/* the checkpoint lives in the target when it can keep documents of
	 * ours, else in files: exactly one place, never two */
	if (target_can(cfg->target_module, TCAP_STATE_DOCS) && lstate)
		return cs_err(w, lstate, "'target.state_dir' is for a target "
		    "that keeps no state documents; target '%s' keeps them in "
		    "%s", cfg->target_module->name,
		    cfg->target_module->state_place);
	if (!target_can(cfg->target_module, TCAP_STATE_DOCS) && !lstate)
		return cs_err(w, cs_line(w, "target.flavor"), "target '%s' "
		    "keeps no checkpoint itself: set 'target.state_dir' to a "
		    "directory for it", cfg->target_module->name);
	if (lstate && cfg->target_state_dir[0] == '\0')
		return cs_err(w, lstate, "'target.state_dir' is empty");
	int lurl = cs_line(w, "target.url");
	int lpw = cs_line(w, "target.password");
	int lenv = cs_line(w, "target.password_env");

	int lurlenv = cs_line(w, "target.url_env");
	int lurls = cs_line(w, "target.urls");
	int lkey = cs_line(w, "target.api_key_env");
	int lca = cs_line(w, "target.ca_file");

	if (lurl && lurlenv)
		return cs_err(w, lurl > lurlenv ? lurl : lurlenv, "'target.url' "
		    "and 'target.url_env' cannot both be set");
	if (lurls && (lurl || lurlenv))
		return cs_err(w, lurls, "'target.urls' and 'target.%s' cannot "
		    "both be set: list every node in 'target.urls'",
		    lurl ? "url" : "url_env");
	if (!lurl && !lurlenv && !lurls)
		return cs_err(w, line, "missing required key 'target.url' (or "
		    "'target.url_env', or 'target.urls')");
	if (lurls && check_target_urls(w, cfg) == -1)
		return -1;
	if (lurlenv && config_resolve_env(w, "target.url_env", lurlenv,
	    cfg->target_url_env, &cfg->target_url) == -1)
		return -1;
	/* the url from the environment is never quoted: it is checked the
	 * same, and named by its variable */
	if (cfg->target_url != NULL && (cfg->target_module->url_check ?
	    cfg->target_module->url_check(cfg->target_url, why, sizeof(why)) :
	    check_target_url(cfg->target_url, why, sizeof(why))) == -1)
		return lurl ? cs_err(w, lurl, "'target.url' %s", why) :
		    cs_err(w, lurlenv, "'target.url_env': the value of '%s' %s",
		    cfg->target_url_env, why);
	if (lkey && (cfg->target_username || lpw || lenv))
		return cs_err(w, lkey, "'target.api_key_env' and "
		    "'target.username' cannot both be set: an API key is the "
		    "whole credential");
	if (lkey && config_resolve_env(w, "target.api_key_env", lkey,
	    cfg->target_api_key_env, &cfg->target_api_key) == -1)
		return -1;
	if (lca && config_resolves(w, "target.ca_file") &&
	    access(cfg->target_ca_file, R_OK) == -1)
		return cs_err(w, lca, "'target.ca_file' '%s': %s",
		    cfg->target_ca_file, strerror(errno));
	if (lpw && lenv)
		return cs_err(w, lpw > lenv ? lpw : lenv, "'target.password' "
		    "and 'target.password_env' cannot both be set");
	if ((lpw || lenv) && cfg->target_username == NULL)
		return cs_err(w, lpw ? lpw : lenv, "'target.%s' needs "
		    "'target.username'", lpw ? "password" : "password_env");
	if (lenv && config_resolve_env(w, "target.password_env", lenv,
	    cfg->target_password_env, &cfg->target_password) == -1)
		return -1;
	return 0;
}

static void
add_need(struct config *cfg, unsigned cap, int line, const char *key,
    const char *why)
{
	struct target_need *n;

	cfg->target_needs = xrealloc(cfg->target_needs,
	    (size_t)(cfg->ntarget_needs + 1) * sizeof(*cfg->target_needs));
	n = &cfg->target_needs[cfg->ntarget_needs++];
	n->cap = cap;
	n->line = line;
	n->key = xstrdup(key);
	n->why = why;
}

/* the first need module does not offer, or NULL */
static const struct target_need *
unmet(const struct config *cfg, const struct target_module *m)
{
	int i;

	for (i = 0; i < cfg->ntarget_needs; i++)
		if (!target_can(m, cfg->target_needs[i].cap))
			return &cfg->target_needs[i];
	return NULL;
}

#define UNMET_FMT	"'%s' needs %s, which target '%s' does not offer: %s"

int
config_target_needs(struct cs_walk *w, struct config *cfg)
{
	const struct target_need *n;
	const struct sync_section *s;
	struct sbuf key = SBUF_INIT;
	size_t k;
	int i, line;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		/* every rendered name would need an alias made beforehand */
		if (cfg->target_require_alias && s->index_templated) {
			sbuf_release(&key);
			config_sec_path(s, &key);
			line = cs_line(w, "%s.index", key.buf);
			cs_err(w, line, "'%s.index' is a template, and "
			    "'target.require_alias' writes only through aliases: "
			    "an index rendered from a row has no alias to write "
			    "through", key.buf);
			sbuf_release(&key);
			return -1;
		}
		for (k = 0; k < sizeof(section_needs) /
		    sizeof(section_needs[0]); k++) {
			sbuf_reset(&key);
			sbuf_adds(&key, "sync");
			cs_path_add(&key, s->name);
			cs_path_add(&key, section_needs[k].key);
			if ((line = cs_line(w, "%s", key.buf)) == 0)
				continue;
			add_need(cfg, section_needs[k].cap, line, key.buf,
			    section_needs[k].why);
		}
	}
	sbuf_release(&key);
	if (cfg->target_require_alias)
		add_need(cfg, TCAP_ALIASES, cs_line(w, "target.require_alias"),
		    "target.require_alias", "it has no aliases for the writes "
		    "to name");
	if (cfg->ntarget_urls > 1)
		add_need(cfg, TCAP_NODES, cs_line(w, "target.urls"),
		    "target.urls", "each of its servers keeps documents of its "
		    "own: name one with 'target.url'");
	if (cfg->write_concurrency > 1) {
		line = cs_line(w, "engine.write_concurrency");
		add_need(cfg, TCAP_CONCURRENT_WRITES, line,
		    "engine.write_concurrency", "set it to 1");
		add_need(cfg, TCAP_EXTERNAL_VERSIONS, line,
		    "engine.write_concurrency", "requests open at once may "
		    "land in either order, and only a target that keeps the "
		    "higher version orders them");
	}
	if ((n = unmet(cfg, cfg->target_module)) != NULL)
		return cs_err(w, n->line, UNMET_FMT, n->key,
		    target_cap_name(n->cap), cfg->target_module->name, n->why);
	if (config_quarantine(cfg) && cfg->target_module->rejects == NULL)
		return cs_err(w, cs_line(w, "engine.on_permanent_rejection"),
		    "'engine.on_permanent_rejection: quarantine' needs a "
		    "store for refused documents, which target '%s' does not "
		    "offer: use halt", cfg->target_module->name);
	return 0;
}

int
config_check_target(const struct config *cfg, const struct target_module *m,
    char *err, size_t errlen)
{
	const struct target_need *n = unmet(cfg, m);

	if (n == NULL)
		return 0;
	snprintf(err, errlen, "%s:%d: " UNMET_FMT, cfg->path, n->line, n->key,
	    target_cap_name(n->cap), m->name, n->why);
	return -1;
}

/* the index, or each literal part of its template, by the target's rules */
static int
check_index_name(struct cs_walk *w, const struct target_ops *ops,
    const struct sync_section *s, const char *path)
{
	const struct tmpl *t = &s->index_t;
	char why[256];
	int i, line = cs_line(w, "%s.index", path);

	if (ops->index_name == NULL)
		return 0;
	if (line == 0) {
		if (ops->index_name(s->index, TNAME_WHOLE, why,
		    sizeof(why)) == -1)
			return cs_err(w, s->line, "'%s.index' is not set and "
			    "the table name '%s' is not a valid index name: "
			    "it %s",
			    path, s->table, why);
		return 0;
	}
	if (!s->index_templated)
		return ops->index_name(s->index, TNAME_WHOLE, why,
		    sizeof(why)) == -1 ? cs_err(w, line, "'%s.index' %s", path,
		    why) : 0;
	for (i = 0; i < t->nparts; i++)
		if (!t->parts[i].column && ops->index_name(t->parts[i].text,
		    i == 0 ? TNAME_HEAD : TNAME_INSIDE, why,
		    sizeof(why)) == -1)
			return cs_err(w, line, "'%s.index' %s", path, why);
	return 0;
}

int
config_target_indices(struct cs_walk *w, struct config *cfg)
{
	const struct target_ops *ops = cfg->target_module->ops;
	struct sync_section *s;
	struct sbuf path = SBUF_INIT;
	char why[512];
	int i, rc = 0;

	for (i = 0; rc == 0 && i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		config_sec_path(s, &path);
		rc = check_index_name(w, ops, s, path.buf);
		/* a mapping is read only into a section's more */
		if (rc == 0 && sync_more(s)->mapping != NULL &&
		    ops->index_body(s, s->more->mapping,
		    strlen(s->more->mapping), &s->more->index_body, why,
		    sizeof(why)) == -1)
			rc = cs_err(w, cs_line(w, "%s.mapping_file", path.buf),
			    "'%s.mapping_file' '%s' %s", path.buf,
			    s->more->mapping_path, why);
	}
	sbuf_release(&path);
	return rc;
}

int
config_target_join_body(struct cs_walk *w, struct sync_section *s)
{
	struct sync_more *m = s->more;
	const struct config *cfg = cs_base(w);
	struct sbuf path = SBUF_INIT;
	char why[512];
	int rc = 0;

	free(m->index_body);
	m->index_body = NULL;
	if (cfg->target_module->ops->index_body(s, NULL, 0, &m->index_body,
	    why, sizeof(why)) == -1) {
		config_sec_path(s, &path);
		rc = cs_err(w, cs_line(w, "%s.join", path.buf), "'%s.join': %s",
		    path.buf, why);
	}
	sbuf_release(&path);
	return rc;
}

int
config_check_index_name(const struct config *cfg, const char *name,
    char *why, size_t len)
{
	const struct target_ops *ops = cfg->target_module->ops;

	return ops->index_name ? ops->index_name(name, TNAME_WHOLE, why,
	    len) : 0;
}

const char *const *
config_target_urls(const struct config *cfg, int *n)
{
	if (cfg->ntarget_urls > 0) {
		*n = cfg->ntarget_urls;
		return (const char *const *)cfg->target_urls;
	}
	*n = cfg->target_url != NULL;
	return (const char *const *)&cfg->target_url;
}

void
config_target_release(void *base)
{
	struct config *cfg = base;
	int i;

	for (i = 0; i < cfg->ntarget_needs; i++)
		free(cfg->target_needs[i].key);
	free(cfg->target_needs);
	cfg->target_needs = NULL;
	cfg->ntarget_needs = 0;
	/* resolved from api_key_env: no key table holds it, so cs_release
	 * does not see it (target_url and target_password are table keys) */
	free(cfg->target_api_key);
	cfg->target_api_key = NULL;
}
