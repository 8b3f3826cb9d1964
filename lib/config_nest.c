/*
 * config_nest.c - a section's embedded collections: the keys of
 * sync.<name>.children and sync.<name>.aggregates, and every rule about
 * them the configuration alone can check - what a child needs, what
 * contradicts what, and which names the parent's documents would then
 * hold twice. A child table's schema is settled with the section's
 * (config_nest_resolve, once the source kind is known). Never logs: what
 * can only be seen against the source's catalogue is the source
 * programs' to warn about.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_sections.h"
#include "source.h"
#include "nest.h"
#include "sbuf.h"
#include "where.h"

#define SYN(f)	offsetof(struct sync_section, f)
#define CH(f)	offsetof(struct sync_child, f)
#define AG(f)	offsetof(struct sync_aggregate, f)
#define PAIR(f)	offsetof(struct sync_pair, f)

static const char *const ops[] = { "count", NULL };

static const struct cs_node column = { NULL, CS_STR };
static const struct cs_node new_name = { NULL, CS_STR, PAIR(value) };

/* declared ahead: a child's own children key names it, to be refused */
static const struct cs_node child;

static const struct cs_node child_keys[] = {
	{ "table", CS_STR, CH(rel), .required = 1,
	    .check = config_check_table },
	{ "field", CS_STR, CH(field), .required = 1 },
	{ "foreign_key", CS_STR, CH(foreign_key), .required = 1 },
	{ "through", CS_STR, CH(through), .check = config_check_table },
	{ "through_key", CS_STR, CH(through_key) },
	{ "max_rows", CS_INT, CH(max_rows), .min = 1, .max = 1000000 },
	{ "columns", CS_LIST, CH(columns), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = CH(ncolumns),
	    .distinct = 1 },
	{ "exclude_columns", CS_LIST, CH(exclude_columns), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = CH(nexclude_columns),
	    .distinct = 1 },
	{ "fields", CS_MAP, CH(fields), .elem = &new_name,
	    .elem_size = sizeof(struct sync_pair), .count_off = CH(nfields),
	    .name_off = PAIR(name), .has_line = 1, .line_off = PAIR(line),
	    .expect = "must be a mapping of columns to field names" },
	{ "single", CS_BOOL, CH(single), .def = "false" },
	{ "flatten", CS_BOOL, CH(flatten), .def = "false" },
	{ "children", CS_LIST, CH(nested), .elem = &child,
	    .elem_size = sizeof(struct sync_child), .count_off = CH(nnested) },
	{ NULL }
};

static const struct cs_node child = {
	NULL, CS_STRUCT, .keys = child_keys
};

static const struct cs_node aggregate_keys[] = {
	{ "field", CS_STR, AG(field), .required = 1 },
	{ "table", CS_STR, AG(rel), .required = 1,
	    .check = config_check_table },
	{ "foreign_key", CS_STR, AG(foreign_key), .required = 1 },
	{ "op", CS_ENUM, AG(op), .required = 1, .choices = ops },
	{ "where", CS_STR, AG(where), .check = where_check },
	{ NULL }
};

const struct cs_node config_nest_child = {
	NULL, CS_STRUCT, .keys = child_keys
};

const struct cs_node config_nest_aggregate = {
	NULL, CS_STRUCT, .keys = aggregate_keys
};

/* calls fn for every member the section's collections add to its
 * documents; stops at the first nonzero return and returns it */
static int
each_member(const struct sync_section *s,
    int (*fn)(void *, const char *, int line), void *arg)
{
	const struct sync_more *m = sync_more(s);
	const struct sync_child *c;
	struct sbuf b = SBUF_INIT;
	int i, k, rc = 0;

	for (i = 0; i < m->nchildren && rc == 0; i++) {
		c = &m->children[i];
		if (c->flatten) {
			for (k = 0; k < c->ncolumns && rc == 0; k++)
				rc = fn(arg, nest_name(c, c->columns[k]),
				    c->line);
			continue;
		}
		rc = fn(arg, c->field, c->line);
		if (rc == 0 && c->max_rows > 0) {
			sbuf_reset(&b);
			sbuf_addf(&b, "%s_truncated", c->field);
			rc = fn(arg, b.buf, c->line);
			sbuf_reset(&b);
			sbuf_addf(&b, "%s_total", c->field);
			if (rc == 0)
				rc = fn(arg, b.buf, c->line);
		}
	}
	for (i = 0; i < m->naggregates && rc == 0; i++)
		rc = fn(arg, m->aggregates[i].field, m->aggregates[i].line);
	sbuf_release(&b);
	return rc;
}

static int
is_name(void *arg, const char *name, int line)
{
	return strcmp(arg, name) == 0;
}

int
config_nest_member(const struct sync_section *s, const char *name)
{
	return each_member(s, is_name, (void *)name);
}

