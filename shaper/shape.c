/*
 * shape.c - one event frame in, its operation frames out (framing.md §4 →
 * §5), by the sync sections of the configuration. Owns what a row's change
 * means for its documents: which documents the row has now and had before
 * (one, or one per fan-out element, each where its identity puts it),
 * whether it passes the filter, and so which to write and which to delete,
 * new before old; a truncate's clears; the copy rows the tombstone window
 * drops, and the fills of documents the stream wrote without unchanged
 * values a late copy holds (the TOAST window). What an identity is belongs to id.c, what a document holds to
 * doc.c. This file never reads or writes a file descriptor; it logs only
 * schema drift and skipped truncates.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "log.h"
#include "msg.h"
#include "shaper.h"
#include "where.h"

#define REL_BUF		256	/* "schema.table": two names of at most 64 */

struct row {
	struct msg_row m;
	char	relname[REL_BUF];
	const struct sync_section *sec;
	struct jspan keys;	/* the key: the frame's or the section's */
	enum shape_source src;
	struct view now, was;	/* the new image (then the old), the old */
	int	 have_now, have_was;
};

static void
idl_reset(struct idlist *l)
{
	l->n = 0;
}

/* a new document: its id to fill (and its routing, rt[n - 1]) */
static struct sbuf *
idl_add(struct idlist *l)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->id = xrealloc(l->id, (size_t)l->cap * sizeof(*l->id));
		l->rt = xrealloc(l->rt, (size_t)l->cap * sizeof(*l->rt));
		memset(l->id + l->n, 0, (size_t)(l->cap - l->n) *
		    sizeof(*l->id));
		memset(l->rt + l->n, 0, (size_t)(l->cap - l->n) *
		    sizeof(*l->rt));
	}
	sbuf_reset(&l->id[l->n]);
	sbuf_add(&l->id[l->n], "", 0);
	sbuf_reset(&l->rt[l->n]);
	sbuf_add(&l->rt[l->n], "", 0);
	return &l->id[l->n++];
}

static void
idl_release(struct idlist *l)
{
	int i;

	for (i = 0; i < l->cap; i++) {
		sbuf_release(&l->id[i]);
		sbuf_release(&l->rt[i]);
	}
	free(l->id);
	free(l->rt);
	memset(l, 0, sizeof(*l));
}

/* the index of document id in l, or -1 */
static int
idl_find(const struct idlist *l, const struct sbuf *id)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->id[i].len == id->len && memcmp(l->id[i].buf, id->buf,
		    id->len) == 0)
			return i;
	return -1;
}

/* the routing of document i of ids (of identity d), NULL when none */
static const struct sbuf *
doc_routing(const struct ident *d, const struct idlist *ids, int i)
{
	if (ids->own)
		return &ids->rt[i];
	return d->routed ? &d->routing : NULL;
}

static void
fan_reset(struct fanlist *l)
{
	sbuf_reset(&l->text);
	l->n = 0;
}

static void
fan_add(struct fanlist *l, const char *p, size_t n, int quote)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->end = xrealloc(l->end, (size_t)l->cap * sizeof(*l->end));
	}
	if (quote)
		sbuf_add_jstr(&l->text, p, n);
	else
		sbuf_add(&l->text, p, n);
	l->end[l->n++] = l->text.len;
}

/* element k of l (valid until l changes) */
static struct jspan
fan_elem(const struct fanlist *l, int k)
{
	struct jspan e;
	size_t start = k > 0 ? l->end[k - 1] : 0;

	e.p = l->text.buf + start;
	e.n = l->end[k] - start;
	return e;
}

static void
fan_release(struct fanlist *l)
{
	sbuf_release(&l->text);
	free(l->end);
	memset(l, 0, sizeof(*l));
}

/*
 * The elements of a fan-out column's value: a JSON array's, or with
 * fan_out.by a text's, cut at each delimiter, trimmed, the empty ones
 * dropped (each a JSON string); NULL has none, any other value is one.
 */
