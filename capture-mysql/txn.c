/*
 * txn.c - binlog events in, event frames out (framing.md §4). Owns what
 * the events mean for the stream: where a transaction starts and ends,
 * the version of its rows, the position and text of its commit, the GTID
 * set accumulated since the checkpoint, the generation base, which table
 * maps belong to configured tables, and what the statements (TRUNCATE,
 * ALTER, RENAME, DROP) that touch them mean (ddl.c reads their SQL).
 *
 * Versions: every row of a transaction carries base + the coordinate of
 * the end of the transaction's first event (its GTID, or its BEGIN when
 * the server writes no GTID event). That is known before the first row
 * arrives, the same for every row of the group, and strictly increasing
 * from one group to the next because groups are written whole, one after
 * the other. A commit frame carries base + the end of the XID / COMMIT
 * event (of the TRANSACTION_PAYLOAD event that holds it, when compressed).
 *
 * Pure: no I/O, no clock; the catalogue is reached through the callback
 * the caller supplies, messages through warn. Never exits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog.h"
#include "msg.h"
#include "p2o.h"

#define GENERATION_STEP	(1ULL << 40)

static void
warn(struct txn *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
warn(struct txn *t, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	if (t->warn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->warn(msg);
}

void
txn_init(struct txn *t, struct my_table *tables, int ntables,
    struct my_catalog cat)
{
	memset(t, 0, sizeof(*t));
	t->tables = tables;
	t->ntables = ntables;
	t->cat = cat;
	t->bad_sig = xcalloc((size_t)ntables + 1, sizeof(*t->bad_sig));
	t->have_base = 1;
	gtid_set_init(&t->gtid);
	sbuf_init(&t->json);
	sbuf_init(&t->scratch);
	sbuf_init(&t->inflated);
	sbuf_init(&t->unzipped);
}

void
txn_release(struct txn *t)
{
	int i;

	for (i = 0; i < t->nmaps; i++)
		bl_table_map_release(&t->maps[i].tm);
	free(t->maps);
	free(t->bad_sig);
	gtid_set_release(&t->gtid);
	free(t->boundary_text);
	sbuf_release(&t->json);
	sbuf_release(&t->scratch);
	sbuf_release(&t->inflated);
	sbuf_release(&t->unzipped);
}

static void
set_file(struct txn *t, const char *name, size_t n, uint64_t index)
{
	if (n >= sizeof(t->file))
		n = sizeof(t->file) - 1;
	memcpy(t->file, name, n);
	t->file[n] = '\0';
	t->file_index = index;
}

void
txn_start(struct txn *t, const struct mypos *p, uint64_t token,
    const char *file, uint32_t emit_offset)
{
	long long idx;

	if (p != NULL) {
		idx = binlog_file_index(p->file, strlen(p->file));
		set_file(t, p->file, strlen(p->file), (uint64_t)idx);
		t->start_coord = mypos_coord((uint64_t)idx, p->offset);
		t->start_token = token;
		t->cur = t->start_coord;
		t->last_emitted = token;
		if (p->has_gtid) {
			gtid_set_copy(&t->gtid, &p->gtid);
			t->gstate = GS_KNOWN;
			/* the base waits for where the server resumes */
			t->gtid_resume = 1;
			t->have_base = 0;
		} else {
			t->gstate = GS_UNKNOWN;
			t->base = token - t->start_coord;
			t->have_base = 1;
		}
		t->emit_from = 0;
		return;
	}
	idx = binlog_file_index(file, strlen(file));
	set_file(t, file, strlen(file), (uint64_t)idx);
	t->cur = mypos_coord((uint64_t)idx, 4);
	t->emit_from = mypos_coord((uint64_t)idx, emit_offset);
	t->fresh = 1;
	t->base = 0;
	t->have_base = 1;
	/* the start itself is owed as a pos frame: the server keeps no
	 * position for us, and until one is stored a restart could only
	 * start at the server's position then, past what happened since */
	t->last_emitted = 0;
	/* read from the file's head: PREVIOUS_GTIDS / GTID_LIST there
	 * plus every group after it is the set */
	t->gstate = GS_KNOWN;
}

void
txn_pos_text(struct txn *t, uint64_t coord, struct sbuf *out)
{
	sbuf_addf(out, "%s:%u", t->file, (unsigned)(coord & 0xffffffffu));
	if (t->gstate == GS_KNOWN && !gtid_set_empty(&t->gtid)) {
		sbuf_adds(out, ";gtid=");
		gtid_set_format(&t->gtid, out);
	}
}

int
txn_pos_owed(const struct txn *t)
{
	return t->have_base && t->state == TS_NONE && t->last_boundary != 0 &&
	    t->base + t->last_boundary > t->last_emitted &&
	    t->last_boundary >= t->emit_from;
}

