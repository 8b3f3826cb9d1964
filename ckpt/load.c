/*
 * load.c - what the initial load leaves in the target besides documents:
 * one progress document per table among the target's state documents
 * (<stream id>/load/<table>), separate from the checkpoint, and the index
 * settings a load suspends, through the target module's operations. A checkpoint alone never says a load finished: a table with no
 * progress document, or one not marked done, is loaded (again).
 *
 * Refresh and replicas cost the target work on every write and buy
 * nothing while an index is being filled, so they are suspended for the
 * load and restored at its end. The originals are recorded in the progress
 * document before the first suspension, so an interrupted load that is
 * resumed suspends again without ever reading its own -1 as the original,
 * and the restore of a load that ended without one happens at the next
 * start. An index several sections write is one suspension for all of
 * them: it is restored only when the last of them is done, or the sections
 * still loading would write into an index refreshing on every second.
 *
 * The progress object is the loader's and the settings object the target
 * module's: both stored and handed back unread. Never exits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "log.h"
#include "p2o.h"

/* a table's progress document as read */
struct ldoc {
	struct sbuf doc;	/* owns the bytes the spans point into */
	int	 found;
	int	 done, restored;
	struct jspan progress;	/* p NULL when absent */
	struct jspan settings;	/* the originals; p NULL when not recorded */
	struct jspan index;	/* the index the progress was written to */
};

static void
ldoc_release(struct ldoc *d)
{
	sbuf_release(&d->doc);
	memset(d, 0, sizeof(*d));
}

/* the key suffix of a table's progress document */
static void
doc_suffix(const char *table, struct sbuf *suffix)
{
	sbuf_reset(suffix);
	sbuf_addf(suffix, "/load/%s", table);
}

static int
bool_member(struct jspan obj, const char *name)
{
	struct jspan v;

	return jobj_get(obj, name, &v) && jspan_type(v) == J_TRUE;
}

/* d->doc, as read, into its members */
static void
ldoc_parse(struct ldoc *d)
{
	struct jspan src;

	src.p = d->doc.buf;
	src.n = d->doc.len;
	d->done = bool_member(src, "done");
	d->restored = bool_member(src, "restored");
	if (jobj_get(src, "progress", &d->progress) &&
	    jspan_type(d->progress) != J_OBJECT)
		d->progress.p = NULL;
	if (jobj_get(src, "settings", &d->settings) &&
	    jspan_type(d->settings) != J_OBJECT)
		d->settings.p = NULL;
	if (jobj_get(src, "index", &d->index) &&
	    jspan_type(d->index) != J_STRING)
		d->index.p = NULL;
}

/*
 * Progress documents held at once where they need not all be: the end of
 * a shared index's load and a forget read and write this many at a time.
 * At 10,000 tables one read held every document beside the writes made of
 * them (ckpt's PSS peaked at 19.8 MB at the end of the load).
 */
#define DOCS_SLICE	512

/*
 * The progress documents of the sections in pick (NULL: every one) into
 * d[] (cf->nsyncs of them, zeroed first), in as few reads as the target
 * takes.
 */
static int
get_docs(struct ckpt_store *st, const struct config *cf, const char *what,
    const int *pick, struct ldoc *d)
{
	struct sbuf *suffix, *docs;
	const char **sfx;
	int *found, *which, i, n = 0, rc;

	suffix = xcalloc((size_t)cf->nsyncs + 1, sizeof(*suffix));
	docs = xcalloc((size_t)cf->nsyncs + 1, sizeof(*docs));
	sfx = xcalloc((size_t)cf->nsyncs + 1, sizeof(*sfx));
	found = xcalloc((size_t)cf->nsyncs + 1, sizeof(*found));
	which = xcalloc((size_t)cf->nsyncs + 1, sizeof(*which));
	for (i = 0; i < cf->nsyncs; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		if (pick != NULL && !pick[i])
			continue;
		sbuf_init(&suffix[n]);
		doc_suffix(cf->syncs[i].rel, &suffix[n]);
		sfx[n] = suffix[n].buf;
		sbuf_init(&docs[n]);
		which[n++] = i;
	}
	rc = ckpt_docs_get(st, sfx, n, what, docs, found);
	for (i = 0; i < n; i++) {
		/* the buffer moves to its document, which owns it */
		d[which[i]].doc = docs[i];
		d[which[i]].found = rc == 0 && found[i];
		if (d[which[i]].found)
			ldoc_parse(&d[which[i]]);
		sbuf_release(&suffix[i]);
	}
	free(suffix);
	free(docs);
	free(sfx);
	free(found);
	free(which);
	return rc;
}

