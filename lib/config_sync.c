/*
 * config_sync.c - one sync section: the table a section follows and what
 * its documents hold. Owns the section's keys, the form of a table, a
 * template, a transform and a filter, and the rules inside one section
 * (which keys contradict, what a rename may collide with). Rules between
 * sections, and those that depend on the kind of source, are
 * lib/config.c's; what an index name may hold and what the mapping file
 * must say are the target's, asked by config_target.c. Reads the
 * section's mapping file, and a pseudonym's key from the environment for
 * a program that asks for CONFIG_SECRET_TRANSFORM (decoded, the text
 * wiped, never quoted); never logs.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "config_sections.h"
#include "datepat.h"
#include "hex.h"
#include "jscan.h"
#include "sbuf.h"
#include "target.h"
#include "where.h"

#define SYN(f)	offsetof(struct sync_section, f)
#define XF(f)	offsetof(struct sync_transform, f)
#define PAIR(f)	offsetof(struct sync_pair, f)
#define PSEU(f)	offsetof(struct sync_pseudonym, f)
#define LOOK(f)	offsetof(struct sync_lookup, f)
#define MORE(f)	offsetof(struct sync_more, f)
#define FAN(f)	(MORE(fan_out) + offsetof(struct sync_fan_out, f))
#define JOIN(f)	(MORE(join) + offsetof(struct sync_join, f))
/* a key whose value is in the section's struct sync_more */
#define VIA	.via_off = SYN(more), .via_size = sizeof(struct sync_more)

/* a mapping file larger than this is not a mapping */
#define MAPPING_MAX	(16 * 1024 * 1024)
#define DEFAULT_REDACT	"[redacted]"
/* join.parent when each fan-out element names its document's parent */
#define JOIN_BY_ELEMENT	"{element}"
/* AES-256-SIV takes two AES-256 keys: 64 bytes, 128 hex digits */
#define PSEUDONYM_KEY_LEN	64

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

