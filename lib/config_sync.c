/*
 * config_sync.c - one sync section: the table a section follows and what
 * its documents hold. Owns the section's keys, the form of a table, a
 * template, a transform and a filter, and the rules inside one section
 * (which keys contradict, what a rename may collide with). Rules between
 * sections, and those that depend on the kind of source, are
 * lib/config.c's; what an index name may hold and what the mapping file
 * must say are the target's, asked by config_target.c. Reads the
 * section's mapping file; never logs.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_sections.h"
#include "jscan.h"
#include "sbuf.h"
#include "where.h"

#define SYN(f)	offsetof(struct sync_section, f)
#define XF(f)	offsetof(struct sync_transform, f)
#define PAIR(f)	offsetof(struct sync_pair, f)
#define FAN(f)	(SYN(fan_out) + offsetof(struct sync_fan_out, f))
#define JOIN(f)	(SYN(join) + offsetof(struct sync_join, f))

/* a mapping file larger than this is not a mapping */
#define MAPPING_MAX	(16 * 1024 * 1024)
#define DEFAULT_REDACT	"[redacted]"

int
config_check_table(const char *s, char *why, size_t len)
{
	const char *dot = strchr(s, '.');

	if (s[strcspn(s, " \t\r\n\"`")] != '\0' || dot == s ||
	    (dot && (dot[1] == '\0' || strchr(dot + 1, '.')))) {
		snprintf(why, len, "must be 'schema.table' or 'table'");
		return -1;
	}
	return 0;
}

/*
 * An index name, or a template of one, as far as any target goes: the
 * template parses, and it has literal text, since a truncate clears what
 * the template's glob claims and a bare "{tenant}" would claim every index
 * of the cluster. What a name may hold is the target's (config_target.c,
 * once the target is known); a rendered name is checked again per row.
 */
static int
check_index(const char *s, char *why, size_t len)
{
	struct tmpl t;
	char sub[256];
	int rc = 0;

	if (tmpl_parse(s, &t, sub, sizeof(sub)) == -1) {
		snprintf(why, len, "%s", sub);
		return -1;
	}
	if (t.ncolumns > 0 && t.nliteral == 0) {
		snprintf(why, len, "must hold literal text besides its "
		    "placeholders: a truncate clears every index the template "
		    "can render");
		rc = -1;
	}
	tmpl_release(&t);
	return rc;
}

/* an id template: at least one placeholder, or every row is one
 * document */
static int
check_id(const char *s, char *why, size_t len)
{
	struct tmpl t;

	if (tmpl_parse(s, &t, why, len) == -1)
		return -1;
	if (t.ncolumns == 0) {
		snprintf(why, len, "must name at least one column as "
		    "{column}: without one every row is the same document");
		tmpl_release(&t);
		return -1;
	}
	tmpl_release(&t);
	return 0;
}

static int
check_split(const char *s, char *why, size_t len)
{
	if (strlen(s) != 1) {
		snprintf(why, len, "must be exactly one character, the "
		    "separator");
		return -1;
	}
	return 0;
}

/* a date pattern: the tokens YYYY MM DD hh mm ss, each at most once,
 * YYYY MM DD all present; any other byte (not a letter) must match
 * itself */
int
config_check_date_pattern(const char *s, char *why, size_t len)
{
	static const char *const tok[] = { "YYYY", "MM", "DD", "hh", "mm",
	    "ss" };
	int seen[6] = { 0 }, i;
	const char *p = s;

	while (*p) {
		for (i = 0; i < 6; i++)
			if (strncmp(p, tok[i], strlen(tok[i])) == 0)
				break;
		if (i < 6) {
			if (seen[i]++) {
				snprintf(why, len, "names %s twice", tok[i]);
				return -1;
			}
			p += strlen(tok[i]);
			continue;
		}
		if (isalpha((unsigned char)*p)) {
			snprintf(why, len, "must be made of YYYY, MM, DD, hh, "
			    "mm, ss and separators (found '%c')", *p);
			return -1;
		}
		p++;
	}
	if (!seen[0] || !seen[1] || !seen[2]) {
		snprintf(why, len, "must hold YYYY, MM and DD");
		return -1;
	}
	if ((seen[5] && !seen[4]) || (seen[4] && !seen[3])) {
		snprintf(why, len, "must not hold mm without hh or ss "
		    "without mm");
		return -1;
	}
	return 0;
}

static int
check_date(const char *s, char *why, size_t len)
{
	return config_check_date_pattern(s, why, len);
}

static int
no_param(const char *s, char *why, size_t len)
{
	snprintf(why, len, "takes no parameter: write the operation alone, "
	    "as 'column: op'");
	return -1;
}