void
txn_put_pos(struct txn *t, struct sbuf *out)
{
	uint64_t pos = t->base + t->last_boundary;

	sbuf_reset(&t->scratch);
	txn_pos_text(t, t->last_boundary, &t->scratch);
	msg_put_pos(out, pos, t->scratch.buf);
	t->last_emitted = pos;
}

static void
poison(struct txn *t, const char *why)
{
	if (t->gstate == GS_POISONED)
		return;
	t->gstate = GS_POISONED;
	snprintf(t->gpoison, sizeof(t->gpoison), "%s", why);
	warn(t, "the GTID set is no longer complete (%s at %s:%u): "
	    "positions are written without it from here on, and a failover "
	    "resume from them is refused", why, t->file,
	    (unsigned)(t->cur & 0xffffffffu));
}

/* ---- groups ---- */

static void
group_begin(struct txn *t, uint64_t ev_begin, uint64_t ev_end,
    enum txn_state state, long long ts_us)
{
	char at[MYPOS_FILE_MAX + 16];

	if (!t->have_base) {
		/* resumed by GTID: where the server resumed says whether
		 * its coordinates continue the checkpoint's numbering */
		snprintf(at, sizeof(at), "%s:%u", t->file,
		    (unsigned)(ev_begin & 0xffffffffu));
		if (ev_begin < t->start_coord) {
			t->base = t->start_token + GENERATION_STEP;
			t->generation_at = t->base + ev_begin;
			warn(t, "versioning documents from a new generation at "
			    "%s (base %llu): the server resumed the GTID set "
			    "at a coordinate behind the checkpoint's", at,
			    (unsigned long long)t->base);
		} else
			t->base = t->start_token - t->start_coord;
		t->have_base = 1;
	}
	t->state = state;
	t->nrows = 0;
	/* a batch's span starts at its first event */
	memset(&t->trace, 0, sizeof(t->trace));
	trace_batch_add(&t->trace, (size_t)(ev_end - ev_begin));
	t->v = t->base + ev_end;
	t->emitting = ev_begin >= t->emit_from;
	t->ts_us = ts_us;
	t->have_gtid = 0;
	t->g_anon = t->g_tagged = t->g_mdb = 0;
}

static int
group_end(struct txn *t, uint64_t ev_end, struct sbuf *out)
{
	char tp[TRACE_PARENT_LEN];

	if (t->have_gtid) {
		if (t->g_mdb)
			gtid_set_add_mdb(&t->gtid, t->g_mdbg.domain,
			    t->g_server, t->g_mdbg.seq);
		else
			gtid_set_add(&t->gtid, t->g_uuid, t->g_gno);
	}
	if (t->g_tagged)
		poison(t, "a tagged GTID");
	else if (t->g_anon && t->gtid.flavor == GTID_MYSQL &&
	    !gtid_set_empty(&t->gtid))
		poison(t, "an anonymous transaction among GTID ones");
	/* the parents its rows named, re-read: ahead of the commit, so the
	 * commit is acknowledged only once they are durable */
	if (t->emitting && t->nest.commit != NULL &&
	    t->nest.commit(t->nest.ctx, t->v, out, &t->nrows, &t->err) == -1) {
		t->state = TS_NONE;
		return -1;
	}
	if (t->emitting && t->nrows > 0) {
		sbuf_reset(&t->scratch);
		txn_pos_text(t, ev_end, &t->scratch);
		msg_put_commit(out, t->base + ev_end, t->scratch.buf,
		    t->ts_us, t->nrows, 0, t->rx_us, trace_batch_commit(
		    &t->trace, t->nrows, t->base + ev_end, t->scratch.buf,
		    tp));
		t->n.commits++;
		t->last_commit = t->last_emitted = t->base + ev_end;
	}
	t->state = TS_NONE;
	return 0;
}

/* ---- tables ---- */

static int
find_table(const struct txn *t, const char *db, size_t dblen,
    const char *name, size_t nlen)
{
	int i;

	for (i = 0; i < t->ntables; i++)
		if (strlen(t->tables[i].db) == dblen &&
		    strlen(t->tables[i].name) == nlen &&
		    strncmp(t->tables[i].db, db, dblen) == 0 &&
		    strncmp(t->tables[i].name, name, nlen) == 0)
			return i;
	return -1;
}

static struct txn_map *
map_find(struct txn *t, uint64_t id)
{
	int i;

	for (i = 0; i < t->nmaps; i++)
		if (t->maps[i].table_id == id)
			return &t->maps[i];
	return NULL;
}

static void
map_drop(struct txn *t, uint64_t id)
{
	struct txn_map *m = map_find(t, id);

	if (m == NULL)
		return;
	bl_table_map_release(&m->tm);
	*m = t->maps[--t->nmaps];
}