static void
fan_elements(const struct sync_section *sec, struct jspan val,
    struct fanlist *l)
{
	const char *by = sync_more(sec)->fan_out.by, *p, *end, *hit, *a, *b;
	struct jiter it;
	struct jspan el;
	char *heap = NULL;
	size_t n;

	fan_reset(l);
	if (jspan_type(val) == J_NULL)
		return;
	if (jspan_type(val) == J_ARRAY) {
		jiter_init(&it, val);
		while (jiter_elem(&it, &el))
			fan_add(l, el.p, el.n, 0);
		return;
	}
	if (by == NULL || jspan_type(val) != J_STRING) {
		fan_add(l, val.p, val.n, 0);
		return;
	}
	p = jstr_text(val, &n, &heap);
	for (end = p + n; p <= end; p = hit + strlen(by)) {
		if ((hit = memmem(p, (size_t)(end - p), by, strlen(by))) ==
		    NULL)
			hit = end;
		for (a = p; a < hit && isspace((unsigned char)*a); a++)
			;
		for (b = hit; b > a && isspace((unsigned char)b[-1]); b--)
			;
		if (b > a)
			fan_add(l, a, (size_t)(b - a), 1);
		if (hit == end)
			break;
	}
	free(heap);
}

/* a section's primary_key as the JSON array a row's "key" is */
static char *
key_json(const struct sync_section *sec)
{
	const struct sync_more *more = sync_more(sec);
	struct sbuf j = SBUF_INIT;
	int i;

	sbuf_addc(&j, '[');
	for (i = 0; i < more->nprimary_key; i++) {
		if (i > 0)
			sbuf_addc(&j, ',');
		sbuf_add_jstr(&j, more->primary_key[i],
		    strlen(more->primary_key[i]));
	}
	sbuf_addc(&j, ']');
	return j.buf;
}

void
shaper_init(struct shaper *sh, const struct config *cfg)
{
	int i;

	memset(sh, 0, sizeof(*sh));
	sh->cfg = cfg;
	tomb_init(&sh->tombs);
	tw_init(&sh->toasts);
	/* until told otherwise, copies may come */
	sh->loading = 1;
	sbuf_init(&sh->fields);
	ident_init(&sh->now);
	ident_init(&sh->was);
	sbuf_init(&sh->parent);
	sh->opin.room = 0;
	sh->key_json = xcalloc((size_t)cfg->nsyncs + 1, sizeof(char *));
	for (i = 0; i < cfg->nsyncs; i++)
		if (sync_more(&cfg->syncs[i])->primary_key != NULL)
			sh->key_json[i] = key_json(&cfg->syncs[i]);
}

void
shaper_release(struct shaper *sh)
{
	int i;

	kcount_release(&sh->drift);
	kcount_release(&sh->truncates_skipped);
	kcount_release(&sh->unconverted);
	kcount_release(&sh->lookup_misses);
	tomb_release(&sh->tombs);
	tw_release(&sh->toasts);
	sbuf_release(&sh->fields);
	ident_release(&sh->now);
	ident_release(&sh->was);
	idl_release(&sh->now_ids);
	idl_release(&sh->was_ids);
	fan_release(&sh->now_el);
	fan_release(&sh->was_el);
	sbuf_release(&sh->parent);
	msg_ophead_release(&sh->ophead);
	for (i = 0; sh->cfg && i < sh->cfg->nsyncs; i++)
		free(sh->key_json[i]);
	free(sh->key_json);
}