static const struct target_ops *
ops_of(const struct ckpt_store *st)
{
	return st->conn.mod->ops;
}

/* 1 the index exists, 0 it does not, -1 failed */
static int
index_exists(struct ckpt_store *st, const char *index)
{
	int rc = ops_of(st)->index_exists(&st->conn, index, &st->err);

	if (rc == -1)
		p2o_err_prefix(&st->err, "checking index '%s'", index);
	return rc;
}

/* a table's progress document, appended to the writes in w */
struct writes {
	struct sbuf *suffix, *body;
	int	 n, cap;
};

static void
writes_release(struct writes *w)
{
	int i;

	for (i = 0; i < w->n; i++) {
		sbuf_release(&w->suffix[i]);
		sbuf_release(&w->body[i]);
	}
	free(w->suffix);
	free(w->body);
	memset(w, 0, sizeof(*w));
}

static void
add_doc(struct ckpt_store *st, struct writes *w, const char *table,
    const char *index, struct jspan progress, struct jspan settings,
    int done, int restored)
{
	struct sbuf *body;
	char when[40];

	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 8;
		w->suffix = xrealloc(w->suffix, (size_t)w->cap *
		    sizeof(*w->suffix));
		w->body = xrealloc(w->body, (size_t)w->cap * sizeof(*w->body));
	}
	sbuf_init(&w->suffix[w->n]);
	doc_suffix(table, &w->suffix[w->n]);
	body = &w->body[w->n];
	sbuf_init(body);
	w->n++;
	ckpt_iso_now(when, sizeof(when));
	sbuf_addc(body, '{');
	ckpt_bindings(st, body);
	sbuf_adds(body, ",\"kind\":\"load\",\"table\":");
	sbuf_add_jstr(body, table, strlen(table));
	sbuf_adds(body, ",\"index\":");
	sbuf_add_jstr(body, index, strlen(index));
	if (progress.p != NULL) {
		sbuf_adds(body, ",\"progress\":");
		sbuf_add(body, progress.p, progress.n);
	}
	if (settings.p != NULL) {
		sbuf_adds(body, ",\"settings\":");
		sbuf_add(body, settings.p, settings.n);
	}
	sbuf_addf(body, ",\"done\":%s,\"restored\":%s,\"updated_at\":\"%s\"}",
	    done ? "true" : "false", restored ? "true" : "false", when);
}

/* every write of w, in as few requests as the target takes */
static int
put_docs(struct ckpt_store *st, struct writes *w, const char *what)
{
	const char **sfx;
	int i, rc;

	if (w->n == 0)
		return 0;
	sfx = xcalloc((size_t)w->n, sizeof(*sfx));
	for (i = 0; i < w->n; i++)
		sfx[i] = w->suffix[i].buf;
	rc = ckpt_docs_put(st, sfx, w->body, w->n, what);
	free(sfx);
	return rc;
}

/* the index, created as the writer creates it at its first use
 * (config_index_body: one place for both); one that exists is fine */
static int
create_index(struct ckpt_store *st, const struct config *cf,
    const char *index, const char *what)
{
	int created;

	if (ops_of(st)->index_create(&st->conn, index,
	    config_index_body(cf, index), &created, &st->err) == -1)
		return p2o_err_prefix(&st->err, "%s", what);
	if (created)
		log_info("created index '%s' for the initial load", index);
	return 0;
}

/* the settings a load suspends, as the index has them now (the target's
 * object, stored and handed back unread); the index is created when it
 * does not exist yet, with the body the writer would create it with */
