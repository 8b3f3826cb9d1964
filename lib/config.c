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
#include "config_pack.h"
#include "config_sections.h"
#include "log.h"
#include "memtrim.h"
#include "p2o.h"
#include "sbuf.h"
#include "source.h"

static int finish_config(struct cs_walk *, void *, const char *, int);

static const struct cs_node sections[] = {
	{ "source", CS_STRUCT, .required = 1, .keys = config_source_keys,
	    .finish = config_source_finish,
	    .release = config_source_release },
	{ "target", CS_STRUCT, .required = 1, .keys = config_target_keys,
	    .finish = config_target_finish,
	    .release = config_target_release },
	{ "sync", CS_MAP, CFG(syncs), .required = 1,
	    .elem = &config_sync_section,
	    .elem_size = sizeof(struct sync_section),
	    .count_off = CFG(nsyncs),
	    .name_off = offsetof(struct sync_section, name),
	    .has_line = 1, .line_off = offsetof(struct sync_section, line),
	    .expect = "must be a mapping of sections, one per table",
	    .empty = "must hold at least one section" },
	{ "engine", CS_STRUCT, .keys = config_engine_keys },
	{ "metrics", CS_STRUCT, .keys = config_metrics_keys,
	    .finish = config_listen_finish,
	    .release = config_listen_release },
	{ "api", CS_STRUCT, .keys = config_api_keys,
	    .finish = config_listen_finish,
	    .release = config_listen_release },
	{ "log", CS_STRUCT, .keys = config_log_keys },
	{ "traces", CS_STRUCT, .keys = config_traces_keys },
	{ NULL }
};