static void
put_names(struct sbuf *j, enum msg_list which, char **names, int n)
{
	int i;

	msg_list_begin(j, which);
	for (i = 0; i < n; i++)
		msg_list_item(j, names[i], strlen(names[i]));
	msg_list_end(j);
}

/* old shape vs new: a drift frame when a column was added, removed or
 * retyped; 1 if one was written */
static int
drift(struct txn *t, const struct my_table *o, const struct my_table *n,
    struct sbuf *out)
{
	char **add = xcalloc(n->ncols + 1, sizeof(char *));
	char **rem = xcalloc(o->ncols + 1, sizeof(char *));
	char **ret = xcalloc(n->ncols + 1, sizeof(char *));
	int na = 0, nr = 0, nt = 0, i, k, found;

	for (i = 0; i < n->ncols; i++) {
		for (found = 0, k = 0; k < o->ncols && !found; k++) {
			if (strcmp(n->cols[i].name, o->cols[k].name) != 0)
				continue;
			found = 1;
			if (strcmp(n->cols[i].column_type,
			    o->cols[k].column_type) != 0 ||
			    n->cols[i].kind != o->cols[k].kind)
				ret[nt++] = n->cols[i].name;
		}
		if (!found)
			add[na++] = n->cols[i].name;
	}
	for (k = 0; k < o->ncols; k++) {
		for (found = 0, i = 0; i < n->ncols && !found; i++)
			found = strcmp(n->cols[i].name, o->cols[k].name) == 0;
		if (!found)
			rem[nr++] = o->cols[k].name;
	}
	if (na + nr + nt > 0) {
		msg_drift_begin(&t->json, n->rel, strlen(n->rel));
		put_names(&t->json, ML_ADDED, add, na);
		put_names(&t->json, ML_REMOVED, rem, nr);
		put_names(&t->json, ML_RETYPED, ret, nt);
		msg_end(out, &t->json);
		t->n.drift++;
		warn(t, "table '%s' changed shape: %d added, %d removed, %d "
		    "retyped", n->rel, na, nr, nt);
	}
	free(add);
	free(rem);
	free(ret);
	return na + nr + nt > 0;
}

/* re-read a configured table; 0 (maybe with a drift frame), 1 gone, -1 */
static int
reload(struct txn *t, int ti, struct sbuf *out)
{
	struct my_table nt, *tb = &t->tables[ti];
	int rc, i;

	if (t->cat.reload == NULL)
		return 1;
	memset(&nt, 0, sizeof(nt));
	rc = t->cat.reload(t->cat.ctx, tb->db, tb->name, &nt, &t->err);
	if (rc == -1) {
		if (t->err.code == 0)
			t->err.code = P2O_EXIT_TEMPFAIL;
		return -1;
	}
	if (rc == 1) {
		warn(t, "table '%s' is no longer in the catalogue", tb->rel);
		return 1;
	}
	drift(t, tb, &nt, out);
	my_table_release(tb);
	*tb = nt;
	for (i = 0; i < t->nmaps; i++)
		if (t->maps[i].table == ti)
			t->maps[i].checked = 0;
	return 0;
}

/* a table map's column layout as one number, to remember a bad one */
static uint64_t
signature(const struct bl_table_map *tm)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)tm->ncols;
	int i;

	for (i = 0; i < tm->ncols; i++) {
		h = (h ^ tm->cols[i].type) * 1099511628211ULL;
		h = (h ^ tm->cols[i].meta) * 1099511628211ULL;
	}
	return h | 1;
}

static int
shape_matches(const struct my_table *tb, const struct bl_table_map *tm)
{
	int i;

	if (tb->ncols != tm->ncols)
		return 0;
	for (i = 0; i < tm->ncols; i++) {
		if (tm->cols[i].name != NULL &&
		    strcmp(tm->cols[i].name, tb->cols[i].name) != 0)
			return 0;
		if (!myval_compatible(&tb->cols[i], &tm->cols[i]))
			return 0;
	}
	return 1;
}

/* compare a configured table's map with the catalogue, re-reading it
 * once when they differ; 0 (m->mismatch says the outcome) or -1 */
static int
check_map(struct txn *t, struct txn_map *m, struct sbuf *out)
{
	struct my_table *tb = &t->tables[m->table];
	uint64_t sig = signature(&m->tm);

	m->checked = 1;
	m->mismatch = 0;
	if (shape_matches(tb, &m->tm))
		return 0;
	if (t->bad_sig[m->table] != sig) {
		if (reload(t, m->table, out) == -1)
			return -1;
		m->checked = 1;
		tb = &t->tables[m->table];
		if (shape_matches(tb, &m->tm))
			return 0;
		t->bad_sig[m->table] = sig;
	}
	m->mismatch = 1;
	return 0;
}

