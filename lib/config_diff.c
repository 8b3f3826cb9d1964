/*
 * config_diff.c - which sync section keys changed between two loaded
 * configurations in a way the documents already written cannot follow,
 * and what makes the index right again (config_diff.h). Owns the
 * judgment per key: a rule for every key of a section's table (a unit
 * test fails on a key without one), each comparing the values as loaded
 * - defaults filled, names resolved, a filter parsed - so that writing a
 * default out, reordering a projection or renaming a section is no
 * change. The new file's lines are read from its tree, parsed again.
 *
 * Every key of a section alters what documents hold or where they are:
 * there is no key a reload may take silently. What it must never do is
 * decide for the operator: it names the change, the line and the remedy,
 * and runs nothing. Never logs, never exits.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_diff.h"
#include "config_sections.h"
#include "config_tree.h"
#include "target.h"
#include "where.h"

struct rule {
	const char *key;
	enum config_remedy remedy;
	const char *why;
	/* 1 if the key means the same in both; NULL: by the key table */
	int	(*same)(const struct config *, const struct sync_section *,
		    const struct config *, const struct sync_section *);
};

static const void *
at(const void *base, size_t off)
{
	return (const char *)base + off;
}

static int
same_str(const char *a, const char *b)
{
	return (a == NULL) == (b == NULL) && (a == NULL || strcmp(a, b) == 0);
}

/* the element of map or list s named name, or NULL */
static const void *
map_find(const struct cs_node *s, const void *base, const char *name)
{
	const char *arr = *(char *const *)at(base, s->off);
	int n = *(const int *)at(base, s->count_off), i;

	for (i = 0; i < n; i++)
		if (strcmp(*(char *const *)at(arr + i * s->elem_size,
		    s->name_off), name) == 0)
			return arr + i * s->elem_size;
	return NULL;
}

/* the values key s stores in a and b are the same, by its table */
static int
same_node(const struct cs_node *s, const void *a, const void *b)
{
	const struct cs_node *k;
	const char *ea, *eb;
	const void *e;
	int i, n;

	/* a key kept behind a pointer: an empty one where it is NULL */
	a = cs_via(s, a);
	b = cs_via(s, b);
	if (s->alt != NULL && !same_node(s->alt, a, b))
		return 0;
	switch (s->kind) {
	case CS_STR:
	case CS_ENUM:
		/* a typed value quoted or not is a string or a number */
		if (s->typed && *(const int *)at(a, s->plain_off) !=
		    *(const int *)at(b, s->plain_off))
			return 0;
		return same_str(*(char *const *)at(a, s->off),
		    *(char *const *)at(b, s->off));
	case CS_INT:
	case CS_BOOL:
		return *(const int *)at(a, s->off) == *(const int *)at(b,
		    s->off);
	case CS_ULONG:
		return *(const unsigned long *)at(a, s->off) ==
		    *(const unsigned long *)at(b, s->off);
	case CS_SIZE:
		return *(const size_t *)at(a, s->off) ==
		    *(const size_t *)at(b, s->off);
	case CS_STRUCT:
		for (k = s->keys; k->name; k++)
			if (!same_node(k, at(a, s->off), at(b, s->off)))
				return 0;
		return 1;
	case CS_LIST:
	case CS_MAP:
		n = *(const int *)at(a, s->count_off);
		if (n != *(const int *)at(b, s->count_off))
			return 0;
		ea = *(char *const *)at(a, s->off);
		eb = *(char *const *)at(b, s->off);
		for (i = 0; i < n; i++) {
			/* a mapping of names: the same names, in any order */
			e = s->kind == CS_LIST ? eb + i * s->elem_size :
			    map_find(s, b, *(char *const *)at(ea +
			    i * s->elem_size, s->name_off));
			if (e == NULL || !same_node(s->elem, ea +
			    i * s->elem_size, e))
				return 0;
		}
		return 1;
	}
	return 0;
}