static const char *const xf_names[] = {
	"hash", "redact", "json", "split", "number", "date", NULL
};

static const struct cs_node column = { NULL, CS_STR };

static const struct cs_node transform_long_keys[] = {
	{ "redact", CS_STR, XF(redact) },
	{ "split", CS_STR, XF(split), .check = check_split },
	{ "date", CS_STR, XF(date), .check = check_date },
	{ "hash", CS_STR, XF(hash), .check = no_param },
	{ "json", CS_STR, XF(json), .check = no_param },
	{ "number", CS_STR, XF(number), .check = no_param },
	{ NULL }
};

static const struct cs_node transform_long = {
	NULL, CS_STRUCT, .keys = transform_long_keys
};

static const struct cs_node transform = {
	NULL, CS_ENUM, XF(op), .choices = xf_names, .alt = &transform_long,
	.expect = "must be one of hash, redact, json, split, number, date, "
	    "or a mapping of one of them to its parameter"
};

static const struct cs_node pair_value = { NULL, CS_STR, PAIR(value) };

static const struct cs_node fan_out_keys[] = {
	{ "column", CS_STR, FAN(column), .required = 1 },
	{ "id", CS_STR, FAN(id), .required = 1, .check = check_id },
	{ "element", CS_STR, FAN(element) },
	{ NULL }
};

static const struct cs_node join_keys[] = {
	{ "field", CS_STR, JOIN(field), .required = 1 },
	{ "name", CS_STR, JOIN(name), .required = 1 },
	{ "parent", CS_STR, JOIN(parent) },
	{ "column", CS_STR, JOIN(column) },
	{ NULL }
};

static const struct cs_node section_keys[] = {
	/* table lands in rel as written; finish_section() splits it */
	{ "table", CS_STR, SYN(rel), .required = 1, .check = config_check_table },
	{ "index", CS_STR, SYN(index), .check = check_index },
	{ "columns", CS_LIST, SYN(columns), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = SYN(ncolumns),
	    .distinct = 1 },
	{ "exclude_columns", CS_LIST, SYN(exclude_columns), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = SYN(nexclude_columns),
	    .distinct = 1 },
	{ "id", CS_STR, SYN(id), .check = check_id },
	{ "primary_key", CS_LIST, SYN(primary_key), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = SYN(nprimary_key),
	    .distinct = 1 },
	{ "append_only", CS_BOOL, SYN(append_only), .def = "false" },
	{ "routing", CS_STR, SYN(routing) },
	{ "pipeline", CS_STR, SYN(pipeline) },
	{ "transform", CS_MAP, SYN(transforms), .elem = &transform,
	    .elem_size = sizeof(struct sync_transform),
	    .count_off = SYN(ntransforms), .name_off = XF(name),
	    .has_line = 1, .line_off = XF(line),
	    .expect = "must be a mapping of columns to operations" },
	{ "fields", CS_MAP, SYN(fields), .elem = &pair_value,
	    .elem_size = sizeof(struct sync_pair), .count_off = SYN(nfields),
	    .name_off = PAIR(name), .has_line = 1, .line_off = PAIR(line),
	    .expect = "must be a mapping of columns to field names" },
	{ "constants", CS_MAP, SYN(constants), .elem = &pair_value,
	    .elem_size = sizeof(struct sync_pair),
	    .count_off = SYN(nconstants), .name_off = PAIR(name),
	    .has_line = 1, .line_off = PAIR(line),
	    .expect = "must be a mapping of field names to values" },
	{ "where", CS_STR, SYN(where), .check = where_check },
	{ "mapping_file", CS_STR, SYN(mapping_file) },
	{ "fan_out", CS_STRUCT, .keys = fan_out_keys },
	{ "join", CS_STRUCT, .keys = join_keys },
	{ "children", CS_LIST, SYN(children), .elem = &config_nest_child,
	    .elem_size = sizeof(struct sync_child),
	    .count_off = SYN(nchildren), .has_line = 1,
	    .line_off = offsetof(struct sync_child, line) },
	{ "aggregates", CS_LIST, SYN(aggregates),
	    .elem = &config_nest_aggregate,
	    .elem_size = sizeof(struct sync_aggregate),
	    .count_off = SYN(naggregates), .has_line = 1,
	    .line_off = offsetof(struct sync_aggregate, line) },
	{ NULL }
};