/* ---- rows ---- */

/* an image's place in t->json, kept as an offset until the frame is
 * whole (the buffer moves as it grows); 0 none: a frame starts with its
 * own '{' */
struct img_at {
	size_t	 off, n;
};

static struct jspan
span_of(const struct sbuf *j, struct img_at at)
{
	struct jspan s = { NULL, 0 };

	if (at.off != 0) {
		s.p = j->buf + at.off;
		s.n = at.n;
	}
	return s;
}

static int
put_image(struct txn *t, enum msg_image which, const struct my_table *tb,
    const struct txn_map *m, const struct bl_cell *cells, struct img_at *at)
{
	struct p2o_err e;
	size_t start;
	int i, rc;

	msg_image_begin(&t->json, which);
	start = t->json.len - 1;	/* its '{' */
	for (i = 0; i < tb->ncols; i++) {
		if (!cells[i].present)
			continue;
		msg_column(&t->json, tb->cols[i].name,
		    strlen(tb->cols[i].name));
		if (cells[i].null) {
			sbuf_adds(&t->json, "null");
			continue;
		}
		rc = myval_binlog(&tb->cols[i], &m->tm.cols[i], cells[i].p,
		    cells[i].n, &t->json, &e);
		if (rc == -1)
			return p2o_fail(&t->err, P2O_EXIT_DATA, "table '%s': "
			    "%s at %s:%u", tb->rel, e.msg, t->file,
			    (unsigned)(t->cur & 0xffffffffu));
		if (rc == 1)
			warn(t, "table '%s' column '%s': a JSON document of "
			    "%zu bytes does not decode (%s); written as "
			    "__mysql_json_hex", tb->rel, tb->cols[i].name,
			    cells[i].n, e.msg);
	}
	msg_image_end(&t->json);
	at->off = start;
	at->n = t->json.len - start;
	return 0;
}

static int
rows_event(struct txn *t, const struct bl_header *h,
    const unsigned char *body, size_t len, struct sbuf *out)
{
	struct bl_rows r;
	struct txn_map *m;
	struct my_table *tb;
	struct bl_cell *before = NULL, *after = NULL;
	struct img_at newi, oldi;
	size_t off = 0;
	int rc, i, ret = -1;

	if (bl_rows_parse(&t->fmt, h->type, body, len, &r, &t->err) == -1) {
		t->err.code = P2O_EXIT_DATA;
		return -1;
	}
	if ((m = map_find(t, r.table_id)) == NULL)
		return 0;	/* not a configured table */
	/* before the start point only positions and GTIDs are tracked: the
	 * catalogue was read after those rows were written */
	if (!t->emitting)
		return 0;
	if (r.partial)
		return p2o_fail(&t->err, P2O_EXIT_REFUSED, "table '%s': a "
		    "PARTIAL_UPDATE_ROWS event (binlog_row_value_options="
		    "PARTIAL_JSON) logs JSON updates as diffs, which this "
		    "tool does not apply; set binlog_row_value_options='' on "
		    "the server and reload the table",
		    t->tables[m->table].rel);
	if (!m->checked && check_map(t, m, out) == -1)
		return -1;
	tb = &t->tables[m->table];
	if (m->mismatch) {
		t->n.skipped_rows++;
		t->n.drift++;
		warn(t, "table '%s': a %s event at %s:%u has %d columns the "
		    "catalogue's %d cannot match; skipped", tb->rel,
		    bl_type_name(h->type), t->file,
		    (unsigned)(t->cur & 0xffffffffu), m->tm.ncols, tb->ncols);
		msg_drift_begin(&t->json, tb->rel, strlen(tb->rel));
		msg_end(out, &t->json);
		return 0;
	}
	before = xcalloc(tb->ncols, sizeof(*before));
	after = xcalloc(tb->ncols, sizeof(*after));
	for (;;) {
		rc = bl_image_next(&r, &m->tm, r.present, &off, before,
		    &t->err);
		if (rc == 0)
			break;
		if (rc == 1 && r.op == 'u') {
			rc = bl_image_next(&r, &m->tm, r.present2, &off,
			    after, &t->err);
			if (rc == 0) {
				snprintf(t->err.msg, sizeof(t->err.msg), "an "
				    "update without its after image");
				rc = -1;
			}
		}
		if (rc == -1) {
			t->err.code = P2O_EXIT_DATA;
			goto done;
		}
		msg_row_begin(&t->json, r.op, tb->rel, strlen(tb->rel), t->v);
		msg_list_begin(&t->json, ML_KEY);
		for (i = 0; i < tb->nkeys; i++)
			msg_list_item(&t->json, tb->cols[tb->keys[i]].name,
			    strlen(tb->cols[tb->keys[i]].name));
		msg_list_end(&t->json);
		newi.off = oldi.off = newi.n = oldi.n = 0;
		if (r.op == 'i' && put_image(t, MI_NEW, tb, m, before,
		    &newi) == -1)
			goto done;
		if (r.op == 'u' && (put_image(t, MI_NEW, tb, m, after,
		    &newi) == -1 || put_image(t, MI_OLD, tb, m, before,
		    &oldi) == -1))
			goto done;
		if (r.op == 'd' && put_image(t, MI_OLD, tb, m, before,
		    &oldi) == -1)
			goto done;
		if (t->nest.row != NULL && (t->nest.row(t->nest.ctx,
		    m->table, r.op, span_of(&t->json, newi), span_of(&t->json,
		    oldi)) == 0 || m->table >= t->nest.nsections)) {
			/* its parents are re-read at the commit */
			sbuf_reset(&t->json);
			continue;
		}
		msg_end(out, &t->json);
		t->n.inserts += r.op == 'i';
		t->n.updates += r.op == 'u';
		t->n.deletes += r.op == 'd';
		t->nrows++;
	}
	ret = 0;
done:
	sbuf_reset(&t->json);
	free(before);
	free(after);
	return ret;
}