void
shaper_load(struct shaper *sh, int open)
{
	sh->loading = open;
	/* no copy will come: what the windows hold is of no use */
	if (!open) {
		tomb_forget(&sh->tombs);
		tw_release(&sh->toasts);
	}
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

/* find_section for a row's rel: the answer for the last rel when these
 * are its bytes (a section is a configuration's, and the shaper's
 * configuration never changes under it) */
static const struct sync_section *
row_section(struct shaper *sh, struct jspan rel, char *buf, size_t cap)
{
	struct relmemo *m = &sh->lastrel;
	const struct sync_section *sec;
	size_t len;

	if (rel.n == m->rawn && memcmp(rel.p, m->raw, rel.n) == 0 &&
	    m->namelen < cap) {
		memcpy(buf, m->name, m->namelen + 1);
		return m->sec;
	}
	sec = find_section(sh->cfg, rel, buf, cap);
	len = strlen(buf);
	/* a name that did not fit buf was looked up whole, not memoised */
	if (rel.n <= sizeof(m->raw) && len + 1 < cap &&
	    len < sizeof(m->name)) {
		memcpy(m->raw, rel.p, rel.n);
		m->rawn = rel.n;
		memcpy(m->name, buf, len + 1);
		m->namelen = len;
		m->sec = sec;
	} else
		m->rawn = 0;
	return sec;
}

static int
row_fail(const struct row *r, const char *which, const char *why, char *err,
    size_t errlen)
{
	snprintf(err, errlen, "table '%s': row op '%c': %s in \"%s\"",
	    r->relname, r->m.op, why, which);
	return -1;
}

static const char *
buf_of(const struct sbuf *b)
{
	return b->buf ? b->buf : "";
}

/* kind, index, id, v and routing of an operation on document i of ids
 * (of identity d) */
static void
op_begin(struct shaper *sh, struct sbuf *out, enum msg_kind kind,
    const struct ident *d, const struct idlist *ids, int i, uint64_t v)
{
	const struct sbuf *rt = doc_routing(d, ids, i);

	msg_op_begin_memo(out, &sh->opin, &sh->ophead, kind, buf_of(&d->index),
	    d->index.len, buf_of(&ids->id[i]), ids->id[i].len, v);
	if (rt != NULL)
		msg_op_routing(out, buf_of(rt), rt->len);
}

static void
op_end(struct shaper *sh, struct sbuf *out)
{
	msg_end_in(out, &sh->opin);
	sh->n.ops_out++;
}

/*
 * The ids of the documents of one version of a row: its id, or one per
 * element of a fan-out column (kept in els for the index ops). An element
 * id renders from the merged row: the element (its members, or itself
 * under the element name), then the row without the array. A join child
 * whose elements name their parents routes each to its own.
 */
static int
doc_ids(struct shaper *sh, struct row *r, const struct view *v,
    const struct ident *d, struct idlist *ids, struct fanlist *els,
    const char *which, char *err, size_t errlen)
{
	const struct sync_section *sec = r->sec;
	const struct sync_more *more = sync_more(sec);
	struct view m = *v;
	struct jspan arr;
	struct sbuf *id;
	char why[512];
	int k;

	idl_reset(ids);
	ids->own = sec->has_join && more->join.by_element;
	if (!sec->has_fan_out) {
		sbuf_add(idl_add(ids), buf_of(&d->id), d->id.len);
		return 0;
	}
	if (!view_get(v, more->fan_out.column, &arr)) {
		snprintf(why, sizeof(why), "fan_out column '%s' is missing",
		    more->fan_out.column);
		return row_fail(r, which, why, err, errlen);
	}
	fan_elements(sec, arr, els);
	m.elem_name = more->fan_out.element;
	m.skip = more->fan_out.column;
	for (k = 0; k < els->n; k++) {
		m.elem = fan_elem(els, k);
		id = idl_add(ids);
		if (ids->own && id_parent_of(sh->cfg, sec, m.elem,
		    &ids->rt[ids->n - 1], why, sizeof(why)) == -1)
			return row_fail(r, which, why, err, errlen);
		if (id_template(&more->fan_out.id_t, &m, id, why,
		    sizeof(why)) == -1) {
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
			    " (fan_out id)");
			return row_fail(r, which, why, err, errlen);
		}
	}
	return 0;
}

/* a document of identity d (its id one of d's documents') for the TOAST
 * window */
static struct twdoc
twdoc_of(const struct ident *d, const struct idlist *ids, int i)
{
	const struct sbuf *rt = doc_routing(d, ids, i);
	struct twdoc t;

	t.index = buf_of(&d->index);
	t.ilen = d->index.len;
	t.id = buf_of(&ids->id[i]);
	t.idlen = ids->id[i].len;
	t.routing = rt ? buf_of(rt) : NULL;
	t.rlen = rt ? rt->len : 0;
	return t;
}