/* the date patterns' one grammar is lib/datepat.c's */
static int
check_date(const char *s, char *why, size_t len)
{
	return datepat_check(s, why, len);
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

/* a value copied into documents as written: a string, or unquoted a
 * number or a boolean (config_value.c) */
static const struct cs_node typed_value = { NULL, CS_STR, PAIR(value),
	.typed = 1, .plain_off = PAIR(plain) };

static const struct cs_node pseudonym_keys[] = {
	{ "key_env", CS_STR, PSEU(key_env), .required = 1,
	    .check = config_check_envname },
	{ "scope", CS_STR, PSEU(scope) },
	{ NULL }
};

static const struct cs_node lookup_keys[] = {
	{ "map", CS_MAP, LOOK(map), .required = 1, .elem = &typed_value,
	    .elem_size = sizeof(struct sync_pair), .count_off = LOOK(nmap),
	    .name_off = PAIR(name), .has_line = 1, .line_off = PAIR(line),
	    .expect = "must be a mapping of values (as text) to labels" },
	{ "default", CS_STR, LOOK(def), .typed = 1,
	    .plain_off = LOOK(def_plain) },
	{ NULL }
};

static const struct cs_node transform_long_keys[] = {
	{ "redact", CS_STR, XF(redact) },
	{ "split", CS_STR, XF(split) },
	{ "date", CS_STR, XF(date), .check = check_date },
	{ "pseudonym", CS_STRUCT, XF(pseudonym), .keys = pseudonym_keys },
	{ "lookup", CS_STRUCT, XF(lookup), .keys = lookup_keys },
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
	    "or a mapping of one operation to its parameter (pseudonym and "
	    "lookup take a mapping of their own)"
};

static const struct cs_node pair_value = { NULL, CS_STR, PAIR(value) };

static const struct cs_node fan_out_keys[] = {
	{ "column", CS_STR, FAN(column), .required = 1 },
	{ "by", CS_STR, FAN(by) },
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
	{ "columns", CS_LIST, MORE(columns), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = MORE(ncolumns),
	    .distinct = 1, VIA },
	{ "exclude_columns", CS_LIST, MORE(exclude_columns), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = MORE(nexclude_columns),
	    .distinct = 1, VIA },
	{ "id", CS_STR, SYN(id), .check = check_id },
	{ "primary_key", CS_LIST, MORE(primary_key), .elem = &column,
	    .elem_size = sizeof(char *), .count_off = MORE(nprimary_key),
	    .distinct = 1, VIA },
	{ "append_only", CS_BOOL, SYN(append_only), .def = "false" },
	{ "routing", CS_STR, MORE(routing), VIA },
	{ "pipeline", CS_STR, MORE(pipeline), VIA },
	{ "transform", CS_MAP, MORE(transforms), .elem = &transform,
	    .elem_size = sizeof(struct sync_transform),
	    .count_off = MORE(ntransforms), .name_off = XF(name),
	    .has_line = 1, .line_off = XF(line),
	    .expect = "must be a mapping of columns to operations", VIA },
	{ "fields", CS_MAP, MORE(fields), .elem = &pair_value,
	    .elem_size = sizeof(struct sync_pair), .count_off = MORE(nfields),
	    .name_off = PAIR(name), .has_line = 1, .line_off = PAIR(line),
	    .expect = "must be a mapping of columns to field names", VIA },
	{ "constants", CS_MAP, MORE(constants), .elem = &typed_value,
	    .elem_size = sizeof(struct sync_pair),
	    .count_off = MORE(nconstants), .name_off = PAIR(name),
	    .has_line = 1, .line_off = PAIR(line),
	    .expect = "must be a mapping of field names to values", VIA },
	{ "where", CS_STR, MORE(where), .check = where_check, VIA },
	{ "poll_column", CS_STR, MORE(poll_column), VIA },
	{ "soft_delete", CS_STR, MORE(soft_delete), .check = where_check, VIA },
	{ "mapping_file", CS_STR, MORE(mapping_file), VIA },
	{ "fan_out", CS_STRUCT, .keys = fan_out_keys, VIA },
	{ "join", CS_STRUCT, .keys = join_keys, VIA },
	{ "children", CS_LIST, MORE(children), .elem = &config_nest_child,
	    .elem_size = sizeof(struct sync_child),
	    .count_off = MORE(nchildren), .has_line = 1,
	    .line_off = offsetof(struct sync_child, line), VIA },
	{ "aggregates", CS_LIST, MORE(aggregates),
	    .elem = &config_nest_aggregate,
	    .elem_size = sizeof(struct sync_aggregate),
	    .count_off = MORE(naggregates), .has_line = 1,
	    .line_off = offsetof(struct sync_aggregate, line), VIA },
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
	const struct sync_more *m = sync_more(s);

	return config_projects(m->columns, m->ncolumns, m->exclude_columns,
	    m->nexclude_columns, c);
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
	const struct sync_pair *f = find_pair(sync_more(s)->fields,
	    sync_more(s)->nfields, c);

	return f ? f->value : c;
}

/* 'sync.x.transform.<column>', and '.rest' after it */
static const char *
xf_path(struct sbuf *buf, const char *path, const char *col,
    const char *rest)
{
	sbuf_reset(buf);
	sbuf_adds(buf, path);
	cs_path_add(buf, "transform");
	cs_path_add(buf, col);
	if (rest != NULL) {
		sbuf_addc(buf, '.');
		sbuf_adds(buf, rest);
	}
	return buf->buf;
}

/*
 * A pseudonym's key, from the variable key_env names, for a program that
 * asked for CONFIG_SECRET_TRANSFORM: 128 hex digits, else refused naming
 * the variable. The text is wiped once decoded; no message quotes it.
 */
static int
resolve_key(struct cs_walk *w, struct sync_pseudonym *p, const char *kpath,
    int line)
{
	char *hex = NULL;
	size_t i, n;
	int ok;

	if (config_resolve_env(w, kpath, line, p->key_env, &hex) == -1)
		return -1;
	if (hex == NULL)
		return 0;
	n = strlen(hex);
	ok = n == 2 * PSEUDONYM_KEY_LEN;
	for (i = 0; ok && i < n; i++)
		ok = hex_value((unsigned char)hex[i]) >= 0;
	if (ok) {
		p->key = xmalloc(PSEUDONYM_KEY_LEN);
		for (i = 0; i < PSEUDONYM_KEY_LEN; i++)
			p->key[i] = (unsigned char)(hex_value(hex[2 * i]) << 4 |
			    hex_value(hex[2 * i + 1]));
	}
	OPENSSL_cleanse(hex, n);
	free(hex);
	if (!ok)
		return cs_err(w, line, "'%s' names '%s', which must hold %d "
		    "hexadecimal digits (a %d-byte AES-256-SIV key)", kpath,
		    p->key_env, 2 * PSEUDONYM_KEY_LEN, PSEUDONYM_KEY_LEN);
	return 0;
}

static int
pair_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sync_pair *)a)->name,
	    ((const struct sync_pair *)b)->name);
}