/* ---- statements ---- */

/* table i of a statement: a configured table's index, or -1 */
static int
named_table(const struct txn *t, const struct ddl *d, int i)
{
	const char *db, *name;
	size_t dblen, nlen;

	if (i >= d->n || !d->t[i].named)
		return -1;
	db = ddl_db(d, i, &dblen);
	name = ddl_name(d, i, &nlen);
	return find_table(t, db, dblen, name, nlen);
}

static int
truncate_table(struct txn *t, int ti, struct sbuf *out)
{
	const char *rel = t->tables[ti].rel;

	if (t->nest.truncate != NULL)
		t->nest.truncate(t->nest.ctx, ti);
	if (t->nest.row != NULL && ti >= t->nest.nsections)
		return 0;
	msg_truncate_begin(&t->json, t->v);
	msg_list_begin(&t->json, ML_RELS);
	msg_list_item(&t->json, rel, strlen(rel));
	msg_list_end(&t->json);
	msg_end(out, &t->json);
	t->n.truncates++;
	t->nrows++;
	return 0;
}

/* what a statement does to the configured tables */
static int
statement(struct txn *t, const struct ddl *d, struct sbuf *out)
{
	int i, ti, to;

	/* a statement before the start point changed nothing the catalogue
	 * read at startup does not already show */
	if (!t->emitting)
		return 0;
	switch (d->verb) {
	case DDL_TRUNCATE:
		if ((ti = named_table(t, d, 0)) >= 0)
			return truncate_table(t, ti, out);
		return 0;
	case DDL_DROP:
		for (i = 0; i < d->n; i++)
			if ((ti = named_table(t, d, i)) >= 0)
				warn(t, "table '%s' was dropped; its index "
				    "keeps its documents", t->tables[ti].rel);
		return 0;
	case DDL_ALTER:
	case DDL_CREATE:
		if ((ti = named_table(t, d, 0)) >= 0 &&
		    reload(t, ti, out) == -1)
			return -1;
		return 0;
	case DDL_RENAME:
		for (i = 0; i + 1 < d->n; i += 2) {
			ti = named_table(t, d, i);
			to = named_table(t, d, i + 1);
			if (ti >= 0 && reload(t, ti, out) == -1)
				return -1;
			if (to >= 0 && to != ti && reload(t, to, out) == -1)
				return -1;
		}
		return 0;
	default:
		return 0;
	}
}

static int
query_event(struct txn *t, const struct bl_header *h,
    const unsigned char *body, size_t len, uint64_t ev_begin,
    uint64_t ev_end, struct sbuf *out)
{
	struct bl_query q;
	struct ddl d;
	int rc = 0;

	if (bl_query_parse(&t->fmt, body, len, &q) == -1)
		return p2o_fail(&t->err, P2O_EXIT_DATA, "a QUERY event at "
		    "%s:%u is malformed", t->file,
		    (unsigned)(ev_begin & 0xffffffffu));
	ddl_init(&d);
	ddl_read(&d, q.sql, q.sqllen, q.db, q.dblen);
	if (d.verb == DDL_BEGIN) {
		if (t->state == TS_NONE)
			group_begin(t, ev_begin, ev_end, TS_BEGUN,
			    (long long)h->ts * 1000000);
		t->state = TS_BEGUN;
		goto out;
	}
	if (d.verb == DDL_COMMIT) {
		if (t->state != TS_NONE)
			rc = group_end(t, ev_end, out);
		goto out;
	}
	if (t->state == TS_NONE)
		group_begin(t, ev_begin, ev_end, TS_GROUP,
		    (long long)h->ts * 1000000);
	if ((rc = statement(t, &d, out)) == -1)
		goto out;
	/* a statement of its own (DDL) is its group; XA ends one too */
	if (t->state == TS_GROUP || d.verb == DDL_XA)
		rc = group_end(t, ev_end, out);
out:
	ddl_release(&d);
	return rc;
}