/* a stream delete: the window remembers it until a load mark after a
 * wave newer than it (only while copies may still come); a chain of
 * unchanged values ending in the document ends */
static void
remember_delete(struct shaper *sh, const struct ident *d,
    const struct idlist *ids, int i, uint64_t v, int ends_chain)
{
	struct twdoc t = twdoc_of(d, ids, i);

	if (!sh->loading)
		return;
	tomb_delete(&sh->tombs, buf_of(&d->index), d->index.len,
	    buf_of(&ids->id[i]), ids->id[i].len, v);
	if (ends_chain)
		tw_gone(&sh->toasts, &t);
}

/* a join parent's children go with it: a barrier the writer runs as a
 * search for them and a delete of each */
static void
cascade(struct shaper *sh, const struct row *r, const struct ident *d,
    const struct sbuf *id, struct sbuf *out)
{
	const struct sync_join *j = &sync_more(r->sec)->join;
	int i;

	msg_op_begin_in(out, &sh->opin, MSG_CASCADE, buf_of(&d->index),
	    d->index.len, buf_of(id), id->len, r->m.v);
	msg_list_begin(out, ML_CHILDREN);
	for (i = 0; i < j->nchildren; i++)
		msg_list_item(out, j->children[i],
		    strlen(j->children[i]));
	msg_list_end(out);
	op_end(sh, out);
}

static int
same_buf(const struct sbuf *a, const struct sbuf *b)
{
	return a->len == b->len && (a->len == 0 ||
	    memcmp(a->buf, b->buf, a->len) == 0);
}

/* two routings (NULL: none) alike? */
static int
same_routing(const struct sbuf *a, const struct sbuf *b)
{
	return (a == NULL) == (b == NULL) && (a == NULL || same_buf(a, b));
}

/*
 * When a row's documents are deleted relative to where they are now:
 * DEL_ALL every one; DEL_AFTER (behind the index ops) those no longer
 * there; DEL_BEFORE those still in the same index under the same id but
 * routed elsewhere. A routing is not part of a document's identity to the
 * target: both routings may lead to one shard, where a delete behind the
 * write would remove the document just written. Such a move deletes first.
 */
enum del_when { DEL_ALL, DEL_BEFORE, DEL_AFTER };

/* does when select document i of ids (of identity d)? */
static int
selected(const struct shaper *sh, const struct ident *d,
    const struct idlist *ids, int i, enum del_when when)
{
	const struct ident *now = &sh->now;
	int j, stays, rerouted;

	j = when != DEL_ALL && same_buf(&d->index, &now->index) ?
	    idl_find(&sh->now_ids, &ids->id[i]) : -1;
	stays = j >= 0;
	rerouted = stays && !same_routing(doc_routing(d, ids, i),
	    doc_routing(now, &sh->now_ids, j));
	return !((when == DEL_BEFORE && !rerouted) ||
	    (when == DEL_AFTER && stays));
}

/* delete the documents ids of identity d that when selects */
static void
delete_docs(struct shaper *sh, const struct row *r, const struct ident *d,
    const struct idlist *ids, enum del_when when, struct sbuf *out)
{
	const struct sync_section *sec = r->sec;
	int i;

	for (i = 0; i < ids->n; i++) {
		if (!selected(sh, d, ids, i, when))
			continue;
		/* a copy that fails the filter costs a not-found delete,
		 * but it is no removal the stream made. A document only
		 * routed elsewhere is remembered after its index op
		 * (rerouted()): that op completes its unchanged values
		 * from the document this delete removes */
		if (r->src == SHAPE_STREAM && when != DEL_BEFORE)
			remember_delete(sh, d, ids, i, r->m.v, 1);
		op_begin(sh, out, MSG_DELETE, d, ids, i, r->m.v);
		op_end(sh, out);
		if (sec->has_join && sync_more(sec)->join.parent == NULL)
			cascade(sh, r, d, &ids->id[i], out);
	}
}