/* a lookup's labels as JSON, its map sorted for the shaper's bsearch */
static int
finish_lookup(struct cs_walk *w, struct sync_lookup *l, struct sbuf *kp)
{
	struct sbuf json = SBUF_INIT;
	char why[256];
	size_t base = kp->len;
	int i, lit;

	for (i = 0; i < l->nmap; i++) {
		sbuf_reset(&json);
		if (config_value_json(l->map[i].value, l->map[i].plain, &json,
		    &lit, why, sizeof(why)) == -1) {
			cs_path_add(kp, l->map[i].name);
			cs_err(w, l->map[i].line, "'%s' %s", kp->buf, why);
			sbuf_release(&json);
			return -1;
		}
		l->map[i].json = xstrdup(json.buf);
		l->map[i].literal = lit;
	}
	qsort(l->map, (size_t)l->nmap, sizeof(*l->map), pair_cmp);
	if (l->def != NULL) {
		sbuf_reset(&json);
		kp->len = base - strlen("map");
		kp->buf[kp->len] = '\0';
		sbuf_adds(kp, "default");
		if (config_value_json(l->def, l->def_plain, &json, &lit, why,
		    sizeof(why)) == -1) {
			cs_err(w, cs_line(w, "%s", kp->buf), "'%s' %s", kp->buf,
			    why);
			sbuf_release(&json);
			return -1;
		}
		l->def_json = xstrdup(json.buf);
	}
	sbuf_release(&json);
	return 0;
}

static int
finish_transforms(struct cs_walk *w, struct sync_section *s,
    const char *path)
{
	struct sync_more *m = s->more;
	struct sync_transform *t;
	struct sbuf kp = SBUF_INIT;
	int i, k, n, rc = -1;

	for (i = 0; i < m->ntransforms; i++) {
		t = &m->transforms[i];
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
			if (cs_line(w, "%s", xf_path(&kp, path, t->name,
			    "pseudonym")))
				n++, t->kind = XF_PSEUDONYM;
			if (cs_line(w, "%s", xf_path(&kp, path, t->name,
			    "lookup")))
				n++, t->kind = XF_LOOKUP;
			if (n != 1) {
				cs_err(w, t->line, "'%s.transform.%s' must name "
				    "exactly one operation%s", path, t->name,
				    n > 1 ? ", not several (no chaining)" : "");
				goto out;
			}
		}
		if (!projected(s, t->name)) {
			cs_err(w, t->line, "'%s.transform.%s': column '%s' is "
			    "not in the documents (columns or exclude_columns "
			    "drops it)", path, t->name, t->name);
			goto out;
		}
		if (s->has_fan_out && strcmp(t->name, m->fan_out.column) == 0) {
			cs_err(w, t->line, "'%s.transform.%s': column '%s' is "
			    "the fan_out column, which fan_out reads raw and no "
			    "document carries", path, t->name, t->name);
			goto out;
		}
		if (t->kind == XF_REDACT && t->param == NULL)
			t->param = DEFAULT_REDACT;
		if (t->kind == XF_LOOKUP) {
			xf_path(&kp, path, t->name, "lookup.map");
			if (finish_lookup(w, &t->lookup, &kp) == -1)
				goto out;
		}
		if (t->kind == XF_PSEUDONYM) {
			xf_path(&kp, path, t->name, "pseudonym.key_env");
			if (resolve_key(w, &t->pseudonym, kp.buf,
			    cs_line(w, "%s", kp.buf)) == -1)
				goto out;
		}
	}
	rc = 0;
out:
	sbuf_release(&kp);
	return rc;
}

/* renames: the last step, so every other key speaks of source names */
static int
finish_fields(struct cs_walk *w, struct sync_section *s, const char *path)
{
	struct sync_more *m = s->more;
	const struct sync_pair *f, *g;
	int i, j;

	for (i = 0; i < m->nfields; i++) {
		f = &m->fields[i];
		if (!projected(s, f->name))
			return cs_err(w, f->line, "'%s.fields.%s': column '%s' "
			    "is not in the documents (columns or "
			    "exclude_columns drops it)", path, f->name,
			    f->name);
		if (s->has_fan_out && strcmp(f->name, m->fan_out.column) == 0)
			return cs_err(w, f->line, "'%s.fields.%s': column '%s' "
			    "is the fan_out column, which no document "
			    "carries", path, f->name, f->name);
		for (j = 0; j < i; j++) {
			g = &m->fields[j];
			if (strcmp(f->value, g->value) == 0)
				return cs_err(w, f->line, "'%s.fields.%s' "
				    "renames '%s' onto '%s', which "
				    "'%s.fields.%s' already renames '%s' onto",
				    path, f->name, f->name, f->value, path,
				    g->name, g->name);
		}
		/* onto a column that stays under its own name */
		if (m->columns != NULL &&
		    config_list_has(m->columns, m->ncolumns,
		    f->value) && find_pair(m->fields, m->nfields,
		    f->value) == NULL)
			return cs_err(w, f->line, "'%s.fields.%s' renames '%s' "
			    "onto '%s', a column the documents keep", path,
			    f->name, f->name, f->value);
	}
	return 0;
}