/* "'path.a' cannot be combined with 'path.b'", at the later of the two */
static int
contradicts(struct cs_walk *w, const char *path, const char *a,
    const char *b)
{
	int la = cs_line(w, "%s.%s", path, a), lb = cs_line(w, "%s.%s", path,
	    b);

	if (!la || !lb)
		return 0;
	return cs_err(w, la > lb ? la : lb, "'%s.%s' cannot be combined with "
	    "'%s.%s'", path, la > lb ? a : b, path, la > lb ? b : a);
}

int
config_list_has(char *const *list, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

int
config_projects(char *const *columns, int ncolumns, char *const *exclude,
    int nexclude, const char *col)
{
	if (columns != NULL)
		return config_list_has(columns, ncolumns, col);
	return !config_list_has(exclude, nexclude, col);
}

/* is column c in the documents at all (the projection keeps it)? */
static int
projected(const struct sync_section *s, const char *c)
{
	return config_projects(s->columns, s->ncolumns, s->exclude_columns,
	    s->nexclude_columns, c);
}

static const struct sync_pair *
find_pair(const struct sync_pair *p, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0)
			return &p[i];
	return NULL;
}

/* the name column c has in the documents */
static const char *
target_name(const struct sync_section *s, const char *c)
{
	const struct sync_pair *f = find_pair(s->fields, s->nfields, c);

	return f ? f->value : c;
}

static int
finish_transforms(struct cs_walk *w, struct sync_section *s,
    const char *path)
{
	struct sync_transform *t;
	int i, k, n;

	for (i = 0; i < s->ntransforms; i++) {
		t = &s->transforms[i];
		if (t->op != NULL) {
			for (k = 0; xf_names[k]; k++)
				if (strcmp(t->op, xf_names[k]) == 0)
					t->kind = (enum xf_op)(k + 1);
		} else {
			n = 0;
			if (t->redact)
				n++, t->kind = XF_REDACT, t->param = t->redact;
			if (t->split)
				n++, t->kind = XF_SPLIT, t->param = t->split;
			if (t->date)
				n++, t->kind = XF_DATE, t->param = t->date;
			if (n != 1)
				return cs_err(w, t->line, "'%s.transform.%s' "
				    "must name exactly one operation%s", path,
				    t->name, n > 1 ? ", not several (no "
				    "chaining)" : "");
		}
		if (!projected(s, t->name))
			return cs_err(w, t->line, "'%s.transform.%s': column "
			    "'%s' is not in the documents (columns or "
			    "exclude_columns drops it)", path, t->name,
			    t->name);
		if (s->has_fan_out && strcmp(t->name, s->fan_out.column) == 0)
			return cs_err(w, t->line, "'%s.transform.%s': column "
			    "'%s' is the fan_out column, which fan_out reads "
			    "raw and no document carries", path, t->name,
			    t->name);
		if (t->kind == XF_REDACT && t->param == NULL)
			t->param = DEFAULT_REDACT;
	}
	return 0;
}

/* renames: the last step, so every other key speaks of source names */
static int
finish_fields(struct cs_walk *w, struct sync_section *s, const char *path)
{
	const struct sync_pair *f, *g;
	int i, j;

	for (i = 0; i < s->nfields; i++) {
		f = &s->fields[i];
		if (!projected(s, f->name))
			return cs_err(w, f->line, "'%s.fields.%s': column '%s' "
			    "is not in the documents (columns or "
			    "exclude_columns drops it)", path, f->name,
			    f->name);
		if (s->has_fan_out && strcmp(f->name, s->fan_out.column) == 0)
			return cs_err(w, f->line, "'%s.fields.%s': column '%s' "
			    "is the fan_out column, which no document "
			    "carries", path, f->name, f->name);
		for (j = 0; j < i; j++) {
			g = &s->fields[j];
			if (strcmp(f->value, g->value) == 0)
				return cs_err(w, f->line, "'%s.fields.%s' "
				    "renames '%s' onto '%s', which "
				    "'%s.fields.%s' already renames '%s' onto",
				    path, f->name, f->name, f->value, path,
				    g->name, g->name);
		}
		/* onto a column that stays under its own name */
		if (s->columns != NULL && config_list_has(s->columns, s->ncolumns,
		    f->value) && find_pair(s->fields, s->nfields,
		    f->value) == NULL)
			return cs_err(w, f->line, "'%s.fields.%s' renames '%s' "
			    "onto '%s', a column the documents keep", path,
			    f->name, f->name, f->value);
	}
	return 0;
}

