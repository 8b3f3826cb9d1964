/*
 * doc.c - a document's body from a row, in the order the configuration
 * promises: the projection (columns, exclude_columns), then the
 * transforms, then the renames (fields), which come last so that every
 * other key speaks of the source's names; then the constants and a join
 * field. A fan-out element is merged in as if its members were columns
 * (its members win over the row's). Values are copied as the bytes that
 * arrived unless a transform rewrites them; nothing is parsed into a tree.
 *
 * Collisions the configuration could not see (it does not know the
 * table's columns) are settled here the way docs/config.md says: a
 * constant or a join field wins over a column of its name, and a renamed
 * column wins over a column that already had the name. Never a member
 * twice. Logs one warning per (table, column) whose value a transform
 * could not convert; no other I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "msg.h"
#include "shaper.h"

#define NAME_BUF	256

/* does column name survive the projection? A collection's member (the
 * source read it, lib/nest.c) is not a column: no projection drops it */
static int
keep(const struct sync_section *sec, const char *name)
{
	const struct sync_more *more = sync_more(sec);
	if ((more->nchildren > 0 || more->naggregates > 0) &&
	    config_nest_member(sec, name))
		return 1;
	return config_projects(more->columns, more->ncolumns,
	    more->exclude_columns, more->nexclude_columns, name);
}

static const char *
target(const struct sync_section *sec, const char *name)
{
	const struct sync_more *more = sync_more(sec);
	int i;

	for (i = 0; i < more->nfields; i++)
		if (strcmp(more->fields[i].name, name) == 0)
			return more->fields[i].value;
	return name;
}

/* is tname a name the document gives something other than column name? */
static int
taken(const struct sync_section *sec, const struct view *v,
    const char *name, const char *tname)
{
	const struct sync_more *more = sync_more(sec);
	struct jspan val;
	int i;

	for (i = 0; i < more->nconstants; i++)
		if (strcmp(more->constants[i].name, tname) == 0)
			return 1;
	if (sec->has_join && strcmp(more->join.field, tname) == 0)
		return 1;
	/* another column renamed onto it, and present: the rename wins */
	for (i = 0; i < more->nfields; i++)
		if (strcmp(more->fields[i].value, tname) == 0 &&
		    strcmp(more->fields[i].name, name) != 0 &&
		    keep(sec, more->fields[i].name) &&
		    view_get(v, more->fields[i].name, &val))
			return 1;
	return 0;
}

/* a value a transform could not convert, or a lookup found no label
 * for: counted per (table, column), warned about once. The warning names
 * the column, never the value (a pseudonym's is not to be seen) */
static void
unconverted(struct shaper *sh, const char *rel,
    const struct sync_transform *t, enum xf_result r)
{
	struct kcount *k = r == XF_MISSED ? &sh->lookup_misses :
	    &sh->unconverted;
	struct sbuf key = SBUF_INIT;

	sbuf_adds(&key, rel);
	sbuf_addc(&key, MSG_KEY_SEP);
	sbuf_adds(&key, t->name);
	if (kcount_get(k, key.buf) == 0 && r == XF_MISSED)
		log_warnx("table '%s' column '%s': a value the lookup has no "
		    "label for is indexed %s (counted in "
		    "pg2osync_transform_lookup_misses_total; this is said "
		    "once)", rel, t->name, t->lookup.def_json ? "as the "
		    "default" : "as it arrived");
	else if (kcount_get(k, key.buf) == 0)
		log_warnx("table '%s' column '%s': a value the transform could "
		    "not convert is indexed %s (counted in "
		    "pg2osync_transform_unconverted_total; this is said once)",
		    rel, t->name, t->kind == XF_PSEUDONYM ? "as the marker '"
		    XF_PSEUDONYM_MARKER "', never in clear" : "as it arrived");
	kcount_add(k, key.buf, key.len, 1);
	sbuf_release(&key);
}

/* one member: name is a column of the merged row, or (element) of the
 * fan-out element, which the projection of the table's columns does not
 * apply to */
static void
add_member(struct shaper *sh, const struct sync_section *sec,
    const struct view *v, const char *name, struct jspan val,
    struct sbuf *op, int *first, const char *rel, int element)
{
	const struct sync_transform *t;
	enum xf_result r;
	const char *tname;

