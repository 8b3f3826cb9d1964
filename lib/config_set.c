/*
 * config_set.c - a directory of configuration files (config_set.h): the
 * files it holds, each loaded, and the rules between them. A rule broken
 * by two files names both and says what they would take from each other;
 * every file's own error and every broken rule is reported in one run, so
 * that a directory is fixed in one pass. Never exits, connects nowhere:
 * what a url names is read from its text (lib/source.c).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_set.h"
#include "p2o.h"
#include "source.h"

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
yaml_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".yaml") == 0;
}

int
config_dir_files(const char *dir, char ***paths, int *n, struct p2o_err *e)
{
	struct dirent *de;
	struct stat st;
	struct sbuf p = SBUF_INIT;
	char **v = NULL;
	DIR *d;
	int cap = 0;

	*paths = NULL;
	*n = 0;
	if ((d = opendir(dir)) == NULL)
		return p2o_fail(e, P2O_EXIT_CONFIG, "--config-dir '%s': %s", dir,
		    strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (!yaml_name(de->d_name))
			continue;
		sbuf_reset(&p);
		sbuf_addf(&p, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] ==
		    '/' ? "" : "/", de->d_name);
		/* a link to a file is a file (a mounted ConfigMap's are) */
		if (stat(p.buf, &st) == -1 || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap)
			v = xrealloc(v, (size_t)(cap = cap ? cap * 2 : 8) *
			    sizeof(*v));
		v[(*n)++] = xstrdup(p.buf);
	}
	closedir(d);
	sbuf_release(&p);
	if (*n == 0) {
		free(v);
		return p2o_fail(e, P2O_EXIT_CONFIG, "--config-dir '%s' holds no "
		    "configuration file (*.yaml)", dir);
	}
	qsort(v, (size_t)*n, sizeof(*v), by_name);
	*paths = v;
	return 0;
}

void
config_paths_free(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

const char *
config_source_name(const struct config *cf, char *buf, size_t len)
{
	struct source_ident id;
	char err[128];

	if (cf->source_name != NULL)
		snprintf(buf, len, "%s", cf->source_name);
	else if (source_ident_init(&id, cf, err, sizeof(err)) == 0) {
		snprintf(buf, len, "%s", id.doc_id);
		source_ident_release(&id);
	} else
		snprintf(buf, len, "?");
	return buf;
}

static const char *
base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* the target a configuration writes to, as far as the file says */
static void
target_of(const struct config *cf, char *buf, size_t len)
{
	if (cf->target_url != NULL)
		snprintf(buf, len, "%s%s%s", cf->target_url,
		    cf->target_state_dir ? " " : "", cf->target_state_dir ?
		    cf->target_state_dir : "");
	else
		snprintf(buf, len, "$%s", cf->target_url_env ?
		    cf->target_url_env : "?");
}

/* the index a section writes, as written (a template by its glob) */
static const char *
index_of(const struct sync_section *s)
{
	return s->index_templated ? s->index_glob : s->index;
}

/* a section of a writing index i, the first without an id, or NULL */
static const struct sync_section *
undeclared(const struct config *cf, const char *index)
{
	int i;

	for (i = 0; i < cf->nsyncs; i++)
		if (strcmp(index_of(&cf->syncs[i]), index) == 0 &&
		    cf->syncs[i].id == NULL)
			return &cf->syncs[i];
	return NULL;
}

static const struct sync_section *
writes(const struct config *cf, const char *index)
{
	int i;

	for (i = 0; i < cf->nsyncs; i++)
		if (strcmp(index_of(&cf->syncs[i]), index) == 0)
			return &cf->syncs[i];
	return NULL;
}

/* two files' rules: how many are broken, each a line of why */
static int
pair(const struct config *a, const struct config *b, struct sbuf *why)
{
	const struct sync_section *sa, *sb, *u;
	struct source_ident ia, ib;
	char na[CONFIG_NAME_MAX], nb[CONFIG_NAME_MAX], what[512];
	char ta[600], tb[600], err[128];
	const char *fa = base(a->path), *fb = base(b->path);
	int i, broken = 0, have;

	config_source_name(a, na, sizeof(na));
	config_source_name(b, nb, sizeof(nb));
	if (strcmp(na, nb) == 0) {
		sbuf_addf(why, "%s, %s: two sources named '%s' (source.name, or "
		    "else the stream's identity): each needs a name of its "
		    "own\n", fa, fb, na);
		broken++;
	}
	if (a->source == b->source && a->source != NULL &&
	    a->source->clash != NULL && a->source->clash(a, b, what,
	    sizeof(what))) {
		sbuf_addf(why, "%s, %s: both would take %s: one stream each\n",
		    fa, fb, what);
		broken++;
	}
	have = source_ident_init(&ia, a, err, sizeof(err)) == 0;
	if (have && source_ident_init(&ib, b, err, sizeof(err)) == 0) {
		target_of(a, ta, sizeof(ta));
		target_of(b, tb, sizeof(tb));
		if (strcmp(ia.doc_id, ib.doc_id) == 0 && strcmp(ta, tb) == 0) {
			sbuf_addf(why, "%s, %s: both would keep their checkpoint "
			    "in '%s' on target %s: give one another "
			    "source.%s\n", fa, fb, ia.doc_id, ta,
			    a->source->own_keys[0]);
			broken++;
		}
		source_ident_release(&ib);
	}
	if (have)
		source_ident_release(&ia);
	for (i = 0; i < a->nsyncs; i++) {
		sa = &a->syncs[i];
		/* each index once: at the first section writing it */
		if (writes(a, index_of(sa)) != sa ||
		    (sb = writes(b, index_of(sa))) == NULL)
			continue;
		if ((u = undeclared(a, index_of(sa))) == NULL &&
		    undeclared(b, index_of(sa)) == NULL)
			continue;
		if (u == NULL) {
			u = undeclared(b, index_of(sa));
			sbuf_addf(why, "%s:%d, %s:%d: two sources write index "
			    "'%s' and sync.%s of %s declares no id (sync.%s.id): "
			    "documents of one would overwrite the other's\n",
			    fa, sa->line, fb, sb->line, index_of(sa), u->name,
			    fb, u->name);
		} else
			sbuf_addf(why, "%s:%d, %s:%d: two sources write index "
			    "'%s' and sync.%s of %s declares no id (sync.%s.id): "
			    "documents of one would overwrite the other's\n",
			    fa, sa->line, fb, sb->line, index_of(sa), u->name,
			    fa, u->name);
		broken++;
	}
	return broken;
}

int
config_set_check(const struct config *cf, int n, struct sbuf *why)
{
	const char *first_m = NULL, *first_a = NULL;
	int i, j, broken = 0;

	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++)
			broken += pair(&cf[i], &cf[j], why);
		/* one process, one listener of each */
		if (cf[i].metrics_bind != NULL) {
			if (first_m != NULL) {
				sbuf_addf(why, "%s, %s: metrics.bind is set in "
				    "both: one process serves one /metrics; keep "
				    "it in one file\n", first_m,
				    base(cf[i].path));
				broken++;
			} else
				first_m = base(cf[i].path);
		}
		if (cf[i].api_bind != NULL) {
			if (first_a != NULL) {
				sbuf_addf(why, "%s, %s: api.bind is set in both: "
				    "one process serves one /synced (it takes "
				    "?source=NAME); keep it in one file\n",
				    first_a, base(cf[i].path));
				broken++;
			} else
				first_a = base(cf[i].path);
		}
		if (i > 0 && strcmp(cf[i].log_format, cf[0].log_format) != 0) {
			sbuf_addf(why, "%s, %s: log.format is '%s' in one and "
			    "'%s' in the other: one process writes one log\n",
			    base(cf[0].path), base(cf[i].path),
			    cf[0].log_format, cf[i].log_format);
			broken++;
		}
	}
	return broken;
}