/* ---- events ---- */

static int event(struct txn *, const unsigned char *, size_t, int,
	    struct sbuf *);

static int
payload_event(struct txn *t, const unsigned char *body, size_t len,
    uint64_t ev_end, struct sbuf *out)
{
	struct bl_payload pl;
	struct bl_header ih;
	size_t off = 0;

	if (t->in_payload)
		return p2o_fail(&t->err, P2O_EXIT_DATA, "a TRANSACTION_PAYLOAD "
		    "inside another");
	if (bl_payload_parse(body, len, &pl, &t->err) == -1 || (sbuf_reset(&t->inflated),
	    bl_payload_inflate(&pl, &t->inflated, &t->err)) == -1) {
		t->err.code = P2O_EXIT_DATA;
		return -1;
	}
	t->in_payload = 1;
	t->inner_end = ev_end;
	while (off < t->inflated.len) {
		if (bl_header_parse((unsigned char *)t->inflated.buf + off,
		    t->inflated.len - off, &ih) == -1 ||
		    ih.size > t->inflated.len - off) {
			t->in_payload = 0;
			return p2o_fail(&t->err, P2O_EXIT_DATA, "a "
			    "TRANSACTION_PAYLOAD holds a truncated event");
		}
		if (event(t, (unsigned char *)t->inflated.buf + off, ih.size,
		    1, out) == -1) {
			t->in_payload = 0;
			return -1;
		}
		off += ih.size;
	}
	t->in_payload = 0;
	return 0;
}

static int
gtid_event(struct txn *t, const struct bl_header *h,
    const unsigned char *body, size_t len, uint64_t ev_begin,
    uint64_t ev_end)
{
	struct bl_gtid g;
	struct bl_mdb_gtid mg;
	long long ts = (long long)h->ts * 1000000;

	if (h->type == BL_MDB_GTID) {
		if (bl_mdb_gtid_parse(body, len, &mg) == -1)
			return p2o_fail(&t->err, P2O_EXIT_DATA, "a MariaDB "
			    "GTID event is malformed");
		if (t->state != TS_NONE)
			warn(t, "a group at %s:%u never ended; the next one "
			    "starts", t->file,
			    (unsigned)(ev_begin & 0xffffffffu));
		group_begin(t, ev_begin, ev_end,
		    (mg.flags2 & MDB_FL_STANDALONE) ? TS_GROUP : TS_BEGUN, ts);
		t->have_gtid = 1;
		t->g_mdb = 1;
		t->g_mdbg = mg;
		t->g_server = h->server_id;
		return 0;
	}
	memset(&g, 0, sizeof(g));
	if (h->type != BL_GTID_TAGGED &&
	    bl_gtid_parse(body, len, &g) == -1)
		return p2o_fail(&t->err, P2O_EXIT_DATA, "a %s event is "
		    "malformed", bl_type_name(h->type));
	if (t->state != TS_NONE)
		warn(t, "a group at %s:%u never ended; the next one starts",
		    t->file, (unsigned)(ev_begin & 0xffffffffu));
	if (g.immediate_commit_us > 0)
		ts = (long long)g.immediate_commit_us;
	group_begin(t, ev_begin, ev_end, TS_GROUP, ts);
	if (h->type == BL_GTID_TAGGED)
		t->g_tagged = 1;
	else if (h->type == BL_ANON_GTID)
		t->g_anon = 1;
	else {
		t->have_gtid = 1;
		memcpy(t->g_uuid, g.uuid, 16);
		t->g_gno = g.gno;
	}
	return 0;
}

static void
merge_set(struct txn *t, struct gtid_set *s)
{
	int i, k;

	if (t->gstate == GS_UNKNOWN) {
		gtid_set_copy(&t->gtid, s);
		t->gstate = GS_KNOWN;
		return;
	}
	for (i = 0; i < s->nsid; i++)
		for (k = 0; k < s->sid[i].niv; k++)
			gtid_set_add_range(&t->gtid, s->sid[i].uuid,
			    s->sid[i].iv[k].start, s->sid[i].iv[k].end);
	for (i = 0; i < s->ndom; i++)
		gtid_set_add_mdb(&t->gtid, s->dom[i].domain, s->dom[i].server,
		    s->dom[i].seq);
}