const struct cs_node config_root = {
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

/* a secret belongs to the section its key is in */
static unsigned
secret_of(const char *path)
{
	if (config_has_prefix(path, "source."))
		return CONFIG_SECRET_SOURCE;
	if (config_has_prefix(path, "target."))
		return CONFIG_SECRET_TARGET;
	if (config_has_prefix(path, "metrics.") ||
	    config_has_prefix(path, "api."))
		return CONFIG_SECRET_LISTEN;
	/* a pseudonym's key_env, the only secret of a sync section */
	if (config_has_prefix(path, "sync"))
		return CONFIG_SECRET_TRANSFORM;
	return 0;
}

int
config_resolves(struct cs_walk *w, const char *path)
{
	const struct config *cfg = cs_base(w);

	return (cfg->secrets & secret_of(path)) != 0;
}

/* getenv for a *_env key the program asked for; never quotes the value */
int
config_resolve_env(struct cs_walk *w, const char *path, int line,
    const char *var, char **dst)
{
	const char *v;

	/* a program that does not use the secret must not need it set
	 * (the shaper replaying a file at a desk) */
	if (!config_resolves(w, path))
		return 0;
	v = getenv(var);
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

const char *
config_sec_path(const struct sync_section *s, struct sbuf *buf)
{
	sbuf_reset(buf);
	sbuf_adds(buf, "sync");
	cs_path_add(buf, s->name);
	return buf->buf;
}

/* the line of key in section s, else the section's */
static int
sec_line(struct cs_walk *w, const struct sync_section *s, const char *key)
{
	struct sbuf p = SBUF_INIT;
	int line;

	line = cs_line(w, "%s.%s", config_sec_path(s, &p), key);
	sbuf_release(&p);
	return line ? line : s->line;
}

/* a constant's {schema} and {table}, once: the shaper inserts the JSON */
static void
render_constants(struct sync_section *s)
{
	struct tmpl t;
	struct sbuf v = SBUF_INIT;
	char why[64];
	struct sync_more *m = s->more;
	int i, k;

	if (m == NULL)
		return;
	for (i = 0; i < m->nconstants; i++) {
		/* a number or a boolean is its JSON already */
		if (m->constants[i].literal)
			continue;
		sbuf_reset(&v);
		sbuf_add(&v, "", 0);
		/* config_sync.c parsed it already */
		if (tmpl_parse(m->constants[i].value, &t, why,
		    sizeof(why)) == -1)
			continue;
		for (k = 0; k < t.nparts; k++)
			sbuf_adds(&v, !t.parts[k].column ? t.parts[k].text :
			    strcmp(t.parts[k].text, "schema") == 0 ?
			    s->schema : s->table);
		tmpl_release(&t);
		free(m->constants[i].json);
		sbuf_add(&v, "", 0);
		{
			struct sbuf j = SBUF_INIT;

			sbuf_add_jstr(&j, v.buf, v.len);
			m->constants[i].json = j.buf;
		}
	}
	sbuf_release(&v);
}

/* what an index name or template claims, for overlap checks */
static const char *
claim(const struct sync_section *s)
{
	return s->index_templated ? s->index_glob : s->index;
}

/* two sections writing one index, or indices one template can render */
static int
check_sharing(struct cs_walk *w, struct sync_section *s,
    struct sync_section *o)
{
	if (!s->index_templated && !o->index_templated) {
		if (strcmp(o->index, s->index) != 0)
			return 0;
		s->shared = o->shared = 1;
		/* with ids from each table's own key, two tables with a
		 * row 1 would become one document by accident */
		if (!s->id || !o->id)
			return cs_err(w, sec_line(w, s, "index"), "sync "
			    "sections '%s' and '%s' both write index '%s': "
			    "sections may share an index only when each "
			    "declares 'id'", o->name, s->name, s->index);
		if (sync_more(s)->index_body && sync_more(o)->index_body &&
		    strcmp(s->more->index_body, o->more->index_body) != 0)
			return cs_err(w, sec_line(w, s, "mapping_file"), "sync "
			    "sections '%s' and '%s' both write index '%s' "
			    "with different mapping files", o->name, s->name,
			    s->index);
		if (s->has_join != o->has_join)
			return cs_err(w, sec_line(w, s, "index"), "sync "
			    "sections '%s' and '%s' both write index '%s', "
			    "which holds a join: every section writing it "
			    "must be part of the join", o->name, s->name,
			    s->index);
		return 0;
	}
	if (glob_overlap(claim(s), claim(o)))
		return cs_err(w, sec_line(w, s, "index"), "sync section '%s' "
		    "writes index '%s', which section '%s' can write too "
		    "('%s'): a templated index is its section's alone",
		    s->name, s->index, o->name, o->index);
	return 0;
}

/* check_sharing fails for a pair of which one is templated */
static int
overlaps(const struct sync_section *s, const struct sync_section *o)
{
	return glob_overlap(claim(s), claim(o));
}

static struct sync_section *
find_section(struct config *cfg, const char *name)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (strcmp(cfg->syncs[i].name, name) == 0)
			return &cfg->syncs[i];
	return NULL;
}

/* the join parent section writing index, or NULL */
static struct sync_section *
join_parent_of(struct config *cfg, const char *index)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (cfg->syncs[i].has_join &&
		    cfg->syncs[i].more->join.parent == NULL &&
		    strcmp(cfg->syncs[i].index, index) == 0)
			return &cfg->syncs[i];
	return NULL;
}

/*
 * A join: one parent per index, children naming it, one field. A child
 * computes its parent's id from one column, so the parent's id names
 * exactly one.
 */