struct clash {
	struct cs_walk *w;
	const struct sync_section *s;
	const char *path;
	struct sbuf seen;	/* the members so far, NUL-separated */
};

/* a member name some other key of the section already gives the
 * documents: what that key is, or NULL */
static const char *
owner(const struct sync_section *s, const char *name)
{
	const struct sync_more *m = sync_more(s);
	int i;

	for (i = 0; i < m->nconstants; i++)
		if (strcmp(m->constants[i].name, name) == 0)
			return "a constant";
	for (i = 0; i < m->nfields; i++)
		if (strcmp(m->fields[i].value, name) == 0)
			return "a rename (fields)";
	/* a column kept under its own name: known only when listed */
	if (m->columns != NULL &&
	    config_list_has(m->columns, m->ncolumns, name)) {
		for (i = 0; i < m->nfields; i++)
			if (strcmp(m->fields[i].name, name) == 0)
				return NULL;
		return "a column the documents keep";
	}
	if (s->has_join && strcmp(m->join.field, name) == 0)
		return "the join field";
	return NULL;
}

static int
check_member(void *arg, const char *name, int line)
{
	struct clash *c = arg;
	const char *what, *p;
	size_t off;

	if ((what = owner(c->s, name)) != NULL)
		return cs_err(c->w, line, "'%s' puts '%s' on the documents, "
		    "which is the name of %s", c->path, name, what);
	for (off = 0; off < c->seen.len; off += strlen(p) + 1) {
		p = c->seen.buf + off;
		if (strcmp(p, name) == 0)
			return cs_err(c->w, line, "'%s' puts '%s' on the "
			    "documents twice (two children or aggregates "
			    "name it)", c->path, name);
	}
	sbuf_add(&c->seen, name, strlen(name) + 1);
	return 0;
}

static int
finish_child(struct cs_walk *w, const char *path, struct sync_child *c,
    int i)
{
	int l = c->line, k;

	if (c->nnested > 0)
		return cs_err(w, cs_line(w, "%s.children[%d].children", path,
		    i), "'%s.children[%d].children': nested children stay "
		    "one level deep; shape anything deeper in the database",
		    path, i);
	if ((c->through == NULL) != (c->through_key == NULL))
		return cs_err(w, l, "'%s.children[%d]': 'through' and "
		    "'through_key' go together (the junction table and its "
		    "column naming the child's key)", path, i);
	if (c->columns && c->exclude_columns)
		return cs_err(w, l, "'%s.children[%d]': 'columns' cannot be "
		    "combined with 'exclude_columns'", path, i);
	if (c->flatten && !c->single)
		return cs_err(w, l, "'%s.children[%d].flatten' needs 'single': "
		    "only one row's columns can be lifted onto the parent",
		    path, i);
	if (c->flatten && c->columns == NULL)
		return cs_err(w, l, "'%s.children[%d].flatten' needs "
		    "'columns': the names it lifts onto the parent must be "
		    "known here, to be checked against the parent's", path,
		    i);
	if (c->single && c->max_rows > 0)
		return cs_err(w, l, "'%s.children[%d]': 'single' cannot be "
		    "combined with 'max_rows'", path, i);
	if (c->single && c->through != NULL)
		return cs_err(w, l, "'%s.children[%d].single' needs a child "
		    "key naming the parent: through a junction a child has "
		    "many parents", path, i);
	for (k = 0; k < c->nfields; k++) {
		if (c->columns && !config_list_has(c->columns, c->ncolumns,
		    c->fields[k].name))
			return cs_err(w, c->fields[k].line, "'%s.children[%d]."
			    "fields.%s': column '%s' is not in the embedded "
			    "rows (columns drops it)", path, i,
			    c->fields[k].name, c->fields[k].name);
		if (config_list_has(c->exclude_columns, c->nexclude_columns,
		    c->fields[k].name))
			return cs_err(w, c->fields[k].line, "'%s.children[%d]."
			    "fields.%s': column '%s' is not in the embedded "
			    "rows (exclude_columns drops it)", path, i,
			    c->fields[k].name, c->fields[k].name);
	}
	return 0;
}

int
config_nest_finish(struct cs_walk *w, struct sync_section *s,
    const char *path)
{
	struct sync_more *m = s->more;
	struct clash cl = { w, s, path, SBUF_INIT };
	int i, l, rc;

	if (m->nchildren == 0 && m->naggregates == 0)
		return 0;
	l = m->nchildren ? m->children[0].line : m->aggregates[0].line;
	if (s->append_only)
		return cs_err(w, l, "'%s': an append_only section cannot "
		    "embed children or aggregates: its documents have no key "
		    "a child could name", path);
	if (s->has_fan_out)
		return cs_err(w, l, "'%s': a fan_out section cannot embed "
		    "children or aggregates: one row is many documents, and "
		    "a child change would have to rewrite each", path);
	for (i = 0; i < m->nchildren; i++)
		if (finish_child(w, path, &m->children[i], i) == -1)
			return -1;
	for (i = 0; i < m->naggregates; i++) {
		struct sync_aggregate *a = &m->aggregates[i];
		char why[256];

		if (a->where && (a->where_expr = where_parse(a->where, why,
		    sizeof(why))) == NULL)
			return cs_err(w, a->line, "'%s.aggregates[%d].where' "
			    "%s", path, i, why);
	}
	rc = each_member(s, check_member, &cl);
	sbuf_release(&cl.seen);
	return rc ? -1 : 0;
}