/* the stream's removals of the documents a row only routed elsewhere:
 * the tombstone window drops a copy under the old routing, older than
 * this; the document (its index and id) is still the row's, so a chain
 * of unchanged values through it goes on */
static void
rerouted(struct shaper *sh, const struct row *r)
{
	int i;

	if (r->src != SHAPE_STREAM || !r->have_was)
		return;
	for (i = 0; i < sh->was_ids.n; i++)
		if (selected(sh, &sh->was, &sh->was_ids, i, DEL_BEFORE))
			remember_delete(sh, &sh->was, &sh->was_ids, i, r->m.v,
			    0);
}

/* the toast members of an index op whose document may have moved; 1
 * with the list (the raw array) copied into fields when it has one */
static int
toast_members(struct shaper *sh, const struct row *r, struct sbuf *op,
    struct sbuf *fields)
{
	const struct ident *now = &sh->now, *was = &sh->was;
	size_t start = op->len;

	if (r->m.toast.p == NULL || !doc_toast(r->sec, r->m.toast, op))
		return 0;
	/* the member's name holds no '[': the list is the rest */
	sbuf_reset(fields);
	sbuf_add(fields, strchr(op->buf + start, '['),
	    op->len - (size_t)(strchr(op->buf + start, '[') - op->buf));
	/* the count of documents left incomplete is per table */
	msg_op_rel(op, r->relname, strlen(r->relname));
	if (!r->have_was || r->sec->has_fan_out)
		return 1;
	/* the unchanged values live in the document where it was */
	if (!(was->id.len == now->id.len && memcmp(buf_of(&was->id),
	    buf_of(&now->id), now->id.len) == 0))
		msg_op_toast_id(op, buf_of(&was->id), was->id.len);
	if (!(was->index.len == now->index.len && memcmp(buf_of(&was->index),
	    buf_of(&now->index), now->index.len) == 0))
		msg_op_toast_index(op, buf_of(&was->index), was->index.len);
	if (was->routed && !(now->routed && was->routing.len ==
	    now->routing.len && memcmp(buf_of(&was->routing),
	    buf_of(&now->routing), now->routing.len) == 0))
		msg_op_toast_routing(op, buf_of(&was->routing),
		    was->routing.len);
	return 1;
}

/*
 * The stream wrote a row's document: with markers for unchanged values
 * (listed in fields) a chain starts or goes on in the TOAST window, from
 * the document they are completed from to this one; with every value, a
 * chain ending here ends.
 */
static void
note_write(struct shaper *sh, const struct row *r, int i, int marked)
{
	struct twdoc dst = twdoc_of(&sh->now, &sh->now_ids, i), src;
	struct jspan f;
	uint64_t before;

	if (!sh->loading || r->src != SHAPE_STREAM)
		return;
	if (!marked) {
		tw_gone(&sh->toasts, &dst);
		return;
	}
	/* where toast_members says the values live */
	src = r->have_was && !r->sec->has_fan_out ?
	    twdoc_of(&sh->was, &sh->was_ids, 0) : dst;
	before = tomb_removed(&sh->tombs, r->relname, strlen(r->relname),
	    src.index, src.ilen, src.id, src.idlen);
	f.p = sh->fields.buf;
	f.n = sh->fields.len;
	tw_update(&sh->toasts, &src, before, &dst, f, r->m.v);
}

/*
 * A copy of document i holds the unchanged values of the chains whose
 * heads the stream wrote without them: a fill of each head from it, at
 * the version of the head's last write, which the writer applies only to
 * a head still lacking a field (framing.md §5). Sent before the copy's
 * own index op, so that the writer completes the fill from the head's
 * last write and not from the copy. The chain ends: a later update is
 * completed from the filled head.
 */