static int
check_joins(struct cs_walk *w, struct config *cfg)
{
	struct sync_section *s, *p, *o;
	struct sbuf path = SBUF_INIT;
	int i, j, body;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (!s->has_join || s->more->join.parent == NULL)
			continue;
		p = s->more->join.by_element ? join_parent_of(cfg, s->index) :
		    find_section(cfg, s->more->join.parent);
		if (p == NULL && s->more->join.by_element) {
			cs_err(w, sec_line(w, s, "join.parent"), "'%s.join."
			    "parent' is '%s', and index '%s' has no join parent "
			    "section for the elements to name",
			    config_sec_path(s, &path), s->more->join.parent,
			    s->index);
			goto fail;
		}
		if (p == NULL || !p->has_join || p->more->join.parent != NULL) {
			cs_err(w, sec_line(w, s, "join.parent"), "'%s.join."
			    "parent' names '%s', which is not a sync section "
			    "with a join and no parent of its own",
			    config_sec_path(s, &path), s->more->join.parent);
			goto fail;
		}
		if (strcmp(p->index, s->index) != 0 ||
		    strcmp(p->more->join.field, s->more->join.field) != 0) {
			cs_err(w, sec_line(w, s, "join"), "'%s.join': a child "
			    "writes its parent's index ('%s') with its join "
			    "field ('%s')", config_sec_path(s, &path), p->index,
			    p->more->join.field);
			goto fail;
		}
		if (config_sync_join_key(w, s, p) == -1)
			goto fail;
		s->more->join.parent_sec = (int)(p - cfg->syncs);
		p->more->join.children = xrealloc(p->more->join.children,
		    (size_t)(p->more->join.nchildren + 1) * sizeof(char *));
		p->more->join.children[p->more->join.nchildren++] =
		    s->more->join.name;
	}
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (!s->has_join)
			continue;
		for (j = 0; j < i; j++) {
			o = &cfg->syncs[j];
			if (!o->has_join || strcmp(o->index, s->index) != 0)
				continue;
			if (strcmp(o->more->join.name,
			    s->more->join.name) == 0) {
				cs_err(w, sec_line(w, s, "join.name"), "'%s."
				    "join.name' repeats relation '%s' of "
				    "section '%s'", config_sec_path(s, &path),
				    s->more->join.name, o->name);
				goto fail;
			}
			if (!o->more->join.parent && !s->more->join.parent) {
				cs_err(w, sec_line(w, s, "join"), "'%s.join': "
				    "index '%s' has a join parent already, "
				    "section '%s'", config_sec_path(s, &path),
				    s->index, o->name);
				goto fail;
			}
		}
		if (s->more->join.parent)
			continue;
		if (s->more->join.nchildren == 0) {
			cs_err(w, sec_line(w, s, "join"), "'%s.join' is a "
			    "parent no section names as its 'parent'",
			    config_sec_path(s, &path));
			goto fail;
		}
		if (s->id_t.ncolumns != 1) {
			cs_err(w, sec_line(w, s, "id"), "'%s.id' must name "
			    "exactly one column, the parent's key: a join "
			    "child computes its parent's id from one column",
			    config_sec_path(s, &path));
			goto fail;
		}
		/* the generated join mapping, unless a sharer has a file */
		for (body = 0, j = 0; j < cfg->nsyncs; j++)
			if (sync_more(&cfg->syncs[j])->index_body &&
			    strcmp(cfg->syncs[j].index, s->index) == 0)
				body = 1;
		if (!body && config_target_join_body(w, s) == -1)
			goto fail;
	}
	sbuf_release(&path);
	return 0;
fail:
	sbuf_release(&path);
	return -1;
}

/*
 * What finish_syncs needs to find, for each section, the first section
 * before it that it conflicts with - the same table, or an index the two
 * may not share (check_sharing) - without comparing every pair: ten
 * thousand sections writing one index made that 5 * 10^7 pairs and four
 * seconds in every process at each start (issue 38). The sections before
 * the one checked have passed every check between themselves, which is
 * what lets a group sharing an index be judged by two of its members.
 */
struct pairs {
	struct strindex byindex;	/* the first section of each plain
					 * (not templated) index */
	int	*body;		/* by a group's first section: its first
				 * member with an index body, or -1 */
	int	*templated;	/* the templated sections so far, in order */
	int	 ntemplated;
};

static const char *
index_of(const void *arg, int pos, int *tag)
{
	const struct config *cfg = arg;

	*tag = 0;
	return cfg->syncs[pos].index;
}

static const char *
rel_of(const void *arg, int pos, int *tag)
{
	const struct config *cfg = arg;

	*tag = 0;
	return cfg->syncs[pos].rel;
}

static void
pairs_init(struct pairs *pg, struct config *cfg)
{
	memset(pg, 0, sizeof(*pg));
	strindex_init(&pg->byindex, index_of);
	pg->body = xcalloc((size_t)cfg->nsyncs + 1, sizeof(*pg->body));
	pg->templated = xcalloc((size_t)cfg->nsyncs + 1,
	    sizeof(*pg->templated));
	strindex_release(&cfg->relidx);
	strindex_init(&cfg->relidx, rel_of);
}

static void
pairs_release(struct pairs *pg)
{
	strindex_release(&pg->byindex);
	free(pg->body);
	free(pg->templated);
	memset(pg, 0, sizeof(*pg));
}