	if (!element && !keep(sec, name))
		return;
	tname = target(sec, name);
	if (taken(sec, v, name, tname))
		return;
	if (!*first)
		sbuf_addc(op, ',');
	*first = 0;
	sbuf_add_jstr(op, tname, strlen(tname));
	sbuf_addc(op, ':');
	if ((t = config_transform_of(sec, name)) == NULL)
		sbuf_add(op, val.p, val.n);
	else if ((r = xf_apply(t, val, op)) != XF_CONVERTED)
		unconverted(sh, rel, t, r);
}

/* a member name as a C string: into buf, or the heap */
static const char *
name_of(struct jspan key, char *buf, size_t cap, char **heap)
{
	*heap = NULL;
	if (jstr_copy(key, buf, cap) == 0)
		return buf;
	return *heap = jstr_dup(key);
}

/* does the section change a row before it is a document? */
static int
reshapes(const struct sync_section *sec)
{
	const struct sync_more *more = sync_more(sec);
	return more->columns != NULL || more->nexclude_columns > 0 ||
	    more->ntransforms > 0 || more->nfields > 0 ||
	    more->nconstants > 0 ||
	    sec->has_join || sec->has_fan_out;
}

void
doc_build(struct shaper *sh, const struct sync_section *sec,
    const struct view *v, const char *parent_id, struct sbuf *op,
    const char *rel)
{
	const struct sync_more *more = sync_more(sec);
	struct jiter it;
	struct jspan key, val, other;
	char buf[NAME_BUF], *heap;
	const char *name;
	int first = 1, i;

	/* a document that is the row as it arrived is copied as such */
	if (!reshapes(sec)) {
		sbuf_add(op, v->img.p, v->img.n);
		return;
	}
	sbuf_addc(op, '{');
	jiter_init(&it, v->img);
	while (jiter_member(&it, &key, &val)) {
		name = name_of(key, buf, sizeof(buf), &heap);
		/* the fan-out column is not in the merged row, and an
		 * element's member wins over a column of its name */
		if ((v->skip == NULL || strcmp(name, v->skip) != 0) &&
		    !(v->elem.p && jspan_type(v->elem) == J_OBJECT &&
		    jobj_get(v->elem, name, &other)))
			add_member(sh, sec, v, name, val, op, &first, rel,
			    0);
		free(heap);
	}
	if (v->elem.p != NULL && jspan_type(v->elem) == J_OBJECT) {
		jiter_init(&it, v->elem);
		while (jiter_member(&it, &key, &val)) {
			name = name_of(key, buf, sizeof(buf), &heap);
			add_member(sh, sec, v, name, val, op, &first, rel,
			    1);
			free(heap);
		}
	} else if (v->elem.p != NULL)
		add_member(sh, sec, v, v->elem_name, v->elem, op, &first, rel,
		    1);
	for (i = 0; i < more->nconstants; i++) {
		if (!first)
			sbuf_addc(op, ',');
		first = 0;
		sbuf_add_jstr(op, more->constants[i].name,
		    strlen(more->constants[i].name));
		sbuf_addc(op, ':');
		sbuf_adds(op, more->constants[i].json);
	}
	if (sec->has_join) {
		if (!first)
			sbuf_addc(op, ',');
		sbuf_add_jstr(op, more->join.field, strlen(more->join.field));
		sbuf_addc(op, ':');
		if (parent_id == NULL)
			sbuf_add_jstr(op, more->join.name,
			    strlen(more->join.name));
		else {
			sbuf_adds(op, "{\"name\":");
			sbuf_add_jstr(op, more->join.name,
			    strlen(more->join.name));
			sbuf_adds(op, ",\"parent\":");
			sbuf_add_jstr(op, parent_id, strlen(parent_id));
			sbuf_addc(op, '}');
		}
	}
	sbuf_addc(op, '}');
}

int
doc_toast(const struct sync_section *sec, struct jspan toast,
    struct sbuf *op)
{
	struct jiter it;
	struct jspan name;
	const char *tname;
	char *s;
	int first = 1;

	jiter_init(&it, toast);
	while (jiter_elem(&it, &name)) {
		s = jstr_dup(name);
		if (keep(sec, s) && !(sec->has_fan_out &&
		    strcmp(s, sync_more(sec)->fan_out.column) == 0)) {
			if (first)
				msg_list_begin(op, ML_TOAST);
			first = 0;
			/* the stored document holds it under its target
			 * name, already transformed: copied as it is */
			tname = target(sec, s);
			msg_list_item(op, tname, strlen(tname));
		}
		free(s);
	}
	if (!first)
		msg_list_end(op);
	return !first;
}