static void
fill_heads(struct shaper *sh, struct row *r, int i, const struct view *m,
    const char *parent, struct sbuf *out)
{
	struct twdoc d = twdoc_of(&sh->now, &sh->now_ids, i);
	const struct tw_chain *c;
	struct jspan list, name;
	struct jiter it;
	char *plain;
	int chains[8], n, k;

	n = tw_match(&sh->toasts, &d, r->m.v, chains, 8);
	for (k = 0; k < n; k++) {
		c = &sh->toasts.chain[chains[k]];
		msg_op_begin_in(out, &sh->opin, MSG_FILL, c->index,
		    strlen(c->index), c->id, strlen(c->id), c->last_v);
		if (c->routing)
			msg_op_routing(out, c->routing, strlen(c->routing));
		if (sync_more(r->sec)->pipeline)
			msg_op_pipeline(out, sync_more(r->sec)->pipeline,
			    strlen(sync_more(r->sec)->pipeline));
		msg_list_begin(out, ML_TOAST);
		list.p = c->fields;
		list.n = strlen(c->fields);
		jiter_init(&it, list);
		while (jiter_elem(&it, &name) == 1) {
			plain = jstr_dup(name);
			msg_list_item(out, plain, strlen(plain));
			free(plain);
		}
		msg_list_end(out);
		msg_op_rel(out, r->relname, strlen(r->relname));
		msg_op_doc(out);
		doc_build(sh, r->sec, m, parent, out, r->relname);
		op_end(sh, out);
		tw_end(&sh->toasts, chains[k]);
	}
}

/* the index ops of the row's documents now; copies the stream removed
 * since the last mark are dropped */
static void
index_docs(struct shaper *sh, struct row *r, struct sbuf *out)
{
	const struct sync_section *sec = r->sec;
	const struct sync_more *more = sync_more(sec);
	const char *parent = NULL;
	struct view m = r->now;
	int i, marked;

	if (sec->has_join && more->join.parent != NULL && !sh->now_ids.own) {
		/* the routing is the parent's id (id_ident) */
		sbuf_reset(&sh->parent);
		sbuf_add(&sh->parent, buf_of(&sh->now.routing),
		    sh->now.routing.len);
		sbuf_add(&sh->parent, "", 0);
		parent = sh->parent.buf;
	}
	if (sec->has_fan_out) {
		m.elem_name = more->fan_out.element;
		m.skip = more->fan_out.column;
	}
	for (i = 0; i < sh->now_ids.n; i++) {
		if (sec->has_fan_out)
			m.elem = fan_elem(&sh->now_el, i);
		/* each element's parent is its own routing (doc_ids) */
		if (sh->now_ids.own)
			parent = buf_of(&sh->now_ids.rt[i]);
		if (r->src == SHAPE_LOAD) {
			fill_heads(sh, r, i, &m, parent, out);
			if (tomb_drops(&sh->tombs, r->relname,
			    strlen(r->relname), buf_of(&sh->now.index),
			    sh->now.index.len, buf_of(&sh->now_ids.id[i]),
			    sh->now_ids.id[i].len, r->m.v)) {
				sh->n.copies_dropped++;
				continue;
			}
		}
		op_begin(sh, out, MSG_INDEX, &sh->now, &sh->now_ids, i,
		    r->m.v);
		if (more->pipeline)
			msg_op_pipeline(out, more->pipeline,
			    strlen(more->pipeline));
		marked = toast_members(sh, r, out, &sh->fields);
		msg_op_doc(out);
		doc_build(sh, sec, &m, parent, out, r->relname);
		op_end(sh, out);
		if (r->src == SHAPE_STREAM && sh->loading) {
			tomb_write(&sh->tombs, buf_of(&sh->now.index),
			    sh->now.index.len, buf_of(&sh->now_ids.id[i]),
			    sh->now_ids.id[i].len, r->m.v);
			note_write(sh, r, i, marked);
		}
	}
}

static int
where_get(void *arg, const char *name, struct jspan *val)
{
	return view_get(arg, name, val);
}