static int
read_originals(struct ckpt_store *st, const struct config *cf,
    const char *index, struct sbuf *out)
{
	char what[400];
	int attempt, found = 0;

	snprintf(what, sizeof(what), "reading the settings of index '%s'",
	    index);
	for (attempt = 0; attempt < 2 && !found; attempt++) {
		if (ops_of(st)->load_settings(&st->conn, index, out, &found,
		    &st->err) == -1)
			return p2o_err_prefix(&st->err, "%s", what);
		/* an alias is made with its index beforehand: one created
		 * here would take the alias's name */
		if (!found && cf->target_require_alias)
			return p2o_fail(&st->err, P2O_EXIT_REFUSED, "%s: there "
			    "is no index or alias '%s', and target."
			    "require_alias writes only through an alias that "
			    "exists: create an index and the alias naming it "
			    "(pg2osync reindex builds both)", what, index);
		if (!found && create_index(st, cf, index, what) == -1)
			return -1;
	}
	if (!found)
		return p2o_fail(&st->err, P2O_EXIT_TEMPFAIL, "%s: the index is "
		    "not there after its creation", what);
	return 0;
}

static int
suspend(struct ckpt_store *st, const struct config *cf, const char *index)
{
	char what[400];

	snprintf(what, sizeof(what), "suspending refresh and replicas on '%s'",
	    index);
	/* an index deleted since its originals were recorded is created
	 * again, or the load would wait for it for ever; an alias is never
	 * ours to create (target.require_alias) */
	if (!cf->target_require_alias && create_index(st, cf, index,
	    what) == -1)
		return -1;
	if (ops_of(st)->load_suspend(&st->conn, index, &st->err) == -1)
		return p2o_err_prefix(&st->err, "%s", what);
	return 0;
}

static int
restore(struct ckpt_store *st, const char *index, struct jspan originals)
{
	if (ops_of(st)->load_restore(&st->conn, index, originals,
	    &st->err) == -1)
		return p2o_err_prefix(&st->err, "restoring refresh and "
		    "replicas on '%s'", index);
	log_info("restored the refresh interval and replicas of index '%s' "
	    "after its load", index);
	return 0;
}

/* sections i and j write the one index a load suspends */
static int
same_index(const struct config *cf, int i, int j)
{
	const struct sync_section *a = &cf->syncs[i], *b = &cf->syncs[j];

	return !a->index_templated && !b->index_templated &&
	    (a == b || (a->shared && strcmp(a->index, b->index) == 0));
}

/* the first section of i's index (the one a group is handled at) */
static int
group_first(const struct config *cf, int i)
{
	int j;

	for (j = 0; j < i && cf->syncs[i].shared; j++)
		if (same_index(cf, i, j))
			return j;
	return i;
}

void
ckpt_load_release(struct ckpt_store *st)
{
	int i;

	for (i = 0; i < st->nplan; i++)
		free(st->originals[i]);
	free(st->originals);
	free(st->loading);
	free(st->group);
	free(st->left);
	st->originals = NULL;
	st->loading = NULL;
	st->group = NULL;
	st->left = NULL;
	st->nplan = 0;
}

/* what the plan leaves to do, kept so that a mark needs no read: which
 * sections are still loading, and the originals of each */
static void
remember(struct ckpt_store *st, const struct config *cf, const int *loading,
    const struct jspan *orig, const int *first)
{
	int i;

	ckpt_load_release(st);
	st->nplan = cf->nsyncs;
	st->loading = xcalloc((size_t)cf->nsyncs + 1, sizeof(*st->loading));
	st->group = xcalloc((size_t)cf->nsyncs + 1, sizeof(*st->group));
	st->left = xcalloc((size_t)cf->nsyncs + 1, sizeof(*st->left));
	st->originals = xcalloc((size_t)cf->nsyncs + 1,
	    sizeof(*st->originals));
	for (i = 0; i < cf->nsyncs; i++) {
		st->loading[i] = loading[i];
		st->group[i] = first[i];
		st->left[first[i]] += loading[i] != 0;
		if (orig[i].p != NULL)
			st->originals[i] = xstrndup(orig[i].p, orig[i].n);
	}
}

/* section i's load is done, as far as the plan's bookkeeping goes */
static void
plan_done(struct ckpt_store *st, int i)
{
	if (st->nplan == 0 || !st->loading[i])
		return;
	st->loading[i] = 0;
	st->left[st->group[i]]--;
}

/* from the plan: whether no section but i writing i's index still
 * loads */
static int
plan_last(const struct ckpt_store *st, int i)
{
	return st->left[st->group[i]] - (st->loading[i] != 0) == 0;
}