static int
rotate_event(struct txn *t, const struct bl_header *h,
    const unsigned char *body, size_t len, struct sbuf *out)
{
	struct bl_rotate r;
	long long idx;

	if (bl_rotate_parse(&t->fmt, body, len, &r) == -1 ||
	    (idx = binlog_file_index(r.name, r.namelen)) < 0 ||
	    r.pos > 0xffffffffu)
		return p2o_fail(&t->err, P2O_EXIT_DATA, "a ROTATE event is "
		    "malformed or names a file without a number");
	set_file(t, r.name, r.namelen, (uint64_t)idx);
	t->cur = mypos_coord((uint64_t)idx, (uint32_t)r.pos);
	/* the format of the next file comes with its own FDE; before it
	 * the server sends an artificial ROTATE naming the new file, and
	 * checksums that one as it did the file just finished */
	if (!(h->flags & BL_FLAG_ARTIFICIAL)) {
		t->crc_before_fde = t->fmt.have ? t->fmt.crc : t->crc_before_fde;
		t->fmt.have = 0;
		if (t->state == TS_NONE && t->have_base) {
			t->last_boundary = t->cur;
			if (txn_pos_owed(t))
				txn_put_pos(t, out);
		}
	}
	return 0;
}

static void
unknown(struct txn *t, const struct bl_header *h)
{
	if (t->unknown_seen[h->type / 8] & (1 << (h->type % 8)))
		return;
	t->unknown_seen[h->type / 8] |= (unsigned char)(1 << (h->type % 8));
	warn(t, "skipping binlog events of unknown type %u (first at %s:%u)",
	    h->type, t->file, (unsigned)(t->cur & 0xffffffffu));
}

static int
event(struct txn *t, const unsigned char *ev, size_t len, int inner,
    struct sbuf *out)
{
	struct bl_header h;
	const unsigned char *body;
	size_t blen;
	uint64_t ev_begin = t->cur, ev_end = t->cur;
	int crc, moves = 1;

	if (bl_header_parse(ev, len, &h) == -1 || h.size != len)
		return p2o_fail(&t->err, P2O_EXIT_DATA, "a binlog event of %zu "
		    "bytes is malformed", len);
	crc = inner ? 0 : t->fmt.have ? t->fmt.crc : t->crc_before_fde;
	if (bl_event_body(&t->fmt, crc, ev, &h, &body, &blen, &t->err) == -1) {
		/* a checksum that fails is the wire's fault, not the log's */
		t->err.code = P2O_EXIT_TEMPFAIL;
		return -1;
	}
	t->n.events++;
	if (inner)
		ev_end = t->inner_end, moves = 0;
	else if (h.type == BL_HEARTBEAT || h.type == BL_HEARTBEAT_V2 ||
	    (h.flags & BL_FLAG_ARTIFICIAL))
		moves = 0;
	else if (h.log_pos != 0) {
		/* a dump by GTID skips what the set holds: where an event
		 * starts is its own end less its size, not the last end */
		ev_end = mypos_coord(t->file_index, h.log_pos);
		if (h.log_pos >= h.size)
			ev_begin = ev_end - h.size;
	} else if (h.type == BL_FDE)
		moves = 0;	/* a resumed file's: it was not read here */
	else
		ev_end = t->cur + h.size;
	/* a resumed file's FORMAT_DESCRIPTION may state its own end, which
	 * is behind where the dump resumed */
	if (moves && ev_end < t->cur) {
		moves = 0;
		ev_begin = ev_end = t->cur;
	}
	/* MariaDB's log_bin_compress: from here on, the event it stands
	 * for (its place in the log stays the compressed event's) */
	if (h.type >= BL_QUERY_COMPRESSED && h.type <= BL_DELETE_C) {
		sbuf_reset(&t->unzipped);
		if (bl_uncompress(&t->fmt, h.type, body, blen, &h.type,
		    &t->unzipped, &t->err) == -1) {
			t->err.code = P2O_EXIT_DATA;
			return -1;
		}
		body = (const unsigned char *)t->unzipped.buf;
		blen = t->unzipped.len;
	}

