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
 * start.
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

static int
get_doc(struct ckpt_store *st, const char *table, struct ldoc *d)
{
	struct sbuf suffix = SBUF_INIT;
	struct jspan src;
	char what[400];
	int rc;

	memset(d, 0, sizeof(*d));
	snprintf(what, sizeof(what), "reading the load progress of '%s'",
	    table);
	doc_suffix(table, &suffix);
	rc = ckpt_doc_get(st, suffix.buf, what, &d->doc, &d->found);
	sbuf_release(&suffix);
	if (rc != 0 || !d->found)
		return rc;
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
	return 0;
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

static int
put_doc(struct ckpt_store *st, const char *table, const char *index,
    struct jspan progress, struct jspan settings, int done, int restored)
{
	struct sbuf suffix = SBUF_INIT, body = SBUF_INIT;
	char what[400], when[40];
	int rc;

	snprintf(what, sizeof(what), "storing the load progress of '%s'",
	    table);
	ckpt_iso_now(when, sizeof(when));
	sbuf_addc(&body, '{');
	ckpt_bindings(st, &body);
	sbuf_adds(&body, ",\"kind\":\"load\",\"table\":");
	sbuf_add_jstr(&body, table, strlen(table));
	sbuf_adds(&body, ",\"index\":");
	sbuf_add_jstr(&body, index, strlen(index));
	if (progress.p != NULL) {
		sbuf_adds(&body, ",\"progress\":");
		sbuf_add(&body, progress.p, progress.n);
	}
	if (settings.p != NULL) {
		sbuf_adds(&body, ",\"settings\":");
		sbuf_add(&body, settings.p, settings.n);
	}
	sbuf_addf(&body, ",\"done\":%s,\"restored\":%s,\"updated_at\":\"%s\"}",
	    done ? "true" : "false", restored ? "true" : "false", when);
	doc_suffix(table, &suffix);
	rc = ckpt_doc_put(st, suffix.buf, what, &body);
	sbuf_release(&suffix);
	sbuf_release(&body);
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
	 * again, or the load would wait for it for ever */
	if (create_index(st, cf, index, what) == -1)
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

/*
 * The originals another section writing the same index recorded first:
 * the index may be suspended by that section's load already, and reading
 * its settings now would record -1 as an original. 1 and the settings in
 * out, 0 when none has, or -1.
 */
static int
shared_originals(struct ckpt_store *st, const struct config *cf,
    const struct sync_section *sec, struct sbuf *out)
{
	const struct sync_section *o;
	struct ldoc d;
	int i;

	for (i = 0; sec->shared && i < cf->nsyncs; i++) {
		o = &cf->syncs[i];
		if (o == sec || strcmp(o->index, sec->index) != 0)
			continue;
		if (get_doc(st, o->rel, &d) != 0) {
			ldoc_release(&d);
			return -1;
		}
		if (d.settings.p != NULL) {
			sbuf_reset(out);
			sbuf_add(out, d.settings.p, d.settings.n);
			ldoc_release(&d);
			return 1;
		}
		ldoc_release(&d);
	}
	return 0;
}

int
ckpt_load_plan(struct ckpt_store *st, const struct config *cf,
    const struct msg_pos *cp, struct sbuf *j, int *ntables)
{
	const struct sync_section *sec;
	struct sbuf orig = SBUF_INIT;
	struct ldoc d = { .found = 0 };
	struct jspan none = { NULL, 0 }, settings;
	int i, rc = 0;

	*ntables = 0;
	msg_load_begin(j, cp);
	for (i = 0; i < cf->nsyncs; i++) {
		sec = &cf->syncs[i];
		if ((rc = get_doc(st, sec->rel, &d)) != 0)
			goto out;
		/*
		 * The progress describes what one index holds. An index
		 * deleted since (a rebuild by hand) or another index named
		 * now holds none of it: the table is loaded again from the
		 * start, and the originals are read from the index as it is
		 * now, not from the one that is gone. A template names many
		 * indices, created as rows arrive (a filter may leave none):
		 * only a changed template reloads it.
		 */
		if (d.found && (d.index.p == NULL ||
		    !jstr_eq(d.index, sec->index) ||
		    (!sec->index_templated &&
		    (rc = index_exists(st, sec->index)) == 0))) {
			log_warnx("the load of '%s' was recorded for an index "
			    "that is gone or not '%s' any more: loading it "
			    "again from the start", sec->rel, sec->index);
			ldoc_release(&d);
			memset(&d, 0, sizeof(d));
		} else if (d.found && rc < 0)
			goto out;
		rc = 0;
		if (d.done) {
			/* a load that ended before its settings were put
			 * back: put them back now */
			if (!d.restored && d.settings.p != NULL &&
			    ((rc = restore(st, sec->index, d.settings)) != 0 ||
			    (rc = put_doc(st, sec->rel, sec->index, d.progress,
			    d.settings, 1, 1)) != 0))
				goto out;
			ldoc_release(&d);
			continue;
		}
		/* a templated index is many, each created at its first
		 * document: there is no one index to suspend */
		if (sec->index_templated) {
			msg_load_table(j, sec->rel, d.found ? d.progress : none);
			(*ntables)++;
			ldoc_release(&d);
			continue;
		}
		settings = d.settings;
		if (settings.p == NULL) {
			sbuf_reset(&orig);
			if ((rc = shared_originals(st, cf, sec, &orig)) < 0)
				goto out;
			if (rc == 0 && (rc = read_originals(st, cf, sec->index,
			    &orig)) != 0)
				goto out;
			rc = 0;
			settings.p = orig.buf;
			settings.n = orig.len;
			/* recorded before the first suspension: an
			 * interruption can never make -1 the original */
			if ((rc = put_doc(st, sec->rel, sec->index, d.progress,
			    settings, 0, 0)) != 0)
				goto out;
		}
		if ((rc = suspend(st, cf, sec->index)) != 0)
			goto out;
		msg_load_table(j, sec->rel, d.found ? d.progress : none);
		(*ntables)++;
		ldoc_release(&d);
	}
out:
	if (rc != 0)
		ldoc_release(&d);
	sbuf_release(&orig);
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
	struct ldoc d;
	struct jspan none = { NULL, 0 };
	int i, rc;

	/* the sweep is owed before any progress is forgotten: a crash in
	 * between leaves a sweep that finds nothing, never the reverse */
	if ((rc = ckpt_sweep_mark(st, 1)) != 0)
		return rc;

	for (i = 0; i < cf->nsyncs && rc == 0; i++) {
		if ((rc = get_doc(st, cf->syncs[i].rel, &d)) != 0 || !d.found) {
			ldoc_release(&d);
			continue;
		}
		/* originals still suspended are kept (they are the real
		 * ones); ones put back are read again by the next plan */
		rc = put_doc(st, cf->syncs[i].rel, cf->syncs[i].index, none,
		    d.done && d.restored ? none : d.settings, 0, 0);
		ldoc_release(&d);
	}
	return rc;
}

int
ckpt_load_mark(struct ckpt_store *st, const struct config *cf,
    const struct msg_mark *m)
{
	const struct sync_section *sec;
	struct ldoc d;
	int rc;

	if (m->table == NULL ||
	    (sec = config_find_rel(cf, m->table)) == NULL) {
		return p2o_fail(&st->err, P2O_EXIT_DATA, "a load mark '%s' for "
		    "a table no sync section names ('%s')", m->id,
		    m->table ? m->table : "");
	}
	if ((rc = get_doc(st, sec->rel, &d)) != 0)
		goto out;
	/* the settings first: a crash between the two leaves a progress
	 * document that is not done, and the range is simply read again */
	if (m->done && d.settings.p != NULL &&
	    (rc = restore(st, sec->index, d.settings)) != 0)
		goto out;
	rc = put_doc(st, sec->rel, sec->index, m->progress, d.settings,
	    m->done, m->done);
	if (rc == 0 && m->done)
		log_info("initial load of '%s' finished", sec->rel);
out:
	ldoc_release(&d);
	return rc;
}