/*
 * A constant's value: a number or a boolean is the JSON it is written as;
 * a string is a template of {schema} and {table}, rendered once the
 * source's kind is known (lib/config.c)
 */
static int
constant_value(struct cs_walk *w, struct sync_pair *c, const char *path)
{
	struct sbuf json = SBUF_INIT;
	struct tmpl t;
	char why[256];
	int k, rc = 0;

	if (config_value_json(c->value, c->plain, &json, &c->literal, why,
	    sizeof(why)) == -1)
		rc = cs_err(w, c->line, "'%s.constants.%s' %s", path, c->name,
		    why);
	else if (c->literal)
		c->json = xstrdup(json.buf);
	else if (tmpl_parse(c->value, &t, why, sizeof(why)) == -1)
		rc = cs_err(w, c->line, "'%s.constants.%s' %s", path, c->name,
		    why);
	else {
		for (k = 0; rc == 0 && k < t.nparts; k++)
			if (t.parts[k].column &&
			    strcmp(t.parts[k].text, "schema") != 0 &&
			    strcmp(t.parts[k].text, "table") != 0)
				rc = cs_err(w, c->line, "'%s.constants.%s' "
				    "names '{%s}': a constant takes only "
				    "{schema} and {table}", path, c->name,
				    t.parts[k].text);
		tmpl_release(&t);
	}
	sbuf_release(&json);
	return rc;
}