static int
read_row(struct shaper *sh, enum shape_source src, struct jspan obj,
    const struct jtop *top, struct row *r, char *err, size_t errlen)
{
	const struct sync_section *sec;
	char op;

	memset(r, 0, sizeof(*r));
	if (msg_read_row(obj, top, &r->m, err, errlen) == -1)
		return -1;
	op = r->m.op;
	r->src = src;
	if (src == SHAPE_LOAD && op != 'c') {
		snprintf(err, errlen, "row op '%c' on the load stream, which "
		    "carries copy rows only", op);
		return -1;
	}
	sh->n.rows_in++;
	if (src == SHAPE_LOAD && r->m.v > sh->wave_v)
		sh->wave_v = r->m.v;
	sec = r->sec = row_section(sh, r->m.rel, r->relname,
	    sizeof(r->relname));
	if (sec == NULL)
		return 0;
	if (op != 'd' && r->m.new.p == NULL) {
		snprintf(err, errlen, "table '%s': row op '%c' has no \"new\"",
		    r->relname, op);
		return -1;
	}
	if (op == 'd' && r->m.old.p == NULL) {
		snprintf(err, errlen, "table '%s': row op 'd' has no \"old\"",
		    r->relname);
		return -1;
	}
	/* nothing says which document an update or delete of a row filed
	 * by its content addresses: halted on, not missed */
	if (sec->append_only && (op == 'u' || op == 'd')) {
		snprintf(err, errlen, "table '%s' is append_only, and an %s "
		    "arrived: a row filed by its content cannot be found again "
		    "(make the table insert-only, or give it a key and drop "
		    "append_only)", r->relname, op == 'u' ? "UPDATE" :
		    "DELETE");
		return -1;
	}
	r->keys = r->m.key;
	if (sh->key_json[sec - sh->cfg->syncs] != NULL) {
		r->keys.p = sh->key_json[sec - sh->cfg->syncs];
		r->keys.n = strlen(r->keys.p);
	}
	/* the new image reads the old one for an unchanged TOAST value
	 * it lacks; the old image stands alone */
	r->now.img = r->m.new;
	r->now.fallback = r->m.old;
	r->was.img = r->m.old;
	r->have_now = op != 'd';
	r->have_was = r->m.old.p != NULL;
	return 0;
}

static int
shape_row(struct shaper *sh, enum shape_source src, struct jspan obj,
    const struct jtop *top, struct sbuf *out, char *err, size_t errlen)
{
	struct row r;
	char why[768];
	int match;

	if (read_row(sh, src, obj, top, &r, err, errlen) == -1)
		return -1;
	if (r.sec == NULL) {
		sh->n.rows_unmapped++;
		return 0;
	}
	if (r.have_now) {
		if (id_ident(sh->cfg, r.sec, &r.now, r.keys, &sh->now, why,
		    sizeof(why)) == -1)
			return row_fail(&r, "new", why, err, errlen);
		if (doc_ids(sh, &r, &r.now, &sh->now, &sh->now_ids,
		    &sh->now_el, "new", err, errlen) == -1)
			return -1;
	}
	if (r.have_was) {
		if (id_ident(sh->cfg, r.sec, &r.was, r.keys, &sh->was, why,
		    sizeof(why)) == -1)
			return row_fail(&r, "old", why, err, errlen);
		if (doc_ids(sh, &r, &r.was, &sh->was, &sh->was_ids,
		    &sh->was_el, "old", err, errlen) == -1)
			return -1;
	}

	if (r.m.op == 'd') {
		delete_docs(sh, &r, &sh->was, &sh->was_ids, DEL_ALL, out);
		return 0;
	}
	match = sync_more(r.sec)->where_expr == NULL ||
	    where_match(sync_more(r.sec)->where_expr, where_get, &r.now);
	if (!match) {
		/* wherever the row's documents were, they go; an insert
		 * that never matched costs one not-found delete */
		if (r.have_was)
			delete_docs(sh, &r, &sh->was, &sh->was_ids, DEL_ALL,
			    out);
		else
			delete_docs(sh, &r, &sh->now, &sh->now_ids, DEL_ALL,
			    out);
		return 0;
	}
	/* the new documents exist before the old ones go, so a reader
	 * never finds the row under neither; a document only routed
	 * elsewhere is the exception (delete_docs) */
	if (r.have_was)
		delete_docs(sh, &r, &sh->was, &sh->was_ids, DEL_BEFORE, out);
	index_docs(sh, &r, out);
	rerouted(sh, &r);
	if (r.have_was)
		delete_docs(sh, &r, &sh->was, &sh->was_ids, DEL_AFTER, out);
	return 0;
}