/* the names a document carries besides its columns */
static int
finish_constants(struct cs_walk *w, struct sync_section *s,
    const char *path)
{
	const struct sync_pair *c;
	struct tmpl t;
	char why[256];
	int i, k;

	for (i = 0; i < s->nconstants; i++) {
		c = &s->constants[i];
		if (tmpl_parse(c->value, &t, why, sizeof(why)) == -1)
			return cs_err(w, c->line, "'%s.constants.%s' %s", path,
			    c->name, why);
		for (k = 0; k < t.nparts; k++)
			if (t.parts[k].column &&
			    strcmp(t.parts[k].text, "schema") != 0 &&
			    strcmp(t.parts[k].text, "table") != 0) {
				cs_err(w, c->line, "'%s.constants.%s' names "
				    "'{%s}': a constant takes only {schema} "
				    "and {table}", path, c->name,
				    t.parts[k].text);
				tmpl_release(&t);
				return -1;
			}
		tmpl_release(&t);
		if (s->columns != NULL && config_list_has(s->columns, s->ncolumns,
		    c->name) && strcmp(target_name(s, c->name), c->name) == 0)
			return cs_err(w, c->line, "'%s.constants.%s' has the "
			    "name of column '%s', which the documents keep",
			    path, c->name, c->name);
		for (k = 0; k < s->nfields; k++)
			if (strcmp(s->fields[k].value, c->name) == 0)
				return cs_err(w, c->line, "'%s.constants.%s' "
				    "has the name 'fields' renames '%s' onto",
				    path, c->name, s->fields[k].name);
		if (s->has_join && strcmp(c->name, s->join.field) == 0)
			return cs_err(w, c->line, "'%s.constants.%s' has the "
			    "name of the join field", path, c->name);
		if (s->has_fan_out && strcmp(c->name, s->fan_out.element ?
		    s->fan_out.element : s->fan_out.column) == 0)
			return cs_err(w, c->line, "'%s.constants.%s' has the "
			    "name a fan_out element is put under", path,
			    c->name);
	}
	return 0;
}

/* the directory of the configuration file, with its '/', or "" */
static char *
config_dir(const char *cfgpath)
{
	const char *slash = strrchr(cfgpath, '/');

	return slash ? xstrndup(cfgpath, (size_t)(slash - cfgpath) + 1) :
	    xstrdup("");
}

static int
read_file(const char *path, struct sbuf *out, char *why, size_t len)
{
	FILE *fp;
	char buf[8192];
	size_t n;

	if ((fp = fopen(path, "r")) == NULL) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) {
		sbuf_add(out, buf, n);
		if (out->len > MAPPING_MAX) {
			snprintf(why, len, "is larger than %d bytes",
			    MAPPING_MAX);
			fclose(fp);
			return -1;
		}
	}
	if (ferror(fp)) {
		snprintf(why, len, "%s", strerror(errno));
		fclose(fp);
		return -1;
	}
	fclose(fp);
	return 0;
}

/* the mapping file's JSON object, for the target to make a body of once
 * it is known (config_target.c) */
static int
finish_mapping(struct cs_walk *w, struct sync_section *s, const char *path)
{
	struct sbuf text = SBUF_INIT;
	struct jspan obj;
	char why[256], *dir, *file;
	const char *jwhy;
	size_t off;
	int line = cs_line(w, "%s.mapping_file", path);
	int rc = -1;

	dir = config_dir(cs_name(w));
	file = s->mapping_file[0] == '/' ? xstrdup(s->mapping_file) :
	    xmalloc(strlen(dir) + strlen(s->mapping_file) + 1);
	if (s->mapping_file[0] != '/')
		sprintf(file, "%s%s", dir, s->mapping_file);
	if (read_file(file, &text, why, sizeof(why)) == -1) {
		cs_err(w, line, "'%s.mapping_file' '%s': %s", path, file, why);
		goto out;
	}
	if (jscan_validate(text.buf ? text.buf : "", text.len, &off,
	    &jwhy) == -1) {
		cs_err(w, line, "'%s.mapping_file' '%s' is not JSON: %s at "
		    "byte %zu", path, file, jwhy, off);
		goto out;
	}
	obj.p = text.buf;
	obj.n = text.len;
	while (obj.n && isspace((unsigned char)obj.p[0]))
		obj.p++, obj.n--;
	while (obj.n && isspace((unsigned char)obj.p[obj.n - 1]))
		obj.n--;
	if (jspan_type(obj) != J_OBJECT) {
		cs_err(w, line, "'%s.mapping_file' '%s' must hold a JSON "
		    "object", path, file);
		goto out;
	}
	s->mapping = xstrndup(obj.p, obj.n);
	s->mapping_path = file;
	file = NULL;
	rc = 0;
out:
	free(dir);
	free(file);
	sbuf_release(&text);
	return rc;
}

