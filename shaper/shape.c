/*
 * shape.c - one event frame in, its operation frames out (framing.md §4 →
 * §5), by the sync sections of the configuration: which index a table goes
 * to, the document id, the projection of columns. Documents are never
 * parsed into a tree or re-serialised: member values are copied as the
 * bytes that arrived. This file never reads or writes a file descriptor;
 * it logs only schema drift, which is all that event is for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "log.h"
#include "msg.h"
#include "shaper.h"

#define REL_BUF		256	/* "schema.table": two names of at most 64 */

struct row {
	struct msg_row m;
	char	relname[REL_BUF];
	const struct sync_section *sec;
};

void
shaper_init(struct shaper *sh, const struct config *cfg)
{
	memset(sh, 0, sizeof(*sh));
	sh->cfg = cfg;
	tomb_init(&sh->tombs);
	sbuf_init(&sh->id);
	sbuf_init(&sh->old_id);
	sbuf_init(&sh->op);
}

void
shaper_release(struct shaper *sh)
{
	kcount_release(&sh->drift);
	tomb_release(&sh->tombs);
	sbuf_release(&sh->id);
	sbuf_release(&sh->old_id);
	sbuf_release(&sh->op);
}

/* the section for a rel string span; a name too long for any configured
 * table (every rel in the config fits REL_BUF in practice) goes through
 * the heap rather than being truncated into a wrong match */
static const struct sync_section *
find_section(const struct config *cfg, struct jspan rel, char *buf,
    size_t cap)
{
	const struct sync_section *sec;
	char *heap;

	if (jstr_copy(rel, buf, cap) == 0)
		return config_find_rel(cfg, buf);
	heap = jstr_dup(rel);
	sec = config_find_rel(cfg, heap);
	snprintf(buf, cap, "%s", heap);
	free(heap);
	return sec;
}

#define NAME_IS(key, lit)	jkey_is((key), (lit), sizeof(lit) - 1)

static int
in_list(struct jspan name, char *const *list, int n)
{
	for (int i = 0; i < n; i++)
		if (jkey_is(name, list[i], strlen(list[i])))
			return 1;
	return 0;
}

/* does a column (a string span) survive the section's projection? */
static int
keep_column(const struct sync_section *sec, struct jspan name)
{
	if (sec->columns != NULL)
		return in_list(name, sec->columns, sec->ncolumns);
	if (sec->nexclude_columns > 0)
		return !in_list(name, sec->exclude_columns,
		    sec->nexclude_columns);
	return 1;
}

static int
projects(const struct sync_section *sec)
{
	return sec->columns != NULL || sec->nexclude_columns > 0;
}

static void
add_document(struct sbuf *op, const struct sync_section *sec,
    struct jspan new)
{
	struct jiter it;
	struct jspan name, val;
	int first = 1;

	/* an unprojected document is the row image itself, as it arrived */
	if (!projects(sec)) {
		sbuf_add(op, new.p, new.n);
		return;
	}
	sbuf_addc(op, '{');
	jiter_init(&it, new);
	while (jiter_member(&it, &name, &val)) {
		if (!keep_column(sec, name))
			continue;
		if (!first)
			sbuf_addc(op, ',');
		first = 0;
		sbuf_add(op, name.p, name.n);
		sbuf_addc(op, ':');
		sbuf_add(op, val.p, val.n);
	}
	sbuf_addc(op, '}');
}

/* ,"toast":[...] with the names that survive the projection, or nothing
 * when none does: the writer need not complete a field the document
 * would not carry */
static int
add_toast(struct sbuf *op, const struct sync_section *sec,
    struct jspan toast)
{
	struct jiter it;
	struct jspan name;
	int first = 1;

	char *s;

	jiter_init(&it, toast);
	while (jiter_elem(&it, &name)) {
		if (!keep_column(sec, name))
			continue;
		if (first)
			msg_list_begin(op, ML_TOAST);
		first = 0;
		s = jstr_dup(name);
		msg_list_item(op, s, strlen(s));
		free(s);
	}
	if (!first)
		msg_list_end(op);
	return !first;
}

/* the members every operation starts with: kind, index, id, v */
static void
op_begin(struct sbuf *op, enum msg_kind kind, const struct sync_section *sec,
    const struct sbuf *id, uint64_t v)
{
	msg_op_begin(op, kind, sec->index, strlen(sec->index),
	    id ? id->buf : NULL, id ? id->len : 0, v);
}