/*
 * A clear for each truncated table that has a section: of its index, of
 * every index its template claims, or of its half of a join. An index
 * other tables share is not cleared: that would wipe rows the source
 * never truncated, and halting would meet the same truncate at every
 * restart. It is skipped, said and counted.
 */
static int
shape_truncate(struct shaper *sh, struct jspan obj, struct sbuf *out,
    char *err, size_t errlen)
{
	struct jspan rels, rel;
	struct jiter it;
	const struct sync_section *sec;
	const char *index;
	char name[REL_BUF];
	uint64_t v;

	if (msg_read_truncate(obj, &rels, &v, err, errlen) == -1)
		return -1;

	jiter_init(&it, rels);
	while (jiter_elem(&it, &rel)) {
		sec = find_section(sh->cfg, rel, name, sizeof(name));
		if (sec == NULL)
			continue;
		if (sec->shared && !sec->has_join) {
			log_warnx("table '%s' was truncated, but index '%s' "
			    "holds other tables' documents too: it is not "
			    "cleared, and this table's documents stay until "
			    "removed by hand", name, sec->index);
			kcount_add(&sh->truncates_skipped, name, strlen(name),
			    1);
			continue;
		}
		if (sh->loading)
			tomb_clear(&sh->tombs, name, strlen(name), v);
		index = sec->index_templated ? sec->index_glob : sec->index;
		msg_op_begin_in(out, &sh->opin, MSG_CLEAR, index, strlen(index),
		    NULL, 0, v);
		if (sec->has_join)
			msg_op_clear_term(out, sec->more->join.field,
			    strlen(sec->more->join.field),
			    sec->more->join.name,
			    strlen(sec->more->join.name));
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

/*
 * A replay of a tap's file reached a place where the tap dropped frames:
 * what follows is not the stream, and shaping on would write it as if it
 * were (a delete in the gap, and its document comes back). So the shaper
 * stops here, with an error, after writing the gap on: whatever reads its
 * output (the writer) stops at the same place.
 */
static int
shape_gap(struct shaper *sh, struct jspan obj, struct jspan kind,
    struct sbuf *out, char *err, size_t errlen)
{
	struct frame f = { .obj = obj, .kind = kind };
	struct msg_gap g;

	if (msg_read_gap(&f, &g, err, errlen) == -1)
		return -1;
	forward(sh, obj, out);
	msg_gap_describe(&g, err, errlen);
	return -1;
}

int
shape_event(struct shaper *sh, enum shape_source src, struct jspan obj,
    struct jspan kind, const struct jtop *top, struct sbuf *out, char *err,
    size_t errlen)
{
	size_t before = out->len;
	int rc = 0;

	switch (msg_kind_of(kind)) {
	case MSG_ROW:
		rc = shape_row(sh, src, obj, top, out, err, errlen);
		break;
	case MSG_MARK:
		/* every copy row of the wave was shaped before its mark, and
		 * the next wave's copies carry a position read after this
		 * mark was written: removals at or below this wave's version
		 * cannot outdate them. Newer ones stay, for the next wave may
		 * already be read while this mark is being stored. A wave
		 * without rows says nothing about versions: nothing goes. */
		if (sh->wave_v > 0) {
			tomb_forget_upto(&sh->tombs, sh->wave_v);
			tw_forget_upto(&sh->toasts, sh->wave_v);
		}
		sh->wave_v = 0;
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
	case MSG_GAP:
		rc = shape_gap(sh, obj, kind, out, err, errlen);
		/* the gap itself stays in the output */
		before = out->len;
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