/* the names a document carries besides its columns */
static int
finish_constants(struct cs_walk *w, struct sync_section *s,
    const char *path)
{
	struct sync_more *m = s->more;
	struct sync_pair *c;
	int i, k;

	for (i = 0; i < m->nconstants; i++) {
		c = &m->constants[i];
		if (constant_value(w, c, path) == -1)
			return -1;
		if (m->columns != NULL &&
		    config_list_has(m->columns, m->ncolumns,
		    c->name) && strcmp(target_name(s, c->name), c->name) == 0)
			return cs_err(w, c->line, "'%s.constants.%s' has the "
			    "name of column '%s', which the documents keep",
			    path, c->name, c->name);
		for (k = 0; k < m->nfields; k++)
			if (strcmp(m->fields[k].value, c->name) == 0)
				return cs_err(w, c->line, "'%s.constants.%s' "
				    "has the name 'fields' renames '%s' onto",
				    path, c->name, m->fields[k].name);
		if (s->has_join && strcmp(c->name, m->join.field) == 0)
			return cs_err(w, c->line, "'%s.constants.%s' has the "
			    "name of the join field", path, c->name);
		if (s->has_fan_out && strcmp(c->name, m->fan_out.element ?
		    m->fan_out.element : m->fan_out.column) == 0)
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
 * it is known (config_target.c), or its text for a target that reads it
 * itself (the target section comes first) */
static int
finish_mapping(struct cs_walk *w, struct sync_section *s, const char *path)
{
	struct sync_more *m = s->more;
	const struct config *cfg = cs_base(w);
	struct sbuf text = SBUF_INIT;
	struct jspan obj;
	char why[256], *dir, *file;
	const char *jwhy;
	size_t off;
	int line = cs_line(w, "%s.mapping_file", path);
	int rc = -1;

	dir = config_dir(cs_name(w));
	file = m->mapping_file[0] == '/' ? xstrdup(m->mapping_file) :
	    xmalloc(strlen(dir) + strlen(m->mapping_file) + 1);
	if (m->mapping_file[0] != '/')
		sprintf(file, "%s%s", dir, m->mapping_file);
	if (read_file(file, &text, why, sizeof(why)) == -1) {
		cs_err(w, line, "'%s.mapping_file' '%s': %s", path, file, why);
		goto out;
	}
	/* a target whose mapping file is text of its own (a table's DDL)
	 * reads it itself */
	if (cfg->target_module != NULL &&
	    cfg->target_module->mapping_form != NULL) {
		m->mapping = xstrndup(text.buf ? text.buf : "", text.len);
		m->mapping_path = file;
		file = NULL;
		rc = 0;
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
	m->mapping = xstrndup(obj.p, obj.n);
	m->mapping_path = file;
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
	struct sync_more *m = s->more;
	struct sync_join *j = &m->join;
	int lj = cs_line(w, "%s.join", path);

	if (contradicts(w, path, "join", "routing") == -1)
		return -1;
	/* a parent's children name it by its row's id: one document */
	if (s->has_fan_out && j->parent == NULL)
		return cs_err(w, cs_line(w, "%s.fan_out", path), "'%s.fan_out' "
		    "cannot be combined with a join parent ('%s.join' names no "
		    "'parent'): its children name one document per row",
		    path, path);
	j->by_element = j->parent != NULL &&
	    strcmp(j->parent, JOIN_BY_ELEMENT) == 0;
	if (j->by_element && !s->has_fan_out)
		return cs_err(w, cs_line(w, "%s.join.parent", path), "'%s.join."
		    "parent: %s' needs 'fan_out': only a fan-out element can "
		    "name its document's parent", path, JOIN_BY_ELEMENT);
	if (j->by_element && j->column != NULL)
		return cs_err(w, cs_line(w, "%s.join.column", path), "'%s.join."
		    "column' cannot be combined with 'parent: %s': the element "
		    "names each document's parent, and a column would name "
		    "another", path, JOIN_BY_ELEMENT);
	if (j->parent != NULL && !j->by_element && j->column == NULL)
		return cs_err(w, lj, "'%s.join' names a parent and so needs "
		    "'column', the column holding the parent's key (or 'parent: "
		    "%s' with fan_out, each element naming its own)", path,
		    JOIN_BY_ELEMENT);
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

/* the rules of what a section sets behind its more pointer */
static int
finish_more(struct cs_walk *w, struct sync_section *s, const char *path,
    int line)
{
	struct sync_more *m = s->more;
	char why[256];

	/* the checks already passed: this parses */
	if (s->has_fan_out && tmpl_parse(m->fan_out.id, &m->fan_out.id_t,
	    why, sizeof(why)) == -1)
		return cs_err(w, line, "'%s': %s", path, why);
	if (s->has_fan_out && m->fan_out.element == NULL)
		m->fan_out.element = xstrdup(m->fan_out.column);
	if (s->has_join && finish_join(w, s, path) == -1)
		return -1;
	if (m->where && (m->where_expr = where_parse(m->where, why,
	    sizeof(why))) == NULL)
		return cs_err(w, cs_line(w, "%s.where", path), "'%s.where' %s",
		    path, why);
	if (m->soft_delete && (m->soft_delete_expr =
	    where_parse(m->soft_delete, why, sizeof(why))) == NULL)
		return cs_err(w, cs_line(w, "%s.soft_delete", path),
		    "'%s.soft_delete' %s", path, why);
	if (finish_transforms(w, s, path) == -1 ||
	    finish_fields(w, s, path) == -1 ||
	    finish_constants(w, s, path) == -1 ||
	    config_nest_finish(w, s, path) == -1)
		return -1;
	if (m->mapping_file && finish_mapping(w, s, path) == -1)
		return -1;
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
	    (s->id && tmpl_parse(s->id, &s->id_t, why, sizeof(why)) == -1))
		return cs_err(w, line, "'%s': %s", path, why);
	s->index_templated = s->index_t.ncolumns > 0;
	if (s->index_templated)
		s->index_glob = tmpl_glob(&s->index_t);
	else {
		/* "{{" in a literal index name is a brace */
		free(s->index);
		s->index = xstrdup(s->index_t.parts[0].text);
	}
	/* a section of the usual shape sets nothing more */
	return s->more != NULL ? finish_more(w, s, path, line) : 0;
}

/* what finish_transforms and config_sync_scopes made */
static void
release_transform(struct sync_transform *t)
{
	struct sync_lookup *l = &t->lookup;
	int i;

	if (t->pseudonym.key != NULL)
		OPENSSL_cleanse(t->pseudonym.key, PSEUDONYM_KEY_LEN);
	free(t->pseudonym.key);
	free(t->pseudonym.ad);
	t->pseudonym.key = NULL;
	t->pseudonym.ad = NULL;
	for (i = 0; i < l->nmap; i++) {
		free(l->map[i].json);
		l->map[i].json = NULL;
	}
	free(l->def_json);
	l->def_json = NULL;
}

static void
release_section(void *base)
{
	struct sync_section *s = base;
	struct sync_more *m = s->more;
	int i;

	free(s->schema);
	free(s->table);
	free(s->index_glob);
	tmpl_release(&s->id_t);
	tmpl_release(&s->index_t);
	s->schema = s->table = s->index_glob = NULL;
	if (m == NULL)
		return;
	config_nest_release(s);
	free(m->index_body);
	free(m->mapping_path);
	free(m->mapping);
	tmpl_release(&m->fan_out.id_t);
	where_free(m->where_expr);
	where_free(m->soft_delete_expr);
	m->soft_delete_expr = NULL;
	for (i = 0; i < m->nconstants; i++) {
		free(m->constants[i].json);
		m->constants[i].json = NULL;
	}
	for (i = 0; i < m->ntransforms; i++)
		release_transform(&m->transforms[i]);
	free(m->join.children);
	m->join.children = NULL;
	m->join.nchildren = 0;
	m->index_body = m->mapping_path = m->mapping = NULL;
	m->where_expr = NULL;
}

const struct cs_node config_sync_section = {
	NULL, CS_STRUCT, .keys = section_keys, .finish = finish_section,
	.release = release_section
};

const struct sync_transform *
config_transform_of(const struct sync_section *s, const char *name)
{
	const struct sync_more *m = sync_more(s);
	int i;

	for (i = 0; i < m->ntransforms; i++)
		if (strcmp(m->transforms[i].name, name) == 0)
			return &m->transforms[i];
	return NULL;
}

void
config_sync_scopes(struct sync_section *s)
{
	struct sync_transform *t;
	struct sync_pseudonym *p;
	int i;

	if (s->more == NULL)
		return;
	for (i = 0; i < s->more->ntransforms; i++) {
		t = &s->more->transforms[i];
		if (t->kind != XF_PSEUDONYM)
			continue;
		p = &t->pseudonym;
		free(p->ad);
		if (p->scope != NULL)
			p->ad = xstrdup(p->scope);
		else {
			p->ad = xmalloc(strlen(s->rel) + strlen(t->name) + 2);
			sprintf(p->ad, "%s.%s", s->rel, t->name);
		}
	}
}

/* does pseudonym p have an explicit scope and key that q shares? */
static int
shares_scope(const struct sync_transform *p, const struct sync_transform *q)
{
	return p != NULL && q != NULL && p->kind == XF_PSEUDONYM &&
	    q->kind == XF_PSEUDONYM && p->pseudonym.scope != NULL &&
	    q->pseudonym.scope != NULL && strcmp(p->pseudonym.scope,
	    q->pseudonym.scope) == 0 && strcmp(p->pseudonym.key_env,
	    q->pseudonym.key_env) == 0;
}

int
config_sync_join_key(struct cs_walk *w, const struct sync_section *child,
    const struct sync_section *parent)
{
	const struct sync_transform *c, *p;
	struct sbuf path = SBUF_INIT;
	const char *pcol = NULL;
	const char *jcol = sync_more(child)->join.column;
	int i, line;

	if (jcol == NULL)
		return 0;
	for (i = 0; i < parent->id_t.nparts; i++)
		if (parent->id_t.parts[i].column)
			pcol = parent->id_t.parts[i].text;
	c = config_transform_of(child, jcol);
	p = pcol ? config_transform_of(parent, pcol) : NULL;
	if ((c == NULL || c->kind != XF_PSEUDONYM) &&
	    (p == NULL || p->kind != XF_PSEUDONYM))
		return 0;
	if (shares_scope(c, p))
		return 0;
	/* the later of the two pseudonyms, or the one there is */
	line = c && c->kind == XF_PSEUDONYM ? c->line : 0;
	if (p && p->kind == XF_PSEUDONYM && p->line > line)
		line = p->line;
	config_sec_path(child, &path);
	cs_err(w, line, "'%s.join': the join key columns '%s' and '%s' (of "
	    "'%s') are pseudonymised apart: both must be pseudonyms with the "
	    "same 'key_env' and the same explicit 'scope', or their documents "
	    "hold different tokens for one key", path.buf,
	    jcol, pcol ? pcol : "?", parent->name);
	sbuf_release(&path);
	return -1;
}