int
config_set_load(const char *dir, unsigned secrets, struct config_set *set,
    struct sbuf *why, struct p2o_err *e)
{
	struct p2o_err fe;
	int i, bad = 0, broken;

	memset(set, 0, sizeof(*set));
	if (config_dir_files(dir, &set->paths, &set->n, e) == -1)
		return -1;
	set->cf = xcalloc((size_t)set->n, sizeof(*set->cf));
	set->names = xcalloc((size_t)set->n, sizeof(*set->names));
	for (i = 0; i < set->n; i++) {
		p2o_err_clear(&fe);
		if (config_load_with(set->paths[i], secrets, &set->cf[i],
		    &fe) == -1) {
			sbuf_addf(why, "%s\n", fe.msg);
			bad++;
			continue;
		}
		config_source_name(&set->cf[i], set->names[i],
		    sizeof(set->names[i]));
	}
	if (bad > 0)
		return p2o_fail(e, P2O_EXIT_CONFIG, "--config-dir '%s': %d of %d "
		    "file%s invalid", dir, bad, set->n, set->n == 1 ? " is" :
		    "s are");
	if ((broken = config_set_check(set->cf, set->n, why)) > 0)
		return p2o_fail(e, P2O_EXIT_CONFIG, "--config-dir '%s': its %d "
		    "files break %d rule%s of a set", dir, set->n, broken,
		    broken == 1 ? "" : "s");
	return 0;
}

void
config_set_release(struct config_set *set)
{
	int i;

	for (i = 0; set->cf != NULL && i < set->n; i++)
		if (set->cf[i].path != NULL)
			config_release(&set->cf[i]);
	free(set->cf);
	free(set->names);
	config_paths_free(set->paths, set->n);
	memset(set, 0, sizeof(*set));
}

int
config_set_find(const struct config_set *set, const char *name)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->names[i], name) == 0)
			return i;
	return -1;
}

void
config_set_names(const struct config_set *set, struct sbuf *b)
{
	int i;

	for (i = 0; i < set->n; i++)
		sbuf_addf(b, "%s%s", i ? ", " : "", set->names[i]);
}