static void
op_end(struct shaper *sh, struct sbuf *out)
{
	msg_end(out, &sh->op);
	sh->n.ops_out++;
}

/* a stream delete: the window remembers it until the load's next mark */
static void
remember_delete(struct shaper *sh, const struct sync_section *sec,
    const struct sbuf *id, uint64_t v)
{
	tomb_delete(&sh->tombs, sec->index, strlen(sec->index), id->buf,
	    id->len, v);
}

static int
render(struct row *r, struct jspan image,
    const char *which, struct sbuf *id, char *err, size_t errlen)
{
	char why[192];

	sbuf_reset(id);
	if (id_render(r->m.key, image, id, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "table '%s': row op '%c': %s in \"%s\"",
		    r->relname, r->m.op, why, which);
		return -1;
	}
	return 0;
}

static int
shape_row(struct shaper *sh, enum shape_source src, struct jspan obj,
    struct sbuf *out, char *err, size_t errlen)
{
	struct row r;
	char op;
	int pk_changed;

	if (msg_read_row(obj, &r.m, err, errlen) == -1)
		return -1;
	op = r.m.op;
	if (src == SHAPE_LOAD && op != 'c') {
		snprintf(err, errlen, "row op '%c' on the load stream, which "
		    "carries copy rows only", op);
		return -1;
	}
	sh->n.rows_in++;
	r.sec = find_section(sh->cfg, r.m.rel, r.relname, sizeof(r.relname));
	if (r.sec == NULL) {
		sh->n.rows_unmapped++;
		return 0;
	}
	if (op != 'd' && r.m.new.p == NULL) {
		snprintf(err, errlen, "table '%s': row op '%c' has no \"new\"",
		    r.relname, op);
		return -1;
	}
	if (op == 'd' && r.m.old.p == NULL) {
		snprintf(err, errlen, "table '%s': row op 'd' has no \"old\"",
		    r.relname);
		return -1;
	}

	if (op == 'd') {
		if (render(&r, r.m.old, "old", &sh->old_id, err, errlen) == -1)
			return -1;
		remember_delete(sh, r.sec, &sh->old_id, r.m.v);
		op_begin(&sh->op, MSG_DELETE, r.sec, &sh->old_id, r.m.v);
		op_end(sh, out);
		return 0;
	}

	if (render(&r, r.m.new, "new", &sh->id, err, errlen) == -1)
		return -1;
	/* a copy the stream has since removed must not come back once the
	 * target has forgotten the removal's tombstone */
	if (op == 'c' && tomb_drops(&sh->tombs, r.sec->index,
	    strlen(r.sec->index), sh->id.buf, sh->id.len, r.m.v)) {
		sh->n.copies_dropped++;
		return 0;
	}
	/* a changed primary key: the old document goes after the new one
	 * exists, so a reader never finds the row under neither id */
	pk_changed = 0;
	if (op == 'u' && r.m.old.p != NULL) {
		if (render(&r, r.m.old, "old", &sh->old_id, err, errlen) == -1)
			return -1;
		pk_changed = sh->old_id.len != sh->id.len || (sh->id.len > 0 &&
		    memcmp(sh->old_id.buf, sh->id.buf, sh->id.len) != 0);
	}

	op_begin(&sh->op, MSG_INDEX, r.sec, &sh->id, r.m.v);
	/* the unchanged values live in the document under the old id */
	if (r.m.toast.p != NULL && add_toast(&sh->op, r.sec, r.m.toast)) {
		/* the count of documents left incomplete is per table */
		msg_op_rel(&sh->op, r.relname, strlen(r.relname));
		if (pk_changed)
			msg_op_toast_id(&sh->op, sh->old_id.buf,
			    sh->old_id.len);
	}
	msg_op_doc(&sh->op);
	add_document(&sh->op, r.sec, r.m.new);
	op_end(sh, out);

	if (pk_changed) {
		remember_delete(sh, r.sec, &sh->old_id, r.m.v);
		op_begin(&sh->op, MSG_DELETE, r.sec, &sh->old_id, r.m.v);
		op_end(sh, out);
	}
	return 0;
}

/* a clear for each truncated table that has a section; the config gives
 * every section an index of its own, so no index is cleared twice */
