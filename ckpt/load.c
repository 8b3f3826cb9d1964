/*
 * load.c - what the initial load leaves in the target besides documents:
 * one progress document per table in .pg2osync_meta (<stream id>/load/
 * <table>), separate from the checkpoint, and the index settings a load
 * suspends. A checkpoint alone never says a load finished: a table with no
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
 * The progress object is the loader's: stored and handed back unread.
 * Never exits.
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
	struct sbuf resp;	/* owns the bytes the spans point into */
	int	 found;
	int	 done, restored;
	struct jspan progress;	/* p NULL when absent */
	struct jspan settings;	/* the originals; p NULL when not recorded */
	struct jspan index;	/* the index the progress was written to */
};

static void	index_path(const char *, const char *, struct sbuf *);

static void
ldoc_release(struct ldoc *d)
{
	sbuf_release(&d->resp);
	memset(d, 0, sizeof(*d));
}

static void
doc_path(const struct ckpt_store *st, const char *table, struct sbuf *path)
{
	struct sbuf suffix = SBUF_INIT;

	sbuf_addf(&suffix, "/load/%s", table);
	ckpt_doc_path(st, suffix.buf, path);
	sbuf_release(&suffix);
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
	struct sbuf path = SBUF_INIT;
	struct jspan obj, src;
	char what[400];
	long status;
	int rc;

	memset(d, 0, sizeof(*d));
	snprintf(what, sizeof(what), "reading the load progress of '%s'",
	    table);
	doc_path(st, table, &path);
	rc = ckpt_request(st, what, "GET", path.buf, NULL, 0, &d->resp,
	    &status);
	sbuf_release(&path);
	if (rc != 0)
		return rc;
	if (status == 404)
		return 0;
	if (status != 200)
		return ckpt_status_error(st, what, status, &d->resp);
	if (ckpt_body_object(&d->resp, &obj) == -1 ||
	    !jobj_get(obj, "_source", &src) || jspan_type(src) != J_OBJECT) {
		snprintf(st->err, sizeof(st->err), "%s: the response holds no "
		    "document", what);
		return P2O_EXIT_TEMPFAIL;
	}
	if ((rc = ckpt_check_bindings(st, src)) != 0)
		return rc;
	d->found = 1;
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

/* 1 the index exists, 0 it does not, else an exit code (negated) */
static int
index_exists(struct ckpt_store *st, const char *index)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	char what[400];
	long status;
	int rc;

	snprintf(what, sizeof(what), "checking index '%s'", index);
	index_path(index, "", &path);
	rc = ckpt_request(st, what, "HEAD", path.buf, NULL, 0, &resp,
	    &status);
	if (rc == 0)
		rc = status == 200 ? 1 : status == 404 ? 0 :
		    -ckpt_status_error(st, what, status, &resp);
	else
		rc = -rc;
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

static int
put_doc(struct ckpt_store *st, const char *table, const char *index,
    struct jspan progress, struct jspan settings, int done, int restored)
{
	struct sbuf path = SBUF_INIT, body = SBUF_INIT, resp = SBUF_INIT;
	char what[400], when[40];
	long status;
	int rc;

	snprintf(what, sizeof(what), "storing the load progress of '%s'",
	    table);
	if ((rc = ckpt_ensure_index(st, &resp)) != 0)
		goto out;
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
	doc_path(st, table, &path);
	if ((rc = ckpt_request(st, what, "PUT", path.buf, body.buf, body.len,
	    &resp, &status)) != 0)
		goto out;
	if (status != 200 && status != 201)
		rc = ckpt_status_error(st, what, status, &resp);
out:
	sbuf_release(&path);
	sbuf_release(&body);
	sbuf_release(&resp);
	return rc;
}

static void
index_path(const char *index, const char *rest, struct sbuf *path)
{
	const unsigned char *p;

	sbuf_addc(path, '/');
	for (p = (const unsigned char *)index; *p; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr("-_.+", *p))
			sbuf_addc(path, (char)*p);
		else
			sbuf_addf(path, "%%%02X", *p);
	sbuf_adds(path, rest);
}

/* the index, created as the writer creates it at its first use
 * (config_index_body: one place for both); one that exists is fine */
static int
create_index(struct ckpt_store *st, const struct config *cf,
    const char *index, const char *what)
{
	const char *body = config_index_body(cf, index);
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	char type[128];
	long status;
	int rc;

	index_path(index, "", &path);
	if ((rc = ckpt_request(st, what, "PUT", path.buf, body,
	    body ? strlen(body) : 0, &resp, &status)) != 0)
		goto out;
	ckpt_error_type(&resp, type, sizeof(type));
	if (status != 200 && !(status == 400 && strcmp(type,
	    "resource_already_exists_exception") == 0))
		rc = ckpt_status_error(st, what, status, &resp);
	else if (status == 200)
		log_info("created index '%s' for the initial load", index);
out:
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

/* the index's own refresh_interval and number_of_replicas, as a settings
 * object (null where the index has none of its own: restored, null
 * means the target's default again); the index is created when it does
 * not exist yet, with the body the writer would create it with */
static int
read_originals(struct ckpt_store *st, const struct config *cf,
    const char *index, struct sbuf *out)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	struct jspan obj, ix, settings, v;
	char what[400];
	long status;
	int rc, attempt;

	snprintf(what, sizeof(what), "reading the settings of index '%s'",
	    index);
	for (attempt = 0; attempt < 2; attempt++) {
		sbuf_reset(&path);
		index_path(index, "/_settings?flat_settings=true", &path);
		if ((rc = ckpt_request(st, what, "GET", path.buf, NULL, 0,
		    &resp, &status)) != 0)
			goto out;
		if (status != 404)
			break;
		if ((rc = create_index(st, cf, index, what)) != 0)
			goto out;
	}
	if (status != 200) {
		rc = ckpt_status_error(st, what, status, &resp);
		goto out;
	}
	/* {"<index>":{"settings":{"index.refresh_interval":"5s",...}}} */
	if (ckpt_body_object(&resp, &obj) == -1 || !jobj_get(obj, index, &ix) ||
	    !jobj_get(ix, "settings", &settings)) {
		snprintf(st->err, sizeof(st->err), "%s: unexpected response",
		    what);
		rc = P2O_EXIT_TEMPFAIL;
		goto out;
	}
	sbuf_adds(out, "{\"refresh_interval\":");
	if (jobj_get(settings, "index.refresh_interval", &v))
		sbuf_add(out, v.p, v.n);
	else
		sbuf_adds(out, "null");
	sbuf_adds(out, ",\"number_of_replicas\":");
	if (jobj_get(settings, "index.number_of_replicas", &v))
		sbuf_add(out, v.p, v.n);
	else
		sbuf_adds(out, "null");
	sbuf_addc(out, '}');
out:
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

/* PUT the index settings body; what names it for messages */
static int
put_settings(struct ckpt_store *st, const char *index, const char *body,
    size_t len, const char *what)
{
	struct sbuf path = SBUF_INIT, resp = SBUF_INIT;
	long status;
	int rc;

	index_path(index, "/_settings", &path);
	rc = ckpt_request(st, what, "PUT", path.buf, body, len, &resp,
	    &status);
	if (rc == 0 && status != 200)
		rc = ckpt_status_error(st, what, status, &resp);
	sbuf_release(&path);
	sbuf_release(&resp);
	return rc;
}

static int
suspend(struct ckpt_store *st, const struct config *cf, const char *index)
{
	static const char body[] = "{\"index\":{\"refresh_interval\":\"-1\","
	    "\"number_of_replicas\":0}}";
	char what[400];
	int rc;

	snprintf(what, sizeof(what), "suspending refresh and replicas on '%s'",
	    index);
	/* an index deleted since its originals were recorded is created
	 * again, or the load would wait for it for ever */
	if ((rc = create_index(st, cf, index, what)) != 0)
		return rc;
	return put_settings(st, index, body, sizeof(body) - 1, what);
}

static int
restore(struct ckpt_store *st, const char *index, struct jspan originals)
{
	struct sbuf body = SBUF_INIT;
	char what[400];
	int rc;

	snprintf(what, sizeof(what), "restoring refresh and replicas on '%s'",
	    index);
	sbuf_adds(&body, "{\"index\":");
	sbuf_add(&body, originals.p, originals.n);
	sbuf_addc(&body, '}');
	rc = put_settings(st, index, body.buf, body.len, what);
	sbuf_release(&body);
	if (rc == 0)
		log_info("restored the refresh interval and replicas of index "
		    "'%s' after its load", index);
	return rc;
}

/*
 * The originals another section writing the same index recorded first:
 * the index may be suspended by that section's load already, and reading
 * its settings now would record -1 as an original. 1 and the settings in
 * out, 0 when none has, or an exit code.
 */
static int
shared_originals(struct ckpt_store *st, const struct config *cf,
    const struct sync_section *sec, struct sbuf *out)
{
	const struct sync_section *o;
	struct ldoc d;
	int i, rc;

	for (i = 0; sec->shared && i < cf->nsyncs; i++) {
		o = &cf->syncs[i];
		if (o == sec || strcmp(o->index, sec->index) != 0)
			continue;
		if ((rc = get_doc(st, o->rel, &d)) != 0)
			return -rc;
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
		} else if (d.found && rc < 0) {
			rc = -rc;
			goto out;
		}
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
			if ((rc = shared_originals(st, cf, sec, &orig)) < 0) {
				rc = -rc;
				goto out;
			}
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

int
ckpt_load_mark(struct ckpt_store *st, const struct config *cf,
    const struct msg_mark *m)
{
	const struct sync_section *sec;
	struct ldoc d;
	int rc;

	if (m->table == NULL ||
	    (sec = config_find_rel(cf, m->table)) == NULL) {
		snprintf(st->err, sizeof(st->err), "a load mark '%s' for a "
		    "table no sync section names ('%s')", m->id,
		    m->table ? m->table : "");
		return P2O_EXIT_DATA;
	}
	if ((rc = get_doc(st, sec->rel, &d)) != 0)
		return rc;
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