static int
min_pos(int a, int b)
{
	return a < b ? a : b;
}

/*
 * The first j < i whose pair with section i fails: the same rel, or
 * check_sharing; i when none does. Files section i for the sections
 * after it. In a group sharing a plain index every earlier member has an
 * id (else the second member failed), the same has_join, and one index
 * body where it has one: so a failing id or join fails first with the
 * group's first member, and a body first with its first member having
 * one.
 */
static int
pairs_first(struct config *cfg, struct pairs *pg, int i)
{
	struct sync_section *s = &cfg->syncs[i], *o;
	int j, g, b, first = i;

	/* the first section with this rel is the one filed */
	if ((j = strindex_put(&cfg->relidx, cfg, i)) != i)
		first = j;
	if (s->index_templated) {
		/* a template is checked against every section before it
		 * (a few sections have one) */
		for (j = 0; j < first; j++)
			if (overlaps(s, &cfg->syncs[j])) {
				first = j;
				break;
			}
		pg->templated[pg->ntemplated++] = i;
		return first;
	}
	if ((g = strindex_put(&pg->byindex, cfg, i)) == i)
		pg->body[i] = sync_more(s)->index_body ? i : -1;
	else {
		o = &cfg->syncs[g];
		s->shared = o->shared = 1;
		if (!s->id || !o->id || s->has_join != o->has_join)
			first = min_pos(first, g);
		b = pg->body[g];
		if (sync_more(s)->index_body && b >= 0 &&
		    strcmp(s->more->index_body,
		    cfg->syncs[b].more->index_body) != 0)
			first = min_pos(first, b);
		if (b < 0 && sync_more(s)->index_body)
			pg->body[g] = i;
	}
	for (j = 0; j < pg->ntemplated && pg->templated[j] < first; j++)
		if (overlaps(s, &cfg->syncs[pg->templated[j]]))
			return pg->templated[j];
	return first;
}

/* where a sync section's table lives depends on the kind of source; two
 * sections may share a table never, an index only with declared ids */
static int
finish_syncs(struct cs_walk *w, struct config *cfg)
{
	struct sync_section *s, *o;
	struct sbuf path = SBUF_INIT;
	struct pairs pg;
	char *rel;
	int i, j, append = 0;

	pairs_init(&pg, cfg);
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (s->schema == NULL) {
			/* a MySQL table lives in a database the url need
			 * not name; guessing one would sync the wrong table */
			if (cfg->source->default_schema == NULL) {
				cs_err(w, s->line, "'%s.table' must be "
				    "'%s.table' for a %s source",
				    config_sec_path(s, &path),
				    cfg->source->schema_word,
				    cfg->source->noun);
				sbuf_release(&path);
				pairs_release(&pg);
				return -1;
			}
			s->schema = xstrdup(cfg->source->default_schema);
		}
		rel = xmalloc(strlen(s->schema) + strlen(s->table) + 2);
		sprintf(rel, "%s.%s", s->schema, s->table);
		free(s->rel);
		s->rel = rel;
		render_constants(s);
		config_sync_scopes(s);
		if (config_nest_resolve(w, cfg, s, config_sec_path(s,
		    &path)) == -1) {
			sbuf_release(&path);
			pairs_release(&pg);
			return -1;
		}
		append |= s->append_only;
		/* the first section before s it conflicts with, found
		 * without comparing s with every one (pairs_first), then
		 * the pair's checks in their order, for the message */
		j = pairs_first(cfg, &pg, i);
		if (j < i) {
			o = &cfg->syncs[j];
			sbuf_release(&path);
			pairs_release(&pg);
			if (strcmp(o->rel, s->rel) == 0)
				return cs_err(w, s->line, "sync sections '%s' "
				    "and '%s' both sync table '%s'", o->name,
				    s->name, s->rel);
			return check_sharing(w, s, o);
		}
	}
	sbuf_release(&path);
	pairs_release(&pg);
	/* the keyless tables go in a second publication, <name>_append */
	if (append && cfg->publication && strlen(cfg->publication) > 56)
		return cs_err(w, cs_line(w, "source.publication"),
		    "'source.publication' must be at most 56 bytes long when "
		    "a section is append_only: its keyless tables go in "
		    "publication '<publication>_append'");
	return check_joins(w, cfg);
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

	if (cfg->batch_max_bytes == 0)
		cfg->batch_max_bytes = CONFIG_BODIES_BYTES /
		    (size_t)(cfg->write_concurrency + 1);
	/* what the target must offer first, then what it makes of each
	 * section's index, then the rules between sections (which compare
	 * those bodies) */
	if (config_target_needs(w, cfg) == -1 ||
	    config_target_indices(w, cfg) == -1 || finish_syncs(w, cfg) == -1 ||
	    config_source_poll(w, cfg) == -1)
		return -1;
	warn_inline_secrets(w, cfg);
	return 0;
}

