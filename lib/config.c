/*
 * config.c - the YAML configuration's public face (config.h): loads a file
 * or a buffer into struct config by the section tables, releases it, finds
 * a sync section by table. Owns the top-level table, the rules between
 * sections, the *_env secrets and the inline-secret warnings.
 *
 * Each section's keys and rules live in config_<section>.c; the walker
 * that reads any table is config_schema.c, over the tree config_tree.c
 * builds. It never exits and never logs or returns a value that may hold a
 * secret: errors quote key names, variable names and identifiers, never
 * urls or passwords. The only thing logged is the inline-secret warning,
 * and only once the whole file has loaded.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_sections.h"
#include "log.h"
#include "sbuf.h"

static int finish_config(struct cs_walk *, void *, const char *, int);

static const struct cs_node sections[] = {
	{ "source", CS_STRUCT, .required = 1, .keys = config_source_keys,
	    .finish = config_source_finish },
	{ "target", CS_STRUCT, .required = 1, .keys = config_target_keys,
	    .finish = config_target_finish },
	{ "sync", CS_MAP, CFG(syncs), .required = 1,
	    .elem = &config_sync_section,
	    .elem_size = sizeof(struct sync_section),
	    .count_off = CFG(nsyncs),
	    .name_off = offsetof(struct sync_section, name),
	    .has_line = 1, .line_off = offsetof(struct sync_section, line),
	    .expect = "must be a mapping of sections, one per table",
	    .empty = "must hold at least one section" },
	{ "engine", CS_STRUCT, .keys = config_engine_keys },
	{ "metrics", CS_STRUCT, .keys = config_metrics_keys },
	{ NULL }
};

static const struct cs_node root = {
	NULL, CS_STRUCT, .keys = sections, .finish = finish_config,
	.expect = "must be a mapping of sections (source, target, sync, ...)"
};

int
config_check_envname(const char *s, char *why, size_t len)
{
	const char *c;

	for (c = s; *c; c++)
		if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= 'a' && *c <= 'z') ||
		    (c != s && *c >= '0' && *c <= '9')))
			break;
	if (*c != '\0') {
		snprintf(why, len, "must be the name of an environment "
		    "variable ([A-Za-z_][A-Za-z0-9_]*)");
		return -1;
	}
	return 0;
}

/* getenv for a *_env key; never quotes the value */
int
config_resolve_env(struct cs_walk *w, const char *path, int line,
    const char *var, char **dst)
{
	const char *v = getenv(var);

	if (v == NULL)
		return cs_err(w, line, "'%s' names '%s', which is not set",
		    path, var);
	if (*v == '\0')
		return cs_err(w, line, "'%s' names '%s', which is empty",
		    path, var);
	free(*dst);
	*dst = xstrdup(v);
	return 0;
}

/* user:pass@ in the authority, ?password= in the query, or a conninfo
 * password keyword */
static int
has_inline_password(const char *url)
{
	const char *auth, *end, *at, *q, *s;

	if ((auth = strstr(url, "://")) != NULL) {
		auth += 3;
		end = auth + strcspn(auth, "/?#");
		for (at = NULL, s = auth; s < end; s++)
			if (*s == '@')
				at = s;
		if (at && memchr(auth, ':', (size_t)(at - auth)))
			return 1;
		for (q = strchr(end, '?'); q && *q && *q != '#';
		    q += strcspn(q + 1, "&#") + 1)
			if (config_has_prefix(q + 1, "password="))
				return 1;
		return 0;
	}
	for (s = url; (s = strstr(s, "password")) != NULL; s += 8) {
		const char *v = s + 8;

		if (s != url && !isspace((unsigned char)s[-1]))
			continue;
		while (isspace((unsigned char)*v))
			v++;
		if (*v == '=')
			return 1;
	}
	return 0;
}

/* where a sync section's table lives depends on the kind of source; two
 * sections may share neither a table nor an index */
static int
finish_syncs(struct cs_walk *w, struct config *cfg)
{
	struct sync_section *s, *o;
	struct sbuf path = SBUF_INIT;
	char *rel;
	int i, j;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (s->schema == NULL) {
			/* a MySQL table lives in a database the url need
			 * not name; guessing one would sync the wrong table */
			if (cfg->source_kind == SOURCE_MYSQL) {
				sbuf_adds(&path, "sync");
				cs_path_add(&path, s->name);
				cs_err(w, s->line, "'%s.table' must be "
				    "'database.table' for a mysql source",
				    path.buf);
				sbuf_release(&path);
				return -1;
			}
			s->schema = xstrdup("public");
		}
		rel = xmalloc(strlen(s->schema) + strlen(s->table) + 2);
		sprintf(rel, "%s.%s", s->schema, s->table);
		free(s->rel);
		s->rel = rel;
		for (j = 0; j < i; j++) {
			o = &cfg->syncs[j];
			if (strcmp(o->rel, s->rel) == 0)
				return cs_err(w, s->line, "sync sections '%s' "
				    "and '%s' both sync table '%s'", o->name,
				    s->name, s->rel);
			/* without a per-section id both would file row 1
			 * under _id "1" (one index per table until
			 * ids are configurable) */
			if (strcmp(o->index, s->index) == 0)
				return cs_err(w, s->line, "sync sections '%s' "
				    "and '%s' both write index '%s'", o->name,
				    s->name, s->index);
		}
	}
	return 0;
}

/* warnings go out only for a file that loaded: one message per problem */
static void
warn_inline_secrets(struct cs_walk *w, const struct config *cfg)
{
	int lurl = cs_line(w, "source.url");
	int lpw = cs_line(w, "target.password");

	if (lurl && has_inline_password(cfg->source_url))
		log_warnx("%s:%d: 'source.url' holds an inline password; "
		    "name an environment variable with 'source.url_env' "
		    "instead", cs_name(w), lurl);
	if (lpw)
		log_warnx("%s:%d: 'target.password' is inline; name an "
		    "environment variable with 'target.password_env' "
		    "instead", cs_name(w), lpw);
}

/* the last rule: every section has passed its own */
static int
finish_config(struct cs_walk *w, void *base, const char *path, int line)
{
	struct config *cfg = base;

	if (finish_syncs(w, cfg) == -1)
		return -1;
	warn_inline_secrets(w, cfg);
	return 0;
}

int
config_load_mem(const char *name, const char *buf, size_t len,
    struct config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->path = xstrdup(name);
	if (cs_load(&root, cfg, name, buf, len, err, errlen) == -1) {
		config_release(cfg);
		return -1;
	}
	return 0;
}

int
config_load(const char *path, struct config *cfg, char *err, size_t errlen)
{
	FILE *fp;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int rc, saved;

	memset(cfg, 0, sizeof(*cfg));
	if ((fp = fopen(path, "r")) == NULL)
		goto fail;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = xrealloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len, fp);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(fp)) {
		saved = errno;
		fclose(fp);
		errno = saved;
		goto fail;
	}
	fclose(fp);
	rc = config_load_mem(path, buf, len, cfg, err, errlen);
	free(buf);
	return rc;

fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	free(buf);
	return -1;
}

void
config_release(struct config *cfg)
{
	cs_release(&root, cfg);
	free(cfg->path);
	memset(cfg, 0, sizeof(*cfg));
}

const struct sync_section *
config_find_rel(const struct config *cfg, const char *rel)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (strcmp(cfg->syncs[i].rel, rel) == 0)
			return &cfg->syncs[i];
	return NULL;
}