	switch (h.type) {
	case BL_FDE:
		if (bl_format_parse(&t->fmt, body, blen, &t->err) == -1) {
			t->err.code = P2O_EXIT_DATA;
			return -1;
		}
		break;
	case BL_ROTATE:
		if (inner)
			return p2o_fail(&t->err, P2O_EXIT_DATA, "a ROTATE "
			    "inside a TRANSACTION_PAYLOAD");
		return rotate_event(t, &h, body, blen, out);
	case BL_QUERY:
		if (query_event(t, &h, body, blen, ev_begin, ev_end, out) == -1)
			return -1;
		break;
	case BL_XID:
		if (t->state != TS_NONE && group_end(t, ev_end, out) == -1)
			return -1;
		break;
	case BL_GTID: case BL_ANON_GTID: case BL_GTID_TAGGED:
	case BL_MDB_GTID:
		if (gtid_event(t, &h, body, blen, ev_begin, ev_end) == -1)
			return -1;
		break;
	case BL_TABLE_MAP: {
		struct bl_table_map tm;
		struct txn_map *m;
		int ti;

		memset(&tm, 0, sizeof(tm));
		if (bl_table_map_parse(&t->fmt, body, blen, &tm, &t->err) == -1) {
			bl_table_map_release(&tm);
			t->err.code = P2O_EXIT_DATA;
			return -1;
		}
		map_drop(t, tm.table_id);
		ti = find_table(t, tm.db, strlen(tm.db), tm.table,
		    strlen(tm.table));
		if (ti < 0) {
			bl_table_map_release(&tm);
			break;
		}
		if (t->nmaps >= TXN_MAX_TABLE_IDS) {
			bl_table_map_release(&t->maps[0].tm);
			t->maps[0] = t->maps[--t->nmaps];
		}
		if (t->nmaps == t->capmaps) {
			t->capmaps = t->capmaps ? t->capmaps * 2 : 8;
			t->maps = xrealloc(t->maps, t->capmaps *
			    sizeof(*t->maps));
		}
		m = &t->maps[t->nmaps++];
		memset(m, 0, sizeof(*m));
		m->table_id = tm.table_id;
		m->table = ti;
		m->tm = tm;
		break;
	}
	case BL_WRITE_V1: case BL_UPDATE_V1: case BL_DELETE_V1:
	case BL_WRITE_V2: case BL_UPDATE_V2: case BL_DELETE_V2:
	case BL_PARTIAL_UPDATE:
		if (t->state == TS_NONE)
			group_begin(t, ev_begin, ev_end, TS_BEGUN,
			    (long long)h.ts * 1000000);
		if (rows_event(t, &h, body, blen, out) == -1)
			return -1;
		break;
	case BL_PAYLOAD:
		if (payload_event(t, body, blen, ev_end, out) == -1)
			return -1;
		break;
	case BL_PREV_GTIDS: {
		struct gtid_set s;
		int rc;

		gtid_set_init(&s);
		rc = gtid_prev_parse(&s, body, blen);
		if (rc == -1) {
			gtid_set_release(&s);
			return p2o_fail(&t->err, P2O_EXIT_DATA, "a "
			    "PREVIOUS_GTIDS event is malformed");
		}
		if (rc == 1)
			poison(t, "tagged GTIDs in PREVIOUS_GTIDS");
		else
			merge_set(t, &s);
		gtid_set_release(&s);
		break;
	}
	case BL_MDB_GTID_LIST: {
		struct gtid_set s;

		gtid_set_init(&s);
		if (gtid_list_parse(&s, body, blen) == -1) {
			gtid_set_release(&s);
			return p2o_fail(&t->err, P2O_EXIT_DATA, "a GTID_LIST "
			    "event is malformed");
		}
		merge_set(t, &s);
		gtid_set_release(&s);
		break;
	}
	case BL_INCIDENT:
		warn(t, "the server logged an incident at %s:%u: changes may "
		    "be missing from its binlog", t->file,
		    (unsigned)(ev_begin & 0xffffffffu));
		break;
	case BL_STOP: case BL_INTVAR: case BL_RAND: case BL_USER_VAR:
	case BL_HEARTBEAT: case BL_HEARTBEAT_V2: case BL_IGNORABLE:
	case BL_ROWS_QUERY: case BL_XA_PREPARE: case BL_ANNOTATE_ROWS:
	case BL_CHECKPOINT: case BL_START_ENCRYPTION:
		break;
	default:
		unknown(t, &h);
		break;
	}
	if (moves && ev_end > t->cur)
		t->cur = ev_end;
	if (!inner && moves && t->state == TS_NONE && t->have_base)
		t->last_boundary = t->cur;
	return 0;
}

int
txn_event(struct txn *t, const unsigned char *ev, size_t len,
    struct sbuf *out)
{
	size_t start = out->len;

	p2o_err_clear(&t->err);
	if (t->state != TS_NONE)
		trace_batch_add(&t->trace, len);
	if (event(t, ev, len, 0, out) == -1) {
		out->len = start;
		if (out->cap)
			out->buf[start] = '\0';
		sbuf_reset(&t->json);
		if (t->err.code == 0)
			t->err.code = P2O_EXIT_DATA;
		return -1;
	}
	return 0;
}