static int
shape_truncate(struct shaper *sh, struct jspan obj, struct sbuf *out,
    char *err, size_t errlen)
{
	struct jspan rels, rel;
	struct jiter it;
	const struct sync_section *sec;
	char name[REL_BUF];
	uint64_t v;

	if (msg_read_truncate(obj, &rels, &v, err, errlen) == -1)
		return -1;

	jiter_init(&it, rels);
	while (jiter_elem(&it, &rel)) {
		sec = find_section(sh->cfg, rel, name, sizeof(name));
		if (sec == NULL)
			continue;
		tomb_clear(&sh->tombs, sec->index, strlen(sec->index), v);
		op_begin(&sh->op, MSG_CLEAR, sec, NULL, v);
		op_end(sh, out);
	}
	return 0;
}

/* "'a', 'b'" for a drift list; absent means none */
static int
add_names(struct sbuf *msg, struct jspan obj, const char *member,
    const char *label)
{
	struct jspan list, name;
	struct jiter it;
	char *s;
	int first = 1;

	if (!jobj_get(obj, member, &list))
		return 0;
	if (jspan_type(list) != J_ARRAY)
		return -1;
	jiter_init(&it, list);
	while (jiter_elem(&it, &name)) {
		if (jspan_type(name) != J_STRING)
			return -1;
		if (first)
			sbuf_addf(msg, "%s %s", msg->len ? ";" : ":", label);
		else
			sbuf_addc(msg, ',');
		first = 0;
		s = jstr_dup(name);
		sbuf_addf(msg, " '%s'", s);
		free(s);
	}
	return 0;
}

static int
shape_drift(struct shaper *sh, struct jspan obj, char *err, size_t errlen)
{
	struct jspan rel;
	struct sbuf msg = SBUF_INIT;
	char *name;
	int bad;

	if (!jobj_get(obj, "rel", &rel) || jspan_type(rel) != J_STRING) {
		snprintf(err, errlen, "drift has no string \"rel\"");
		return -1;
	}
	bad = add_names(&msg, obj, "added", "added") == -1 ||
	    add_names(&msg, obj, "removed", "removed") == -1 ||
	    add_names(&msg, obj, "retyped", "retyped") == -1;
	if (bad) {
		snprintf(err, errlen, "drift lists hold a non-string");
		sbuf_release(&msg);
		return -1;
	}
	name = jstr_dup(rel);
	kcount_add(&sh->drift, name, strlen(name), 1);
	log_warnx("table '%s' changed shape%s", name,
	    msg.len ? msg.buf : "");
	free(name);
	sbuf_release(&msg);
	return 0;
}

/* commit, pos and mark reach the writer as the bytes that arrived */
static void
forward(struct shaper *sh, struct jspan obj, struct sbuf *out)
{
	frame_put(out, obj.p, obj.n);
	sh->n.ops_out++;
}

int
shape_event(struct shaper *sh, enum shape_source src, struct jspan obj,
    struct jspan kind, struct sbuf *out, char *err, size_t errlen)
{
	size_t before = out->len;
	int rc = 0;

	switch (msg_kind_of(kind)) {
	case MSG_ROW:
		rc = shape_row(sh, src, obj, out, err, errlen);
		break;
	case MSG_MARK:
		/* every copy row of the wave was shaped before its mark, and
		 * the next wave is read only once this mark is durable */
		tomb_forget(&sh->tombs);
		forward(sh, obj, out);
		break;
	case MSG_COMMIT:
	case MSG_POS:
	case MSG_TRUNCATE:
	case MSG_DRIFT:
		/* a position from the loader could move a checkpoint */
		if (src == SHAPE_LOAD) {
			snprintf(err, errlen, "a '%.*s' frame on the load "
			    "stream, which carries copy rows and marks only",
			    (int)kind.n - 2, kind.p + 1);
			rc = -1;
		} else if (msg_kind_of(kind) == MSG_TRUNCATE)
			rc = shape_truncate(sh, obj, out, err, errlen);
		else if (msg_kind_of(kind) == MSG_DRIFT)
			rc = shape_drift(sh, obj, err, errlen);
		else
			forward(sh, obj, out);
		break;
	default:
		snprintf(err, errlen, "unknown event kind '%.*s'",
		    (int)kind.n - 2, kind.p + 1);
		rc = -1;
		break;
	}
	if (rc == -1 && out->len > before) {
		out->len = before;
		out->buf[before] = '\0';
	}
	return rc;
}