/*
 * One read of every progress document and one write of those that change;
 * then, once per index (however many sections write it), its originals
 * read when none is recorded, and its suspension, or, when every section
 * writing it is done, the restore a load that ended without one still
 * owes. A shared index is suspended while any section writing it loads
 * and restored only when the last of them is done.
 */
int
ckpt_load_plan(struct ckpt_store *st, const struct config *cf,
    const struct msg_pos *cp, struct sbuf *j, int *ntables)
{
	const struct sync_section *sec;
	struct ldoc *d;
	struct sbuf *orig;
	struct jspan *use, none = { NULL, 0 };
	struct writes w = { 0 };
	int *gone, *loading, *first, i, k, g, n = cf->nsyncs, rc, any, owed;

	*ntables = 0;
	d = xcalloc((size_t)n + 1, sizeof(*d));
	orig = xcalloc((size_t)n + 1, sizeof(*orig));
	use = xcalloc((size_t)n + 1, sizeof(*use));
	gone = xcalloc((size_t)n + 1, sizeof(*gone));
	loading = xcalloc((size_t)n + 1, sizeof(*loading));
	first = xcalloc((size_t)n + 1, sizeof(*first));
	if ((rc = get_docs(st, cf, "reading the load progress", NULL, d)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		sbuf_init(&orig[i]);
		first[i] = group_first(cf, i);
		gone[i] = -1;
	}

	/*
	 * The progress describes what one index holds. An index deleted
	 * since (a rebuild by hand) or another index named now holds none
	 * of it: the table is loaded again from the start, and the
	 * originals are read from the index as it is now, not from the one
	 * that is gone. A template names many indices, created as rows
	 * arrive (a filter may leave none): only a changed template reloads
	 * it. Whether an index exists is asked once for all its sections.
	 */
	for (i = 0; i < n; i++) {
		sec = &cf->syncs[i];
		if (!d[i].found)
			continue;
		if (d[i].index.p != NULL && jstr_eq(d[i].index, sec->index) &&
		    !sec->index_templated) {
			g = first[i];
			if (gone[g] == -1) {
				if ((rc = index_exists(st, sec->index)) < 0)
					goto out;
				gone[g] = rc == 0;
			}
		}
		if (d[i].index.p == NULL || !jstr_eq(d[i].index, sec->index) ||
		    (!sec->index_templated && gone[first[i]] == 1)) {
			log_warnx("the load of '%s' was recorded for an index "
			    "that is gone or not '%s' any more: loading it "
			    "again from the start", sec->rel, sec->index);
			/* released: what a table with no progress
			 * document is */
			ldoc_release(&d[i]);
		}
	}
	rc = 0;
	for (i = 0; i < n; i++)
		loading[i] = !d[i].done;

	for (g = 0; g < n; g++) {
		if (first[g] != g || cf->syncs[g].index_templated)
			continue;
		/* the originals of the index: those a section recorded while
		 * the index may be suspended (a section restored since
		 * recorded ones that may be stale) */
		any = owed = 0;
		for (k = g; k < n; k++) {
			if (first[k] != g)
				continue;
			any |= loading[k];
			owed |= d[k].done && !d[k].restored &&
			    d[k].settings.p != NULL;
			if (orig[g].len == 0 && d[k].settings.p != NULL &&
			    !(d[k].done && d[k].restored))
				sbuf_add(&orig[g], d[k].settings.p,
				    d[k].settings.n);
		}
		if (any) {
			if (orig[g].len == 0 && (rc = read_originals(st, cf,
			    cf->syncs[g].index, &orig[g])) != 0)
				goto out;
		} else if (owed) {
			/* a load that ended before its settings were put
			 * back: put them back now, once for the index */
			if ((rc = restore(st, cf->syncs[g].index,
			    (struct jspan){ orig[g].buf, orig[g].len })) != 0)
				goto out;
		}
		for (k = g; k < n; k++) {
			if (first[k] != g)
				continue;
			use[k] = d[k].settings;
			if (any && loading[k] && use[k].p == NULL) {
				/* recorded before the first suspension: an
				 * interruption can never make -1 the
				 * original */
				use[k] = (struct jspan){ orig[g].buf,
				    orig[g].len };
				add_doc(st, &w, cf->syncs[k].rel,
				    cf->syncs[k].index, d[k].progress, use[k],
				    0, 0);
			} else if (!any && d[k].done && !d[k].restored &&
			    use[k].p != NULL)
				add_doc(st, &w, cf->syncs[k].rel,
				    cf->syncs[k].index, d[k].progress, use[k],
				    1, 1);
		}
	}
	if ((rc = put_docs(st, &w, "storing the load progress")) != 0)
		goto out;
	for (g = 0; g < n; g++) {
		if (first[g] != g || cf->syncs[g].index_templated)
			continue;
		for (any = 0, k = g; k < n && !any; k++)
			any = first[k] == g && loading[k];
		if (any && (rc = suspend(st, cf, cf->syncs[g].index)) != 0)
			goto out;
	}

	msg_load_begin(j, cp);
	for (i = 0; i < n; i++) {
		if (!loading[i])
			continue;
		msg_load_table(j, cf->syncs[i].rel,
		    d[i].found ? d[i].progress : none);
		(*ntables)++;
	}
	remember(st, cf, loading, use, first);
out:
	for (i = 0; i < n; i++) {
		ldoc_release(&d[i]);
		sbuf_release(&orig[i]);
	}
	writes_release(&w);
	free(d);
	free(orig);
	free(use);
	free(gone);
	free(loading);
	free(first);
	return rc;
}

/* the marker of a sweep still owed: <stream id>/sweep */
#define SWEEP_SUFFIX	"/sweep"

int
ckpt_sweep_pending(struct ckpt_store *st, int *pending)
{
	struct sbuf doc = SBUF_INIT;
	struct jspan src;
	int found, rc;

	*pending = 0;
	rc = ckpt_doc_get(st, SWEEP_SUFFIX, "reading the sweep marker", &doc,
	    &found);
	if (rc == 0 && found) {
		src.p = doc.buf;
		src.n = doc.len;
		*pending = bool_member(src, "pending");
	}
	sbuf_release(&doc);
	return rc;
}

int
ckpt_sweep_mark(struct ckpt_store *st, int pending)
{
	struct sbuf body = SBUF_INIT;
	char when[40];
	int rc;

	ckpt_iso_now(when, sizeof(when));
	sbuf_addc(&body, '{');
	ckpt_bindings(st, &body);
	sbuf_addf(&body, ",\"kind\":\"sweep\",\"pending\":%s,"
	    "\"updated_at\":\"%s\"}", pending ? "true" : "false", when);
	rc = ckpt_doc_put(st, SWEEP_SUFFIX, "storing the sweep marker", &body);
	sbuf_release(&body);
	return rc;
}

int
ckpt_load_forget(struct ckpt_store *st, const struct config *cf)
{
	struct ldoc *d;
	struct writes w = { 0 };
	struct jspan none = { NULL, 0 };
	int *pick, i, from, to, rc;

	/* the sweep is owed before any progress is forgotten: a crash in
	 * between leaves a sweep that finds nothing, never the reverse */
	if ((rc = ckpt_sweep_mark(st, 1)) != 0)
		return rc;

	/* DOCS_SLICE sections a read and a write: a crash between them
	 * leaves some progress unforgotten, as a _bulk that failed half
	 * way would, and the next start forgets it (the checkpoint still
	 * names the lost position, so the capture's 67 comes again) */
	d = xcalloc((size_t)cf->nsyncs + 1, sizeof(*d));
	pick = xcalloc((size_t)cf->nsyncs + 1, sizeof(*pick));
	for (from = 0; from < cf->nsyncs && rc == 0; from = to) {
		to = cf->nsyncs - from < DOCS_SLICE ? cf->nsyncs :
		    from + DOCS_SLICE;
		for (i = 0; i < cf->nsyncs; i++)
			pick[i] = i >= from && i < to;
		rc = get_docs(st, cf, "reading the load progress", pick, d);
		for (i = from; i < to && rc == 0; i++) {
			if (!d[i].found)
				continue;
			/* originals still suspended are kept (they are the
			 * real ones); ones put back are read again by the
			 * next plan */
			add_doc(st, &w, cf->syncs[i].rel, cf->syncs[i].index,
			    none, d[i].done && d[i].restored ? none :
			    d[i].settings, 0, 0);
		}
		if (rc == 0)
			rc = put_docs(st, &w, "storing the load progress");
		for (i = from; i < to; i++)
			ldoc_release(&d[i]);
		writes_release(&w);
	}
	free(pick);
	free(d);
	/* a plan made before describes progress that is gone */
	ckpt_load_release(st);
	return rc;
}

/*
 * The sections other than i writing i's index, DOCS_SLICE at a time from
 * *from on, into pick (zeroed first); 0 when none is left.
 */
static int
next_slice(const struct config *cf, int i, int *from, int *pick)
{
	int k, n = 0;

	memset(pick, 0, ((size_t)cf->nsyncs + 1) * sizeof(*pick));
	for (k = *from; k < cf->nsyncs && n < DOCS_SLICE; k++)
		if (k != i && same_index(cf, i, k)) {
			pick[k] = 1;
			n++;
		}
	*from = k;
	return n;
}

/*
 * Whether section i is the last of its index to finish loading: from the
 * plan when this process made one, else from what is stored (a section
 * with no document, or one not done, is still to load).
 */
static int
last_of_index(struct ckpt_store *st, const struct config *cf, int i,
    int *last)
{
	struct ldoc *d;
	int *pick, from = 0, k, rc = 0;

	*last = st->nplan == 0 || plan_last(st, i);
	if (!*last || !cf->syncs[i].shared || st->nplan != 0)
		return 0;
	d = xcalloc((size_t)cf->nsyncs + 1, sizeof(*d));
	pick = xcalloc((size_t)cf->nsyncs + 1, sizeof(*pick));
	while (rc == 0 && *last && next_slice(cf, i, &from, pick)) {
		rc = get_docs(st, cf, "reading the load progress", pick, d);
		for (k = 0; k < cf->nsyncs; k++) {
			if (rc == 0 && pick[k] && (!d[k].found || !d[k].done))
				*last = 0;
			ldoc_release(&d[k]);
		}
	}
	free(pick);
	free(d);
	return rc;
}

/*
 * The other sections of i's index that are done and not yet restored,
 * marked restored (i's index has just been) into w: a slice read, and
 * written once DOCS_SLICE wait; the last of them are left in w for the
 * caller's own write. A crash between writes leaves some unmarked, which
 * the next plan restores (idempotent) and marks, as it does those of a
 * load that ended before its restore.
 */
static int
mark_restored(struct ckpt_store *st, const struct config *cf, int i,
    struct writes *w)
{
	struct ldoc *d;
	int *pick, from = 0, k, rc = 0;

	if (!cf->syncs[i].shared)
		return 0;
	d = xcalloc((size_t)cf->nsyncs + 1, sizeof(*d));
	pick = xcalloc((size_t)cf->nsyncs + 1, sizeof(*pick));
	while (rc == 0 && next_slice(cf, i, &from, pick)) {
		rc = get_docs(st, cf, "reading the load progress", pick, d);
		for (k = 0; k < cf->nsyncs && rc == 0; k++)
			if (pick[k] && d[k].found && d[k].done &&
			    !d[k].restored)
				add_doc(st, w, cf->syncs[k].rel,
				    cf->syncs[k].index, d[k].progress,
				    d[k].settings, 1, 1);
		if (rc == 0 && w->n >= DOCS_SLICE) {
			rc = put_docs(st, w, "storing the load progress");
			writes_release(w);
		}
		for (k = 0; k < cf->nsyncs; k++)
			ldoc_release(&d[k]);
	}
	free(pick);
	free(d);
	return rc;
}

int
ckpt_load_mark(struct ckpt_store *st, const struct config *cf,
    const struct msg_mark *m)
{
	const struct sync_section *sec;
	struct ldoc own = { .found = 0 };
	struct writes w = { 0 };
	struct jspan settings = { NULL, 0 };
	struct sbuf suffix = SBUF_INIT;
	char what[400];
	int i, last = 0, rc;

	if (m->table == NULL ||
	    (sec = config_find_rel(cf, m->table)) == NULL) {
		return p2o_fail(&st->err, P2O_EXIT_DATA, "a load mark '%s' for "
		    "a table no sync section names ('%s')", m->id,
		    m->table ? m->table : "");
	}
	i = (int)(sec - cf->syncs);
	snprintf(what, sizeof(what), "reading the load progress of '%s'",
	    sec->rel);
	/* the originals: kept from the plan, else as stored */
	if (st->nplan == cf->nsyncs) {
		if (st->originals[i] != NULL)
			settings = (struct jspan){ st->originals[i],
			    strlen(st->originals[i]) };
	} else {
		doc_suffix(sec->rel, &suffix);
		if ((rc = ckpt_doc_get(st, suffix.buf, what, &own.doc,
		    &own.found)) != 0)
			goto out;
		if (own.found) {
			ldoc_parse(&own);
			settings = own.settings;
		}
	}
	if (m->done && settings.p != NULL &&
	    (rc = last_of_index(st, cf, i, &last)) != 0)
		goto out;
	/* the settings first: a crash between the two leaves a progress
	 * document that is not done, and the range is simply read again.
	 * A shared index is restored by the last section writing it to be
	 * done; the others done before it are then marked restored too,
	 * this one in the last write */
	if (last && (rc = restore(st, sec->index, settings)) != 0)
		goto out;
	if (last && (rc = mark_restored(st, cf, i, &w)) != 0)
		goto out;
	add_doc(st, &w, sec->rel, sec->index, m->progress, settings, m->done,
	    m->done && (last || settings.p == NULL));
	snprintf(what, sizeof(what), "storing the load progress of '%s'",
	    sec->rel);
	if ((rc = put_docs(st, &w, what)) != 0)
		goto out;
	if (m->done) {
		log_info("initial load of '%s' finished", sec->rel);
		if (st->nplan == cf->nsyncs)
			plan_done(st, i);
	}
out:
	ldoc_release(&own);
	sbuf_release(&suffix);
	writes_release(&w);
	return rc;
}

/* the section a mark is for, NULL when none names its table */
static const struct sync_section *
mark_section(const struct config *cf, const struct msg_mark *m)
{
	return m->table == NULL ? NULL : config_find_rel(cf, m->table);
}

int
ckpt_load_mark_alone(struct ckpt_store *st, const struct config *cf,
    const struct msg_mark *m)
{
	const struct sync_section *sec = mark_section(cf, m);
	int i;

	/* ckpt_load_mark says what is wrong with a mark of no section, and
	 * reads what a mark without a plan needs */
	if (sec == NULL || st->nplan != cf->nsyncs)
		return 1;
	i = (int)(sec - cf->syncs);
	/* the last of its index restores the index first */
	return m->done && st->originals[i] != NULL && plan_last(st, i);
}

void
ckpt_load_marks_add(struct ckpt_store *st, const struct config *cf,
    const struct msg_mark *m, struct ckpt_marks *b)
{
	const struct sync_section *sec = mark_section(cf, m);
	struct jspan settings = { NULL, 0 };
	int i = (int)(sec - cf->syncs);

	if (b->w == NULL)
		b->w = xcalloc(1, sizeof(*b->w));
	if (st->originals[i] != NULL)
		settings = (struct jspan){ st->originals[i],
		    strlen(st->originals[i]) };
	/* as ckpt_load_mark writes it for a section not its index's last */
	add_doc(st, b->w, sec->rel, sec->index, m->progress, settings, m->done,
	    m->done && settings.p == NULL);
	b->n++;
	if (m->done) {
		b->fin = xrealloc(b->fin, (size_t)(b->nfin + 1) *
		    sizeof(*b->fin));
		b->fin[b->nfin++] = i;
		/* a later mark of the batch sees this section done: the
		 * last of the index is stored alone, after this one */
		plan_done(st, i);
	}
}

int
ckpt_load_marks_store(struct ckpt_store *st, const struct config *cf,
    struct ckpt_marks *b)
{
	char what[64];
	int k, rc;

	if (b->n == 0)
		return 0;
	snprintf(what, sizeof(what), "storing the load progress of %d "
	    "tables", b->n);
	if ((rc = put_docs(st, b->w, what)) != 0)
		return rc;
	for (k = 0; k < b->nfin; k++)
		log_info("initial load of '%s' finished",
		    cf->syncs[b->fin[k]].rel);
	return 0;
}

void
ckpt_load_marks_release(struct ckpt_marks *b)
{
	if (b->w != NULL)
		writes_release(b->w);
	free(b->w);
	free(b->fin);
	memset(b, 0, sizeof(*b));
}