static int
finish_join(struct cs_walk *w, struct sync_section *s, const char *path)
{
	struct sync_join *j = &s->join;
	int lj = cs_line(w, "%s.join", path);

	if (contradicts(w, path, "join", "fan_out") == -1 ||
	    contradicts(w, path, "join", "routing") == -1)
		return -1;
	if (j->parent != NULL && j->column == NULL)
		return cs_err(w, lj, "'%s.join' names a parent and so needs "
		    "'column', the column holding the parent's key", path);
	if (j->parent == NULL && j->column != NULL)
		return cs_err(w, cs_line(w, "%s.join.column", path), "'%s.join."
		    "column' applies only to a child, which names its "
		    "'parent'", path);
	if (s->index_templated)
		return cs_err(w, lj, "'%s.join' needs one index: the parent "
		    "and its children share it, and '%s.index' is a "
		    "template", path, path);
	return 0;
}

static int
finish_section(struct cs_walk *w, void *base, const char *path, int line)
{
	struct sync_section *s = base;
	char why[256];
	const char *dot;

	if (contradicts(w, path, "columns", "exclude_columns") == -1)
		return -1;
	/* a row filed by its content has no key and no other identity */
	if (s->append_only &&
	    (contradicts(w, path, "append_only", "primary_key") == -1 ||
	    contradicts(w, path, "append_only", "id") == -1 ||
	    contradicts(w, path, "append_only", "fan_out") == -1 ||
	    contradicts(w, path, "append_only", "join") == -1))
		return -1;
	s->has_fan_out = cs_line(w, "%s.fan_out", path) != 0;
	s->has_join = cs_line(w, "%s.join", path) != 0;

	/* schema stays NULL when unqualified: lib/config.c knows the
	 * source kind and so what the default is */
	if ((dot = strchr(s->rel, '.')) != NULL) {
		s->schema = xstrndup(s->rel, (size_t)(dot - s->rel));
		s->table = xstrdup(dot + 1);
	} else
		s->table = xstrdup(s->rel);

	/* the table name, which the target checks as an index name */
	if (s->index == NULL)
		s->index = xstrdup(s->table);
	/* the checks above already passed: these parse */
	if (tmpl_parse(s->index, &s->index_t, why, sizeof(why)) == -1 ||
	    (s->id && tmpl_parse(s->id, &s->id_t, why, sizeof(why)) == -1) ||
	    (s->has_fan_out && tmpl_parse(s->fan_out.id, &s->fan_out.id_t,
	    why, sizeof(why)) == -1))
		return cs_err(w, line, "'%s': %s", path, why);
	s->index_templated = s->index_t.ncolumns > 0;
	if (s->index_templated)
		s->index_glob = tmpl_glob(&s->index_t);
	else {
		/* "{{" in a literal index name is a brace */
		free(s->index);
		s->index = xstrdup(s->index_t.parts[0].text);
	}
	if (s->has_fan_out && s->fan_out.element == NULL)
		s->fan_out.element = xstrdup(s->fan_out.column);
	if (s->has_join && finish_join(w, s, path) == -1)
		return -1;
	if (s->where && (s->where_expr = where_parse(s->where, why,
	    sizeof(why))) == NULL)
		return cs_err(w, cs_line(w, "%s.where", path), "'%s.where' %s",
		    path, why);
	if (finish_transforms(w, s, path) == -1 ||
	    finish_fields(w, s, path) == -1 ||
	    finish_constants(w, s, path) == -1 ||
	    config_nest_finish(w, s, path) == -1)
		return -1;
	if (s->mapping_file && finish_mapping(w, s, path) == -1)
		return -1;
	return 0;
}

static void
release_section(void *base)
{
	struct sync_section *s = base;
	int i;

	config_nest_release(s);
	free(s->schema);
	free(s->table);
	free(s->index_glob);
	free(s->index_body);
	free(s->mapping_path);
	free(s->mapping);
	tmpl_release(&s->id_t);
	tmpl_release(&s->index_t);
	tmpl_release(&s->fan_out.id_t);
	where_free(s->where_expr);
	for (i = 0; i < s->nconstants; i++) {
		free(s->constants[i].json);
		s->constants[i].json = NULL;
	}
	free(s->join.children);
	s->join.children = NULL;
	s->join.nchildren = 0;
	s->schema = s->table = s->index_glob = s->index_body = NULL;
	s->mapping_path = s->mapping = NULL;
	s->where_expr = NULL;
}

const struct cs_node config_sync_section = {
	NULL, CS_STRUCT, .keys = section_keys, .finish = finish_section,
	.release = release_section
};