/* "schema.table" from what was written, the schema defaulted */
static int
resolve(struct cs_walk *w, const struct config *cfg, int line,
    const char *path, char **rel, char **schema, char **table)
{
	const char *dot = strchr(*rel, '.');

	if (dot != NULL) {
		*schema = xstrndup(*rel, (size_t)(dot - *rel));
		*table = xstrdup(dot + 1);
	} else {
		if (cfg->source->default_schema == NULL)
			return cs_err(w, line, "'%s' must be '%s.table' for a "
			    "%s source", path, cfg->source->schema_word,
			    cfg->source->noun);
		*schema = xstrdup(cfg->source->default_schema);
		*table = xstrdup(*rel);
	}
	free(*rel);
	*rel = xmalloc(strlen(*schema) + strlen(*table) + 2);
	sprintf(*rel, "%s.%s", *schema, *table);
	return 0;
}

int
config_nest_resolve(struct cs_walk *w, const struct config *cfg,
    struct sync_section *s, const char *path)
{
	struct sync_more *m = s->more;
	struct sbuf p = SBUF_INIT;
	int i, rc = 0;

	/* no collections without a more */
	if (m == NULL)
		return 0;
	for (i = 0; i < m->nchildren && rc == 0; i++) {
		struct sync_child *c = &m->children[i];

		sbuf_reset(&p);
		sbuf_addf(&p, "%s.children[%d].table", path, i);
		rc = resolve(w, cfg, c->line, p.buf, &c->rel, &c->schema,
		    &c->table);
		if (rc == 0 && strcmp(c->rel, s->rel) == 0)
			rc = cs_err(w, c->line, "'%s' is the section's own "
			    "table: a table cannot be its own child", p.buf);
		if (rc == 0 && c->through) {
			sbuf_reset(&p);
			sbuf_addf(&p, "%s.children[%d].through", path, i);
			c->through_rel = xstrdup(c->through);
			rc = resolve(w, cfg, c->line, p.buf, &c->through_rel,
			    &c->through_schema, &c->through_table);
		}
	}
	for (i = 0; i < m->naggregates && rc == 0; i++) {
		struct sync_aggregate *a = &m->aggregates[i];

		sbuf_reset(&p);
		sbuf_addf(&p, "%s.aggregates[%d].table", path, i);
		rc = resolve(w, cfg, a->line, p.buf, &a->rel, &a->schema,
		    &a->table);
	}
	sbuf_release(&p);
	return rc;
}

void
config_nest_release(struct sync_section *s)
{
	struct sync_more *m = s->more;
	int i;

	for (i = 0; i < m->nchildren; i++) {
		struct sync_child *c = &m->children[i];

		free(c->schema);
		free(c->table);
		free(c->through_schema);
		free(c->through_table);
		free(c->through_rel);
		c->schema = c->table = NULL;
		c->through_schema = c->through_table = c->through_rel = NULL;
	}
	for (i = 0; i < m->naggregates; i++) {
		struct sync_aggregate *a = &m->aggregates[i];

		free(a->schema);
		free(a->table);
		where_free(a->where_expr);
		a->schema = a->table = NULL;
		a->where_expr = NULL;
	}
}

/* the tables a collection reads that no section syncs, each once */
int
config_nest_tables(const struct config *cfg, const char ***rels)
{
	const struct sync_more *x;
	const char *r;
	int i, k, j, m, n = 0;

	*rels = NULL;
	for (i = 0; i < cfg->nsyncs; i++) {
		x = sync_more(&cfg->syncs[i]);
		*rels = xrealloc(*rels, (size_t)(n + 2 * x->nchildren +
		    x->naggregates + 1) * sizeof(char *));
		for (k = 0; k < 2 * x->nchildren + x->naggregates; k++) {
			r = k < 2 * x->nchildren ? (k % 2 ?
			    x->children[k / 2].through_rel :
			    x->children[k / 2].rel) :
			    x->aggregates[k - 2 * x->nchildren].rel;
			if (r == NULL || config_find_rel(cfg, r) != NULL)
				continue;
			for (j = 0, m = 0; j < n && !m; j++)
				m = strcmp((*rels)[j], r) == 0;
			if (!m)
				(*rels)[n++] = r;
		}
	}
	return n;
}