static int
in_list(char *const *list, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

/* a projection is a set: its order changes no document */
static int
same_set(char *const *a, int na, char *const *b, int nb)
{
	int i;

	if ((a == NULL) != (b == NULL) || na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (!in_list(b, nb, a[i]))
			return 0;
	return 1;
}

static int
same_columns(const struct config *wc, const struct sync_section *a,
    const struct config *nc, const struct sync_section *b)
{
	const struct sync_more *ma = sync_more(a), *mb = sync_more(b);

	return same_set(ma->columns, ma->ncolumns, mb->columns, mb->ncolumns);
}

static int
same_excluded(const struct config *wc, const struct sync_section *a,
    const struct config *nc, const struct sync_section *b)
{
	const struct sync_more *ma = sync_more(a), *mb = sync_more(b);

	return same_set(ma->exclude_columns, ma->nexclude_columns,
	    mb->exclude_columns, mb->nexclude_columns);
}

static char *
quote_plain(void *arg, const char *s, int ident)
{
	struct sbuf b = SBUF_INIT;

	sbuf_addc(&b, ident ? '"' : '\'');
	sbuf_adds(&b, s);
	sbuf_addc(&b, ident ? '"' : '\'');
	return b.buf;
}

/* the filter as the loader writes it: spacing and keyword case aside */
static int
same_where(const struct config *wc, const struct sync_section *a,
    const struct config *nc, const struct sync_section *b)
{
	const struct sync_more *ma = sync_more(a), *mb = sync_more(b);
	struct sbuf x = SBUF_INIT, y = SBUF_INIT;
	int same;

	if ((ma->where_expr == NULL) != (mb->where_expr == NULL))
		return 0;
	if (ma->where_expr == NULL)
		return 1;
	same = where_sql(ma->where_expr, &x, quote_plain, NULL) == 0 &&
	    where_sql(mb->where_expr, &y, quote_plain, NULL) == 0 &&
	    x.len == y.len && memcmp(x.buf, y.buf, x.len) == 0;
	sbuf_release(&x);
	sbuf_release(&y);
	return same;
}

/* what the file holds, wherever it is */
static int
same_mapping(const struct config *wc, const struct sync_section *a,
    const struct config *nc, const struct sync_section *b)
{
	const struct sync_more *ma = sync_more(a), *mb = sync_more(b);

	return same_str(ma->mapping, mb->mapping);
}

/* a join names its parent by section name, which may change with the
 * parent meaning the same table; a parent's relations are its
 * children's names, which its index's mapping declares */
static int
same_join(const struct config *wc, const struct sync_section *a,
    const struct config *nc, const struct sync_section *b)
{
	const struct sync_join *x = &sync_more(a)->join,
	    *y = &sync_more(b)->join;
	int i;

	if (a->has_join != b->has_join)
		return 0;
	if (!a->has_join)
		return 1;
	if (!same_str(x->field, y->field) || !same_str(x->name, y->name) ||
	    !same_str(x->column, y->column) ||
	    (x->parent == NULL) != (y->parent == NULL) ||
	    x->nchildren != y->nchildren)
		return 0;
	if (x->parent && strcmp(wc->syncs[x->parent_sec].rel,
	    nc->syncs[y->parent_sec].rel) != 0)
		return 0;
	for (i = 0; i < x->nchildren; i++)
		if (!in_list(y->children, y->nchildren, x->children[i]))
			return 0;
	return 1;
}

/*
 * Every key of a section's table, in its order. The remedy is the
 * weakest that makes the index what the new file renders: the rows
 * written again when only what documents hold changed; the orphans
 * deleted too when documents get other names or leave the section; a
 * fresh index when the index itself must differ (its mapping, where its
 * documents are routed).
 */
/* a key no document depends on: a poll column changed, the capture
 * reads its table again from the first row (capture-pg/poll.c: a
 * cursor of another column is dropped) */
static int
same_documents(const struct config *wc, const struct sync_section *a,
    const struct config *nc, const struct sync_section *b)
{
	(void)wc; (void)a; (void)nc; (void)b;
	return 1;
}

static int
same_soft_delete(const struct config *wc, const struct sync_section *a,
    const struct config *nc, const struct sync_section *b)
{
	const struct sync_more *ma = sync_more(a), *mb = sync_more(b);
	struct sbuf x = SBUF_INIT, y = SBUF_INIT;
	int same;

	(void)wc; (void)nc;
	if ((ma->soft_delete_expr == NULL) != (mb->soft_delete_expr == NULL))
		return 0;
	if (ma->soft_delete_expr == NULL)
		return 1;
	same = where_sql(ma->soft_delete_expr, &x, quote_plain, NULL) == 0 &&
	    where_sql(mb->soft_delete_expr, &y, quote_plain, NULL) == 0 &&
	    x.len == y.len && memcmp(x.buf, y.buf, x.len) == 0;
	sbuf_release(&x);
	sbuf_release(&y);
	return same;
}

static const struct rule rules[] = {
	{ "table", CR_REPAIR, "the documents of the old table would stay "
	    "in the index" },
	/* why: built in index_why, naming both indices */
	{ "index", CR_REPAIR, NULL },
	{ "columns", CR_RESNAPSHOT, "the documents already written keep "
	    "the old columns", same_columns },
	{ "exclude_columns", CR_RESNAPSHOT, "the documents already written "
	    "keep the old columns", same_excluded },
	{ "id", CR_REPAIR, "the documents already written keep their old "
	    "ids and would stay beside the ones the new ids name" },
	{ "primary_key", CR_REPAIR, "the documents already written were "
	    "named (and their children found) by the old key" },
	{ "append_only", CR_REPAIR, "an append-only row is filed under the "
	    "hash of its content, any other under its key: the documents "
	    "already written keep the old ids" },
	{ "routing", CR_REINDEX, "the documents already written stay on the "
	    "shards the old routing chose, where a read routed by the new "
	    "one does not look" },
	{ "pipeline", CR_RESNAPSHOT, "the documents already written went "
	    "through the old ingest pipeline" },
	{ "transform", CR_RESNAPSHOT, "the documents already written hold "
	    "the values the old transforms made (when the index's mapping "
	    "cannot take the new ones, 'pg2osync reindex' builds one that "
	    "can)" },
	{ "fields", CR_RESNAPSHOT, "the documents already written carry the "
	    "old field names" },
	{ "constants", CR_RESNAPSHOT, "the documents already written carry "
	    "the old constants" },
	{ "where", CR_REPAIR, "the documents of rows the new filter leaves "
	    "out would stay, and the rows it lets in would be missing until "
	    "each changes", same_where },
	{ "mapping_file", CR_REINDEX, "an index that exists keeps the "
	    "mapping it was created with", same_mapping },
	{ "fan_out", CR_REPAIR, "the documents already written are the old "
	    "elements, under the old ids" },
	{ "join", CR_REINDEX, "the join's relations are in the index's "
	    "mapping and route the children", same_join },
	{ "children", CR_RESNAPSHOT, "the documents already written embed "
	    "the old collections" },
	{ "aggregates", CR_RESNAPSHOT, "the documents already written carry "
	    "the old counts" },
	/* poll mode */
	{ "poll_column", CR_RESNAPSHOT, NULL, same_documents },
	{ "soft_delete", CR_REPAIR, "the documents of rows the new soft "
	    "delete matches would stay, and the rows it no longer matches "
	    "would be missing until each changes", same_soft_delete },
	{ NULL }
};

int
config_diff_knows(const char *key)
{
	const struct rule *r;

	for (r = rules; r->key; r++)
		if (strcmp(r->key, key) == 0)
			return 1;
	return 0;
}

static const struct cs_node *
table_key(const char *name)
{
	const struct cs_node *k;

	for (k = config_sync_section.keys; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

/* ---- the new file's lines ---- */

static int
read_tree(const char *path, struct ctree *t)
{
	struct sbuf text = SBUF_INIT;
	struct cmsg m;
	char err[256], buf[8192];
	FILE *fp;
	size_t n;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		sbuf_add(&text, buf, n);
	fclose(fp);
	m.name = path;
	m.err = err;
	m.errlen = sizeof(err);
	rc = ctree_parse(t, text.buf ? text.buf : "", text.len, &m);
	sbuf_release(&text);
	return rc;
}

/* the line of the deepest key of path (n names) the tree holds, 0 for
 * none */
static int
tree_line(const struct ctree *t, const char *const *path, int n)
{
	size_t node = 0, k, v = CN_NONE;
	int i, line = 0;

	for (i = 0; i < n && t->n > 0; i++) {
		if (t->v[node].kind != CN_MAP)
			break;
		for (k = t->v[node].first; k != CN_NONE; k = t->v[v].next) {
			v = t->v[k].next;
			if (t->v[k].kind == CN_SCALAR &&
			    strcmp(ctree_str(t, &t->v[k]), path[i]) == 0)
				break;
		}
		if (k == CN_NONE)
			break;
		line = t->v[k].line;
		node = v;
	}
	return line;
}

/* ---- the changes ---- */

/* a word as a shell reads it: plain, or in double quotes */
static void
shell_word(struct sbuf *out, const char *s)
{
	const char *c;

	for (c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_./,:+-@=%", *c))
			break;
	if (*c == '\0' && *s != '\0') {
		sbuf_adds(out, s);
		return;
	}
	sbuf_addc(out, '"');
	for (c = s; *c; c++) {
		if (strchr("\"\\$`", *c))
			sbuf_addc(out, '\\');
		sbuf_addc(out, *c);
	}
	sbuf_addc(out, '"');
}

/* "'pg2osync VERB -c FILE --table SECTION" (the rest is the caller's) */
static void
command(struct sbuf *out, const char *verb, const struct config *now,
    const struct sync_section *s)
{
	sbuf_addf(out, "'pg2osync %s -c ", verb);
	shell_word(out, now->path);
	sbuf_adds(out, " --table ");
	shell_word(out, s->name);
}


static void
add(struct config_diff *d, const char *section, const char *key,
    int line, char *why, const char *fix, enum config_remedy remedy)
{
	struct config_change *c;

	d->v = xrealloc(d->v, (size_t)(d->n + 1) * sizeof(*d->v));
	c = &d->v[d->n++];
	c->section = xstrdup(section);
	c->key = key;
	c->line = line;
	c->why = why;
	c->fix = xstrdup(fix);
	c->remedy = remedy;
}

static const char *
claim(const struct sync_section *s)
{
	return s->index_templated ? s->index_glob : s->index;
}

/* s and o can write one index */
static int
same_index(const struct sync_section *s, const struct sync_section *o)
{
	return s->index_templated || o->index_templated ?
	    glob_overlap(claim(s), claim(o)) : strcmp(s->index, o->index) == 0;
}

/* a section of cfg other than not writing into what s's index claims */
static const struct sync_section *
index_writer(const struct config *cfg, const struct sync_section *s,
    const struct sync_section *not)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (&cfg->syncs[i] != not && same_index(s, &cfg->syncs[i]))
			return &cfg->syncs[i];
	return NULL;
}

static const struct sync_section *
by_name(const struct config *cfg, const char *name)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (strcmp(cfg->syncs[i].name, name) == 0)
			return &cfg->syncs[i];
	return NULL;
}

/* s's section in the other file: of its name, or else (renamed) of its
 * table under a name the first file does not have */
static const struct sync_section *
pair(const struct config *from, const struct config *to,
    const struct sync_section *s)
{
	const struct sync_section *o;
	int i;

	if ((o = by_name(to, s->name)) != NULL)
		return o;
	for (i = 0; i < to->nsyncs; i++) {
		o = &to->syncs[i];
		if (strcmp(o->rel, s->rel) == 0 && by_name(from, o->name) ==
		    NULL)
			return o;
	}
	return NULL;
}

static char *
index_why(const struct config *now, const struct sync_section *was,
    const struct sync_section *s)
{
	const struct sync_section *o = index_writer(now, was, s);
	struct sbuf b = SBUF_INIT, p = SBUF_INIT;

	sbuf_addf(&b, "the documents already written stay in index '%s' and "
	    "'%s' starts without them", was->index, s->index);
	if (o == NULL)
		sbuf_addf(&b, " (delete '%s' once nothing reads it)",
		    was->index);
	else {
		sbuf_addf(&b, " ('%s' still writes '%s': ",
		    config_sec_path(o, &p), was->index);
		command(&b, "verify", now, o);
		sbuf_adds(&b, " --repair' then deletes them there)");
	}
	sbuf_release(&p);
	return b.buf;
}

static void
section_changes(struct config_diff *d, const struct ctree *t,
    const struct config *wc, const struct sync_section *a,
    const struct config *nc, const struct sync_section *b)
{
	const struct rule *r;
	const struct cs_node *k;
	const char *path[3] = { "sync", b->name, NULL };
	int same;

	for (r = rules; r->key; r++) {
		if (r->same != NULL)
			same = r->same(wc, a, nc, b);
		else
			same = (k = table_key(r->key)) != NULL &&
			    same_node(k, a, b);
		if (same)
			continue;
		path[2] = r->key;
		add(d, b->name, r->key, tree_line(t, path, 3),
		    r->why ? xstrdup(r->why) : index_why(nc, a, b), b->name,
		    r->remedy);
	}
}

/* by line, a removed section (no line) last; stable, so a section's
 * keys on one line stay in table order */
static void
sort_by_line(struct config_diff *d)
{
	struct config_change c;
	int i, j;

	for (i = 1; i < d->n; i++) {
		c = d->v[i];
		for (j = i; j > 0 && (c.line ? c.line : 1 << 30) <
		    (d->v[j - 1].line ? d->v[j - 1].line : 1 << 30); j--)
			d->v[j] = d->v[j - 1];
		d->v[j] = c;
	}
}

int
config_diff(const struct config *was, const struct config *now,
    struct config_diff *d)
{
	const struct sync_section *a, *b, *o;
	const char *sync[1] = { "sync" };
	struct ctree t;
	struct sbuf why = SBUF_INIT;
	int i;

	memset(d, 0, sizeof(*d));
	/* no tree (the file changed again since it loaded): no lines */
	if (read_tree(now->path, &t) == -1)
		memset(&t, 0, sizeof(t));
	for (i = 0; i < was->nsyncs; i++) {
		a = &was->syncs[i];
		if ((b = pair(was, now, a)) != NULL) {
			section_changes(d, &t, was, a, now, b);
			continue;
		}
		/* a removed section's index is left as it is, unless the new
		 * file still writes there: its documents would then be
		 * documents no row of that index renders */
		if ((o = index_writer(now, a, NULL)) == NULL)
			continue;
		sbuf_reset(&why);
		sbuf_addf(&why, "its documents stay in index '%s', which sync",
		    a->index);
		cs_path_add(&why, o->name);
		sbuf_adds(&why, " still writes");
		add(d, a->name, NULL, tree_line(&t, sync, 1), xstrdup(why.buf),
		    o->name, CR_REPAIR);
	}
	sbuf_release(&why);
	ctree_release(&t);
	sort_by_line(d);
	return d->n;
}

void
config_diff_release(struct config_diff *d)
{
	int i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].section);
		free(d->v[i].why);
		free(d->v[i].fix);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* ---- the refusal ---- */

/* what a section needs of its target and shape: a remedy it can run */
static enum config_remedy
runnable(enum config_remedy r, const struct config *now,
    const struct sync_section *s)
{
	const struct target_module *tm = now->target_module;

	/* verify reads the documents back: a target without a scan gets
	 * a fresh index instead */
	if (r == CR_REPAIR && tm != NULL && tm->scan == NULL)
		r = CR_REINDEX;
	/* reindex builds one section's index, counted against its rows */
	if (r == CR_REINDEX && (s->index_templated || s->has_fan_out ||
	    s->shared || (tm != NULL && !target_can(tm, TCAP_ALIASES) &&
	    !target_can(tm, TCAP_INDEX_SWAP))))
		r = CR_REBUILD;
	return r;
}

static void
say_remedy(struct sbuf *out, enum config_remedy r, const struct config *now,
    const struct sync_section *s)
{
	const struct sync_section *o;
	int i, n;

	switch (r) {
	case CR_RESNAPSHOT:
		sbuf_adds(out, "to take it, restart pg2osync-supervise on this "
		    "file, then run ");
		command(out, "resnapshot", now, s);
		sbuf_adds(out, "', which writes every row again");
		break;
	case CR_REPAIR:
		sbuf_adds(out, "to take it, restart pg2osync-supervise on this "
		    "file, then run ");
		command(out, "verify", now, s);
		sbuf_adds(out, " --repair', which writes what the new file "
		    "renders and deletes the documents no row renders");
		break;
	case CR_REINDEX:
		sbuf_adds(out, "to take it, stop pg2osync-supervise, run ");
		command(out, "reindex", now, s);
		if (now->target_module == NULL ||
		    target_can(now->target_module, TCAP_ALIASES))
			sbuf_adds(out, " --alias NAME', which builds a fresh "
			    "index that readers find under NAME (the "
			    "section's index from then on)");
		else
			sbuf_addf(out, "', which builds a fresh index and "
			    "swaps it with '%s'", s->index);
		sbuf_adds(out, ", and start it again");
		break;
	case CR_REBUILD:
		sbuf_addf(out, "to take it, stop pg2osync-supervise, delete "
		    "%s '%s' (reindex cannot rebuild a templated, fan-out or "
		    "shared index), start it on this file and run ",
		    s->index_templated ? "the indices" : "index", claim(s));
		command(out, "resnapshot", now, s);
		sbuf_addc(out, '\'');
		for (i = n = 0; i < now->nsyncs; i++) {
			o = &now->syncs[i];
			if (o == s || !same_index(s, o))
				continue;
			sbuf_adds(out, n++ ? ", " : ", and the same for ");
			sbuf_addf(out, "'%s'", o->name);
		}
		break;
	}
}

static void
say_path(struct sbuf *out, const struct config_change *c)
{
	sbuf_adds(out, "sync");
	cs_path_add(out, c->section);
	if (c->key) {
		sbuf_addc(out, '.');
		sbuf_adds(out, c->key);
	}
}

void
config_diff_say(const struct config_diff *d, const struct config *now,
    struct sbuf *out)
{
	const struct config_change *c, *first;
	const struct sync_section *s, **rebuilt;
	enum config_remedy r;
	unsigned char *told;
	int i, j, also, nrebuilt = 0;

	told = xcalloc((size_t)d->n + 1, 1);
	rebuilt = xcalloc((size_t)d->n + 1, sizeof(*rebuilt));
	for (i = 0; i < d->n; i++) {
		if (told[i])
			continue;
		/* one clause per section the remedies run on */
		first = &d->v[i];
		if ((s = by_name(now, first->fix)) == NULL)
			continue;
		if (out->len > 0)
			sbuf_adds(out, " | ");
		if (first->line > 0)
			sbuf_addf(out, "%s:%d: ", now->path, first->line);
		else
			sbuf_addf(out, "%s: ", now->path);
		say_path(out, first);
		sbuf_addf(out, " %s: %s", first->key ? "changed" : "removed",
		    first->why);
		r = first->remedy;
		for (also = 0, j = i + 1; j < d->n; j++) {
			c = &d->v[j];
			if (strcmp(c->fix, first->fix) != 0)
				continue;
			told[j] = 1;
			sbuf_adds(out, also++ ? ", " : " (also ");
			say_path(out, c);
			sbuf_addf(out, " %s", c->key ? "changed" : "removed");
			if (c->line > 0)
				sbuf_addf(out, " at line %d", c->line);
			if (c->remedy > r)
				r = c->remedy;
		}
		if (also)
			sbuf_addc(out, ')');
		sbuf_adds(out, "; ");
		if ((r = runnable(r, now, s)) == CR_REBUILD) {
			/* one rebuild of an index serves every section in it */
			for (j = 0; j < nrebuilt && !same_index(rebuilt[j], s);
			    j++)
				;
			if (j < nrebuilt) {
				sbuf_addf(out, "the rebuild of index '%s' above "
				    "takes it", claim(s));
				continue;
			}
			rebuilt[nrebuilt++] = s;
		}
		say_remedy(out, r, now, s);
	}
	free(rebuilt);
	free(told);
}