static int
load_mem(const char *name, const char *buf, size_t len, unsigned secrets,
    struct config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->path = xstrdup(name);
	cfg->secrets = secrets & (CONFIG_SECRETS_ALL | CONFIG_SECRET_LISTEN |
	    CONFIG_SECRET_TRANSFORM);
	if (cs_load(&config_root, cfg, name, buf, len, err, errlen) == -1) {
		config_release(cfg);
		return -1;
	}
	config_pack(cfg);
	mem_trim();
	return 0;
}

int
config_load_mem(const char *name, const char *buf, size_t len,
    struct config *cfg, char *err, size_t errlen)
{
	return load_mem(name, buf, len, CONFIG_SECRETS_ALL, cfg, err, errlen);
}

static int
load_file(const char *path, unsigned secrets, struct config *cfg, char *err,
    size_t errlen)
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
	rc = load_mem(path, buf, len, secrets, cfg, err, errlen);
	free(buf);
	return rc;

fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	free(buf);
	return -1;
}

int
config_load_with(const char *path, unsigned secrets, struct config *cfg,
    struct p2o_err *e)
{
	char err[P2O_ERR_MAX];

	p2o_err_clear(e);
	if (load_file(path, secrets, cfg, err, sizeof(err)) == -1)
		return p2o_fail(e, P2O_EXIT_CONFIG, "%s", err);
	return 0;
}

void
config_release(struct config *cfg)
{
	config_unpack(cfg);
	cs_release(&config_root, cfg);
	strindex_release(&cfg->relidx);
	free(cfg->path);
	memset(cfg, 0, sizeof(*cfg));
}

/* what sync_more gives a section that sets none of it */
const struct sync_more sync_more_none;

const struct sync_section *
config_find_index(const struct config *cfg, const char *index)
{
	const struct sync_section *s;
	int i;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (s->index_templated ? glob_match(s->index_glob, index) :
		    strcmp(s->index, index) == 0)
			return s;
	}
	return NULL;
}

const char *
config_index_body(const struct config *cfg, const char *index)
{
	const struct sync_section *s;
	int i;

	/* sharers of an index agree on its body (finish_syncs) */
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (sync_more(s)->index_body && (s->index_templated ?
		    glob_match(s->index_glob, index) :
		    strcmp(s->index, index) == 0))
			return sync_more(s)->index_body;
	}
	return NULL;
}

const struct sync_section *
config_find_rel(const struct config *cfg, const char *rel)
{
	int i;

	if (cfg->relidx.name_of != NULL) {
		i = strindex_get(&cfg->relidx, cfg, 0, rel, strlen(rel));
		return i < 0 ? NULL : &cfg->syncs[i];
	}
	for (i = 0; i < cfg->nsyncs; i++)
		if (strcmp(cfg->syncs[i].rel, rel) == 0)
			return &cfg->syncs[i];
	return NULL;
}

const struct sync_section *
config_find_named(const struct config *cfg, const char *name)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (strcmp(cfg->syncs[i].name, name) == 0 ||
		    strcmp(cfg->syncs[i].table, name) == 0 ||
		    strcmp(cfg->syncs[i].rel, name) == 0)
			return &cfg->syncs[i];
	return NULL;
}

int
config_reload_on_lost(const struct config *cfg)
{
	return cfg->on_lost_position == NULL ||
	    strcmp(cfg->on_lost_position, "reload") == 0;
}

int
config_quarantine(const struct config *cfg)
{
	return cfg->on_permanent_rejection != NULL &&
	    strcmp(cfg->on_permanent_rejection, "quarantine") == 0;
}
